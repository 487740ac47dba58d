/**
 * Who may try a password now. Three counters of attempts, each within
 * LOGIN_FAILURE_WINDOW, counted before the slow comparison and given back on success (so a burst of
 * any size compares at most the limit, and only failures use a window up):
 *
 * - per email and client address (LOGIN_MAX_FAILURES): guessing one account from one place. A
 *   stranger's failures count against the stranger's address only, so they never lock the owner out.
 * - per client address (LOGIN_ADDRESS_MAX_FAILURES): spraying one password over many emails.
 * - per email, from every address (LOGIN_EMAIL_MAX_FAILURES, higher): guessing one account from
 *   many places. Past it, only addresses this account signed in from within KNOWN_ADDRESS_MS (its
 *   owner's) may still try; everyone else waits for the window to end.
 */
export interface LoginLimits {
  perEmailAndAddress: number;
  perAddress: number;
  perEmail: number;
}

/** How long an address this account signed in from counts as its owner's. */
export const KNOWN_ADDRESS_MS = 30 * 86_400_000;

export interface LoginAttempts {
  /** Attempts in the window, this one included. */
  emailAndAddress: number;
  address: number;
  email: number;
  /** Whether this account signed in from this address within KNOWN_ADDRESS_MS. */
  knownAddress: boolean;
}

export type LoginRefusal = "email-and-address" | "address" | "email";

/** Whether this attempt may be compared; the refusal names the counter that is used up. */
export function decideLoginAttempt(a: LoginAttempts, limits: LoginLimits): { ok: true } | { ok: false; refusal: LoginRefusal } {
  if (a.emailAndAddress > limits.perEmailAndAddress) return { ok: false, refusal: "email-and-address" };
  if (a.address > limits.perAddress) return { ok: false, refusal: "address" };
  if (a.email > limits.perEmail && !a.knownAddress) return { ok: false, refusal: "email" };
  return { ok: true };
}

export const LOGIN_REFUSAL_MESSAGE: Record<LoginRefusal, string> = {
  "email-and-address": "Too many failed logins for this email from your address; try again later",
  address: "Too many failed logins from your address; try again later",
  email: "Too many failed logins for this email; try again later, or from a place you signed in from before",
};
