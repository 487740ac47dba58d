/**
 * Who a sign-in signs in, once the service has compared what was given: a password login, a
 * second step, a refresh, an invite redeemed at registration. Every wrong case of a step answers
 * the same refusal, so the answer tells a guesser nothing more than "wrong".
 */
import { badRefreshToken, refreshUserGone, tooManyStepTries, wrongEmailOrPassword, wrongPasswordOrCode } from "./refusals";
import { inviteBeingRedeemed, removedFromOrg } from "../orgs/refusals";

/** A password login's account: an unknown address and a wrong password answer alike. */
export function requireRightPassword<U>(user: U | null, passwordRight: boolean): U {
  if (!user || !passwordRight) throw wrongEmailOrPassword();
  return user;
}

/** Only who knows the password learns it: an account taken out of its organization signs in no more. */
export function requireInOrg(user: { removedAt?: string }): void {
  if (user.removedAt !== undefined) throw removedFromOrg();
}

/** A second step's sealed token that opens (null: forged, or past its lifetime). */
export function requireOpenStep<S>(step: S | null): S {
  if (!step) throw tooManyStepTries();
  return step;
}

/** A second step's account: its answer right and still the account the first step named. */
export function requireRightAnswer<U extends { email: string }>(user: U | null, stepEmail: string): U {
  if (!user || user.email !== stepEmail) throw wrongPasswordOrCode();
  return user;
}

/** One sign-in per step, even when two right answers arrive at once: `uses` counts this step's successes. */
export function decideStepUse(uses: number): void {
  if (uses !== 1) throw tooManyStepTries();
}

/** A refresh token rotated: a reused one is a stolen token caught (the session is ended first). */
export function decideRefresh<T extends { ok: boolean; reason?: string }>(outcome: T): asserts outcome is T & { ok: true } {
  if (!outcome.ok) throw badRefreshToken(outcome.reason === "reused");
}

/** The refreshed session's account, which may have gone since the token was issued. */
export function requireRefreshUser<U>(user: U | null): U {
  if (!user) throw refreshUserGone();
  return user;
}

/** One redemption of an invite token at a time (the token's one-shot lock). */
export function decideInviteLock(locked: boolean): void {
  if (!locked) throw inviteBeingRedeemed();
}
