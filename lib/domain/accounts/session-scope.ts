/**
 * What a session may do, and how it changes. A login of an account without a second factor, in an
 * organization that requires one, may only enrol one (`decideEnrolOnly`): its session is stored so,
 * and every access token of it says so. The scope follows the session, not the moment:
 *
 * - a refresh keeps it (`decideRefreshScope`): an enrol-only session never becomes whole by a refresh,
 *   only by a login with the factor, or by the enrolment itself, which takes the master password;
 * - a change of the account's factors ends every other session (`planFactorChangeSessions`), which
 *   are told why at their next request;
 * - a policy that comes to require a factor narrows the whole sessions of the accounts without one
 *   (`planPolicyNarrowing`), at their next request, not when their access tokens expire.
 */
import type { UserId } from "../ids";
import { decideEnrolOnly } from "./second-factors";
import type { SessionEndReason } from "./sessions";

/**
 * The scope of a refreshed session's new access token: the session's own; a whole session narrows
 * when its organization requires a factor the account lacks now (a session an account recovery
 * opened stays whole: it must set the new password). Never wider than the session.
 */
export function decideRefreshScope(found: {
  sessionEnrolOnly: boolean;
  policyRequires: boolean;
  factorCount: number;
  recoverySession: boolean;
}): { enrolOnly: boolean } {
  if (found.sessionEnrolOnly) return { enrolOnly: true };
  return { enrolOnly: !found.recoverySession && decideEnrolOnly(found.policyRequires, found.factorCount) };
}

/** A change of an account's second factors. */
export type FactorChange = "enrol" | "remove" | "recovery-codes";

/** What a factor change does to the account's sessions. */
export interface FactorChangeSessions {
  /** The session that made the change, kept (none: every session ends). */
  keep: string | undefined;
  /** The kept session becomes whole (an enrolment, proven by the password, in a session that could only enrol). */
  widenKept: boolean;
  /** Why the others end, as their devices are told. */
  endedWhy: SessionEndReason;
}

/**
 * Every other session of the account ends: a device that signed in before the change (a thief's
 * among them) signs in again under the account's factors as they are now. The session that made
 * the change proved the password for it: it stays, and an enrolment makes it whole.
 */
export function planFactorChangeSessions(change: FactorChange, callerSession: string | undefined): FactorChangeSessions {
  return { keep: callerSession, widenKept: change === "enrol" && callerSession !== undefined, endedWhy: "factors-changed" };
}

/**
 * Under an organization's new policies, the accounts whose whole sessions narrow to enrolment: those
 * without a factor, when the policies require one; none otherwise (a policy turned off widens no
 * session: its devices sign in again).
 */
export function planPolicyNarrowing(requireSecondFactor: boolean, accounts: readonly { userId: UserId; factorCount: number }[]): UserId[] {
  return accounts.filter((a) => decideEnrolOnly(requireSecondFactor, a.factorCount)).map((a) => a.userId);
}
