/**
 * Leases on named jobs, so that one node at a time runs a job that every node schedules (the
 * sweeper). In-process by default; shared through Redis (`SET NX PX`, released only by its holder)
 * when REDIS_URL is set. With Redis configured but down, no lease is granted: the job waits for the
 * next round rather than run twice.
 */
import { randomUUID } from "node:crypto";
import type { RedisLink } from "./redis";
import { systemClock, type Clock } from "./clock";

export interface Lease {
  release(): Promise<void>;
}

export interface Locks {
  /** A lease on `name` for at most `ttlMs`, or null while another holder has it. */
  tryAcquire(name: string, ttlMs: number): Promise<Lease | null>;
}

export class MemoryLocks implements Locks {
  private readonly held = new Map<string, { token: string; until: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async tryAcquire(name: string, ttlMs: number): Promise<Lease | null> {
    const now = this.clock.nowMs();
    const current = this.held.get(name);
    if (current && current.until > now) return null;
    const token = randomUUID();
    this.held.set(name, { token, until: now + ttlMs });
    return {
      release: async () => {
        if (this.held.get(name)?.token === token) this.held.delete(name);
      },
    };
  }
}

const LOCK = "lock:";
// Deletes the lock only when it still holds this holder's token (not a later holder's).
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class RedisLocks implements Locks {
  constructor(private readonly redis: RedisLink) {}

  async tryAcquire(name: string, ttlMs: number): Promise<Lease | null> {
    const token = randomUUID();
    const ok = await this.redis.client.set(LOCK + name, token, "PX", ttlMs, "NX").catch(() => null);
    if (ok !== "OK") return null;
    return {
      release: async () => {
        await this.redis.client.eval(RELEASE, 1, LOCK + name, token).catch(() => undefined);
      },
    };
  }
}
