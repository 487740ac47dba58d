/**
 * Fixed-window counters for rate limits (failed logins per email, redeems per client address).
 * In-process here; a Redis implementation shares them between gateways.
 */
import { decideAddressAttempt, type AddressLimit } from "../domain/accounts/address-limits";
import { systemClock, type Clock } from "../clock";

export interface WindowCount {
  count: number;
  /** How long until the current window ends (ms, from the answer). */
  resetInMs: number;
}

export interface Counters {
  /**
   * Adds `by` (0 only reads; negative gives back) to `key`'s counter in a window of `windowMs` and
   * returns the result. Giving back never starts a window: a window that ended stays at 0.
   */
  add(key: string, by: number, windowMs: number): Promise<WindowCount>;
  /** Sets `key` to 1 in a window of `windowMs` from now, whatever it held: a marker each use renews. */
  mark(key: string, windowMs: number): Promise<void>;
  close(): Promise<void>;
}

const SWEEP_EVERY = 1024;

/** Windows on the runtime's clock (`lib/clock.ts`), so that a test can move them on. */
export class MemoryCounters implements Counters {
  private readonly windows = new Map<string, { count: number; resetAtMs: number }>();
  private writes = 0;

  constructor(private readonly clock: Clock = systemClock) {}

  async add(key: string, by: number, windowMs: number): Promise<WindowCount> {
    const now = this.clock.nowMs();
    let w = this.windows.get(key);
    if (!w || w.resetAtMs <= now) {
      if (by <= 0) return { count: 0, resetInMs: windowMs };
      w = { count: 0, resetAtMs: now + windowMs };
      this.windows.set(key, w);
    }
    w.count += by;
    if (by > 0 && ++this.writes % SWEEP_EVERY === 0) this.sweep(now);
    return { count: w.count, resetInMs: w.resetAtMs - now };
  }

  async mark(key: string, windowMs: number): Promise<void> {
    const now = this.clock.nowMs();
    this.windows.set(key, { count: 1, resetAtMs: now + windowMs });
    if (++this.writes % SWEEP_EVERY === 0) this.sweep(now);
  }

  /** Keeps memory bounded by dropping windows that have ended. */
  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.resetAtMs <= now) this.windows.delete(key);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}

/**
 * What a rate limit counts a client address under: an IPv4 address as itself, an IPv6 address by
 * its /64 (one subscriber's network: an attacker holding a /64 has 2^64 addresses), an IPv4
 * address mapped into IPv6 as the IPv4 address.
 */
export function netKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(":")) return ip;
  const [head = "", tail = ""] = ip.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = ip.includes("::") ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/**
 * Counts one request from `clientIp` (by its netKey) against `rule`; past it, calls `refused` and
 * throws `429 RATE_LIMITED` with `Retry-After`.
 */
export async function limitPerAddress(
  counters: Counters,
  clientIp: string | undefined,
  rule: AddressLimit,
  refused: () => void,
): Promise<void> {
  const w = await counters.add(`${rule.name}:${netKey(clientIp ?? "unknown")}`, 1, rule.windowMs);
  try {
    decideAddressAttempt(w.count, w.resetInMs, rule);
  } catch (err) {
    refused();
    throw err;
  }
}
