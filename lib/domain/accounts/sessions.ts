/**
 * Sessions: each login is one, named by its refresh-token family. A session's access tokens carry
 * its id (`sid`); the gateway asks `decideSessionLive` at least once per SESSION_CHECK_INTERVAL of
 * a session's use, so a session ended anywhere stops its access tokens within that bound (and at
 * once on the gateway that ended it, or any that hears the `session.ended` broadcast).
 */
import { badDeviceName, sessionEnded, sessionEndedByFactorChange, sessionNotFound, tokenWithoutSession } from "./refusals";
import type { UserId } from "../ids";
import { deviceNameProblem } from "../../../protocol/names";

/** What a login without a device name is called. */
export const UNNAMED_DEVICE = "unnamed device";
/** What a session that began before sessions were recorded is called, when its first refresh records it. */
export const EARLIER_DEVICE = "signed in before sessions were recorded";
/** A session's last use and address are written at most this often: one write a minute, not one a request. */
export const TOUCH_EVERY_MS = 60_000;
/**
 * The most live sessions one user keeps: a new login ends the least recently used beyond it. It
 * bounds what a list, an end of all others and its broadcast carry, however often someone who
 * knows the password logs in.
 */
export const MAX_LIVE_SESSIONS = 100;

/** The device name a login records: trimmed and composed (NFC), then the SDK's rule (`deviceNameProblem`, protocol/names.ts). */
export function decideDeviceName(raw: string | undefined): string {
  if (raw === undefined) return UNNAMED_DEVICE;
  const name = raw.normalize("NFC").trim();
  if (deviceNameProblem(name) !== undefined) throw badDeviceName();
  return name;
}

/**
 * Why a session was ended, where its devices are told (the `401` their next request gets): a change
 * of the account's second factors. Other ends (logout, a revocation, a password change) say only that it ended.
 */
export const SESSION_END_REASONS = ["factors-changed"] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

/** What the session check needs of a session. */
export interface SessionState {
  userId: UserId;
  expiresAt: string;
  endedAt?: string;
  endedWhy?: SessionEndReason;
  /** The session may only enrol a second factor (lib/domain/accounts/session-scope.ts). */
  enrolOnly?: true;
}

/** The refusal a token of an ended session gets: why it ended, where that is told. */
export function sessionEndedRefusal(why: SessionEndReason | undefined) {
  return why === "factors-changed" ? sessionEndedByFactorChange() : sessionEnded();
}

/**
 * Whether an access token's session still holds: it must name one (tokens from before sessions
 * do not: their holder refreshes), of the token's user, not ended and not expired. Answers what
 * the session grants now: a session narrowed to enrolment since the token was issued (its
 * organization came to require a factor) narrows the token too.
 */
export function decideSessionLive(
  sessionId: string | undefined,
  session: SessionState | null,
  userId: UserId,
  now: string,
): { enrolOnly: boolean } {
  if (sessionId === undefined) throw tokenWithoutSession();
  if (!liveSessionOf(session, userId, now)) throw sessionEndedRefusal(session?.userId === userId ? session.endedWhy : undefined);
  return { enrolOnly: session!.enrolOnly === true };
}

/** The session a caller ends must be one of their own that is still live (else 404, alike for all). */
export function decideSessionEnd(session: SessionState | null, callerId: UserId, now: string): void {
  if (!liveSessionOf(session, callerId, now)) throw sessionNotFound();
}

/** Whether `session` is the user's, not ended and not expired at `now`. */
function liveSessionOf(session: SessionState | null, userId: UserId, now: string): boolean {
  return session !== null && session.userId === userId && session.endedAt === undefined && session.expiresAt > now;
}

/**
 * The session a refresh-token family from before sessions were recorded gets, if the migration
 * that records them missed it: its start is its newest token's (the only one a store still reads
 * at that point), its device unknown.
 */
export function earlierSession(family: { sessionId: string; userId: UserId; createdAt: string }) {
  return { ...family, deviceName: EARLIER_DEVICE };
}

/** Of the user's live sessions, the most recently used first, those a new login ends: every one past the cap. */
export function sessionsOverCap(liveByRecentUse: readonly string[], maxLive = MAX_LIVE_SESSIONS): string[] {
  return liveByRecentUse.slice(maxLive);
}

/** Whether a use at `nowMs` is worth writing down, given the last one written. */
export function shouldTouch(lastUsedMs: number, nowMs: number): boolean {
  return nowMs - lastUsedMs >= TOUCH_EVERY_MS;
}
