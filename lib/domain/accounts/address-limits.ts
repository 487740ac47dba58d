/**
 * Requests per client address: prelogin and registration without an invite (the
 * service auth), invite redemption (invites) and the opens of sends (sends), each with its window, its limit (a setting) and
 * the message a refused client reads. Login failures have their own rule (login-limits.ts).
 */
import { rateLimited } from "./refusals";

export type AddressLimitName = "prelogin" | "register" | "redeem" | "send-open";

/** A limit of requests per client address: past `limit` in `windowMs`, `429` with `message`. */
export interface AddressLimit {
  name: AddressLimitName;
  limit: number;
  windowMs: number;
  message: string;
}

/** Each counter's window and message; the limits are settings (PRELOGIN_RATE_LIMIT, REGISTER_RATE_LIMIT, REDEEM_RATE_LIMIT, SEND_OPEN_RATE_LIMIT). */
const RULES: Record<AddressLimitName, { windowMs: number; message: string }> = {
  prelogin: { windowMs: 60_000, message: "Too many prelogins from your address; try again later" },
  register: { windowMs: 3_600_000, message: "Too many registrations from your address; try again later" },
  redeem: { windowMs: 60_000, message: "Too many redeem requests; try again later" },
  "send-open": { windowMs: 60_000, message: "Too many opens of sends from your address; try again later" },
};

/** The rule of counter `name` with its configured limit. */
export function addressLimit(name: AddressLimitName, limit: number): AddressLimit {
  return { name, limit, ...RULES[name] };
}

/** Seconds a refused client should wait (`Retry-After`): until its window ends, at least 1. */
export const retryAfterSec = (resetInMs: number): number => Math.max(1, Math.ceil(resetInMs / 1000));

/** A request that makes the address's `count` in the window: past the limit, `429 RATE_LIMITED` with the seconds to wait. */
export function decideAddressAttempt(count: number, resetInMs: number, rule: AddressLimit): void {
  if (count > rule.limit) throw rateLimited(rule.message, retryAfterSec(resetInMs));
}
