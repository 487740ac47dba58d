/// <reference lib="webworker" />
/**
 * The master key's derivation (Argon2id in WebAssembly, or PBKDF2), off the page's thread: the
 * page keeps drawing and answering while it runs. The same SDK function as everywhere else.
 */
import { deriveMasterKey, type KdfParams } from "../../protocol/crypto/primitives";

declare const self: DedicatedWorkerGlobalScope;

self.onmessage = async (e: MessageEvent<{ password: string; kdf: KdfParams }>) => {
  try {
    const key = await deriveMasterKey(e.data.password, e.data.kdf);
    self.postMessage({ key }, [key.buffer]);
  } catch (err) {
    self.postMessage({ error: (err as Error)?.message ?? String(err) });
  }
};
