/**
 * Sessions: the logins of users, each with its refresh tokens (stored hashed). Refresh tokens
 * rotate on use; a reused one revokes its whole family. A password change, a key rotation and a
 * removal from the organization end sessions too, in their own transactions (./accounts.ts).
 */
import type { UserId } from "../../domain/ids";
import type { SessionEndReason } from "../../domain/accounts/sessions";
import type { RememberedDevice } from "../../domain/accounts/remembered-devices";
import type { WithEvents } from "./outbox";

export interface RefreshTokenRecord {
  tokenHash: string;
  familyId: string;
  userId: UserId;
  expiresAt: string;
  createdAt: string;
}

/** A login: its refresh tokens form one family, whose id is the session's. */
export interface SessionRecord {
  sessionId: string;
  userId: UserId;
  /** What the client called itself at login (lib/domain/accounts/sessions.ts `decideDeviceName`). */
  deviceName: string;
  createdAt: string;
  /** The last login, refresh or request seen (written at most once a minute). */
  lastUsedAt: string;
  /** The client's address at that last use. */
  address: string;
  /** When its newest refresh token expires: the session cannot outlive it. */
  expiresAt: string;
  /** When it was ended (logout, revocation); absent while it lasts. */
  endedAt?: string;
  /** Why it was ended, where its devices are told (a change of the account's factors); absent for other ends. */
  endedWhy?: SessionEndReason;
  /** It may only enrol a second factor (lib/domain/accounts/session-scope.ts); absent for a whole session. */
  enrolOnly?: true;
}

/** A session as a login starts it: its scope is decided under the account's lock. */
export type NewSession = Omit<SessionRecord, "endedAt" | "endedWhy" | "enrolOnly">;

export type RefreshOutcome =
  /** Rotated; `enrolOnly`: the session may only enrol (a refresh keeps its scope). */
  | { ok: true; userId: UserId; sessionId: string; enrolOnly: boolean }
  | { ok: false; reason: "unknown" | "expired" }
  /** A used token presented again: its session was ended (named, so that its access tokens stop too). */
  | { ok: false; reason: "reused"; sessionId: string };

export interface SessionStore {
  /**
   * A login: the session and its first refresh token (the token's family is the session's id),
   * if the account is still at `accountVersion`, the version whose password the login compared
   * (else `401`: a password change came in between, and ended every session it saw). The user's
   * least recently used live sessions beyond `maxLive` end; answers their ids. Under the same
   * lock, whether the session may only enrol a second factor (`decideEnrolOnly` over the
   * organization's policy and the account's factors as they are then; never with `fullAccess`, a
   * session an account recovery opens): a policy change or an enrolment at the same moment comes
   * wholly before or wholly after it.
   */
  startSession(args: {
    session: NewSession;
    token: Omit<RefreshTokenRecord, "familyId">;
    accountVersion: number;
    maxLive: number;
    fullAccess?: boolean;
  }): Promise<{ ended: string[]; enrolOnly: boolean }>;
  /**
   * The next token joins the old one's user and family, and the session records the use (`now`,
   * `address`) and the new expiry. A session that has ended takes no new token ("unknown"), even
   * when its end races the rotation: of the two, whichever comes second sees the other. A family
   * from before sessions were recorded gets its session now (`EARLIER_DEVICE`).
   */
  rotateRefreshToken(args: {
    oldHash: string;
    next: Pick<RefreshTokenRecord, "tokenHash" | "expiresAt" | "createdAt">;
    now: string;
    address: string;
  }): Promise<RefreshOutcome>;
  findSession(sessionId: string): Promise<SessionRecord | null>;
  /** The user's sessions that have not ended or expired at `now`, the most recently used first. */
  listSessions(args: { userId: UserId; now: string }): Promise<SessionRecord[]>;
  /**
   * Ends the user's live sessions (all, or `only` the one named, or all `except` one) and revokes
   * their refresh tokens, in one step; answers the ids of the sessions it ended.
   */
  endSessions(args: { userId: UserId; now: string; only?: string; except?: string }): Promise<string[]>;
  /** Ends the session a refresh token belongs to, if it is the user's (logout), in one transaction; answers its id, or null. */
  endSessionOfToken(args: { tokenHash: string; userId: UserId; now: string }): Promise<string | null>;
  /** Records a use of a live session (its last use and address). */
  touchSession(args: { sessionId: string; at: string; address: string }): Promise<void>;

  /**
   * Remembers a device for the user's second step (its token stored as `tokenHash` only), with its
   * events; the user's expired devices are forgotten, and the least recently used beyond `max`.
   */
  rememberDevice(args: { device: RememberedDevice; tokenHash: string; max: number } & WithEvents): Promise<void>;
  /** The remembered device of a token (by its hash), expired or not; null when none. */
  findRememberedDevice(tokenHash: string): Promise<RememberedDevice | null>;
  /** A remembered device by its id; null when none. */
  getRememberedDevice(deviceId: string): Promise<RememberedDevice | null>;
  /** Records a login the device's token let skip the second step. */
  useRememberedDevice(args: { deviceId: string; at: string }): Promise<void>;
  /** The user's remembered devices not expired at `now`, the most recently used first. */
  listRememberedDevices(args: { userId: UserId; now: string }): Promise<RememberedDevice[]>;
  /** Forgets one of the user's remembered devices, with its events: false (and no events) when it is not theirs, or gone. */
  forgetRememberedDevice(args: { userId: UserId; deviceId: string } & WithEvents): Promise<boolean>;
}
