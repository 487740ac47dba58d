/**
 * Runs the SDK's master-key derivation in a Web Worker (web/src/kdf.worker.ts), so the page keeps
 * drawing and answering during the second it takes. The worker stays for a minute after its last
 * use (a lock and unlock do not pay its start again), then goes with the memory the KDF took.
 */
import type { DeriveMasterKey } from "../../sdk";

const IDLE_MS = 60_000;
let worker: Worker | undefined;
let idle: ReturnType<typeof setTimeout> | undefined;
let queue: Promise<unknown> = Promise.resolve();

function retire(): void {
  worker?.terminate();
  worker = undefined;
}

function derive(password: string, kdf: Parameters<DeriveMasterKey>[1]): Promise<Uint8Array<ArrayBuffer>> {
  clearTimeout(idle);
  worker ??= new Worker(new URL("./kdf.worker.ts", import.meta.url), { type: "module", name: "kdf" });
  const current = worker;
  return new Promise<Uint8Array<ArrayBuffer>>((resolve, reject) => {
    current.onmessage = (e: MessageEvent<{ key?: Uint8Array<ArrayBuffer>; error?: string }>) => {
      if (e.data.key) resolve(e.data.key);
      else reject(new Error(e.data.error ?? "the key derivation failed"));
    };
    current.onerror = (e) => {
      retire();
      reject(new Error(e.message || "the key derivation worker could not start"));
    };
    current.postMessage({ password, kdf });
  }).finally(() => {
    idle = setTimeout(retire, IDLE_MS);
  });
}

/** One derivation at a time through the one worker. */
export const deriveInWorker: DeriveMasterKey = (password, kdf) => {
  const next = queue.then(() => derive(password, kdf));
  queue = next.catch(() => undefined);
  return next;
};
