/** Clients writing items, or reading, in a loop while something happens to the service: every request's outcome and timing. */
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
  /** Which of the APIs it went through (an index into the list given). */
  via?: number;
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
    const via = i % apis.length;
    const res = await apis[via]!.post(`/vaults/${vaultId}/items`, {
      token: owner.token,
      body: encryptItem(vaultKey, vaultId, itemId, writtenSecret(itemId), "n"),
    }).catch(() => ({ status: 0 }));
    writes.push({ itemId, started, ended: Date.now(), status: res.status, via });
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

/** An answer of a poll: when it was asked, when answered, through which API, and what it said. */
export interface Polled {
  started: number;
  ended: number;
  via: number;
  /** The HTTP status; 0 when the connection failed. */
  status: number;
  body: unknown;
  retryAfter: string | null;
}

/**
 * GETs of `path` through each of `apis`, one sent every `everyMs` whether or not the ones before
 * were answered: a request that hangs does not hold back the next, so the first success after a
 * fault is the moment the route serves again.
 */
export function pollers(apis: Api[], path: string, opts: { token?: string; everyMs?: number } = {}) {
  const { token, everyMs = 25 } = opts;
  const polls: Polled[] = [];
  const pending = new Set<Promise<void>>();
  const poll = async (via: number) => {
    const started = Date.now();
    const res = await apis[via]!.get(path, { token }).catch(() => ({ status: 0, body: undefined, headers: new Headers() }));
    polls.push({ started, ended: Date.now(), via, status: res.status, body: res.body, retryAfter: res.headers.get("retry-after") });
  };
  const timer = setInterval(() => {
    for (const via of apis.keys()) {
      const p = poll(via).finally(() => pending.delete(p));
      pending.add(p);
    }
  }, everyMs);
  return {
    polls,
    async stop(): Promise<void> {
      clearInterval(timer);
      await Promise.all(pending);
    },
  };
}
