/** Clients writing items in a loop while something happens to the service: every write's outcome and timing. */
import { randomUUID } from "node:crypto";
import type { Api, TestUser } from "./client";
import { encryptItem } from "./crypto";
import { sleep } from "./wait";

export interface Write {
  itemId: string;
  started: number;
  ended: number;
  /** The HTTP status; 0 when the connection failed. */
  status: number;
}

export interface WriterOptions {
  /** Loops writing at once (default 4); loop i writes through apis[i % apis.length]. */
  parallel?: number;
  /** Pause between a loop's writes, in ms (default none). */
  pauseMs?: number;
}

/** The plaintext of an item a writer created: what a restored or recovered item must decrypt to. */
export const writtenSecret = (itemId: string): string => `secret ${itemId}`;

/** Item creates into `vaultId` until stopped. */
export function itemWriters(apis: Api[], owner: TestUser, vaultId: string, vaultKey: Buffer, opts: WriterOptions = {}) {
  const { parallel = 4, pauseMs = 0 } = opts;
  const writes: Write[] = [];
  let running = true;
  const write = async (i: number) => {
    const itemId = randomUUID();
    const started = Date.now();
    const res = await apis[i % apis.length]!.post(`/vaults/${vaultId}/items`, {
      token: owner.token,
      body: encryptItem(vaultKey, vaultId, itemId, writtenSecret(itemId), "n"),
    }).catch(() => ({ status: 0 }));
    writes.push({ itemId, started, ended: Date.now(), status: res.status });
  };
  const loops = Array.from({ length: parallel }, async (_, i) => {
    while (running) {
      await write(i);
      if (pauseMs > 0) await sleep(pauseMs);
    }
  });
  return {
    writes,
    /** `n` more creates at once, outside the loops: sent together, so they are in flight together. */
    burst(n: number): Promise<void[]> {
      return Promise.all(Array.from({ length: n }, (_, i) => write(i)));
    },
    async stop(): Promise<void> {
      running = false;
      await Promise.all(loops);
    },
  };
}
