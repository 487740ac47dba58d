/**
 * Rate-limit counters in Redis, shared by every gateway and auth node.
 *
 * Redis down: each process falls back to its own in-process counters. The limits still hold per
 * process (at most N times the limit across N processes) and no request fails because of Redis.
 */
import type { RedisLink } from "../redis";
import { systemClock, type Clock } from "../clock";
import { MemoryCounters, type Counters, type WindowCount } from "./counters";

// Atomic: add, then start the window on the first hit; giving back (a negative add) never starts
// one. Returns the count and the ms left.
const ADD = `
if tonumber(ARGV[1]) <= 0 and redis.call('EXISTS', KEYS[1]) == 0 then
  return {0, tonumber(ARGV[2])}
end
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {n, ttl}`;

export class RedisCounters implements Counters {
  private readonly fallback: MemoryCounters;

  constructor(
    private readonly redis: RedisLink,
    clock: Clock = systemClock,
  ) {
    this.fallback = new MemoryCounters(clock);
  }

  async add(key: string, by: number, windowMs: number): Promise<WindowCount> {
    try {
      const [count, ttl] = (await this.redis.client.eval(ADD, 1, `rate:${key}`, by, windowMs)) as [number, number];
      return { count: Number(count), resetInMs: Number(ttl) };
    } catch {
      return this.fallback.add(key, by, windowMs);
    }
  }

  async mark(key: string, windowMs: number): Promise<void> {
    try {
      await this.redis.client.set(`rate:${key}`, "1", "PX", windowMs);
    } catch {
      await this.fallback.mark(key, windowMs);
    }
  }

  async close(): Promise<void> {
    await this.fallback.close();
  }
}
