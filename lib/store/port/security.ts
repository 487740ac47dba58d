/**
 * An account's security: its second factors and recovery codes, its organization's
 * policies, and k-of-n account recovery (enrolments with their shares, requests and approvals).
 */
import type { OrgId, UserId } from "../../domain/ids";
import type { SecondFactor } from "../../domain/accounts/second-factors";
import type { FactorChangeSessions } from "../../domain/accounts/session-scope";
import type { OrgPolicies } from "../../domain/orgs/policies";
import type { RecoveryApproval, RecoveryEnrolment, RecoveryRequest, RecoveryShare } from "../../domain/accounts/recovery";
import type { NewRecoveryRequest, RecoveryAsk, RecoveryTarget } from "../../domain/accounts/recovery-requests";
import type { WithEvents } from "./outbox";
import type { PasskeyLogin } from "../../domain/accounts/passkey-logins";

/** What a factor change did beyond the factor: the sessions it ended. */
export interface FactorChangeOutcome {
  endedSessions: string[];
}

export interface SecurityStore {
  // ---- Second factors ----
  listFactors(userId: UserId): Promise<SecondFactor[]>;
  /**
   * Adds a factor under the account's lock, after `decideFactorEnrolment` against the ones it has
   * (so two enrolments at once cannot pass a limit together, nor enrol one key twice), and in the
   * same transaction applies `sessions` (`planFactorChangeSessions`): the account's other sessions
   * end, saying why, and the kept one becomes whole. Answers the sessions it ended.
   */
  addFactor(args: { factor: SecondFactor; sessions: FactorChangeSessions } & WithEvents): Promise<FactorChangeOutcome>;
  /**
   * Removes the user's factor, refusing (`decideFactorRemoval`) to remove the last one while the
   * organization's policy (read under the account's lock) requires one; 404 when it is not theirs.
   * Removing the last one drops the recovery codes. Applies `sessions` as `addFactor` does.
   */
  removeFactor(
    args: { userId: UserId; factorId: string; sessions: FactorChangeSessions; at: string } & WithEvents,
  ): Promise<FactorChangeOutcome>;
  /** Records a TOTP code of `step` as used, if no code of that step or a later one was: false on a replay. */
  useTotpStep(args: { factorId: string; step: number; at: string }): Promise<boolean>;
  /** Moves a security key's signature counter from `from` to `to`, if it is still `from`: false when another sign-in moved it. */
  useWebauthnCounter(args: { factorId: string; from: number; to: number; at: string }): Promise<boolean>;
  /** The user's recovery codes, replaced by these (hashed) ones; with `sessions`, applied as `addFactor` does. */
  replaceRecoveryCodes(
    args: { userId: UserId; codeHashes: string[]; at: string; sessions?: FactorChangeSessions } & WithEvents,
  ): Promise<FactorChangeOutcome>;
  /** Marks the user's unused recovery code used: false when it is none, or was used already (once, even at once). */
  useRecoveryCode(args: { userId: UserId; codeHash: string; at: string }): Promise<boolean>;
  recoveryCodesLeft(userId: UserId): Promise<number>;

  // ---- Sign-in passkeys (lib/domain/accounts/passkey-logins.ts) ----
  /** The user's sign-in passkeys, oldest first, with their unlock wraps. */
  listPasskeyLogins(userId: UserId): Promise<PasskeyLogin[]>;
  /** A sign-in passkey by its credential id, whoever's it is; null when none. */
  findPasskeyLogin(credentialId: string): Promise<PasskeyLogin | null>;
  /**
   * Adds a sign-in passkey under the account's lock, after `decidePasskeyEnrolment` against the
   * ones it has and its account version (`unlockVersion`: the version its unlock was wrapped under).
   */
  addPasskeyLogin(args: { login: PasskeyLogin; unlockVersion?: number } & WithEvents): Promise<void>;
  /** Removes the user's sign-in passkey with its unlock, with the events: false (and no events) when it is not theirs, or gone. */
  removePasskeyLogin(args: { userId: UserId; credentialId: string } & WithEvents): Promise<boolean>;
  /** Moves a sign-in passkey's counter from `from` to `to` and marks it used, if it is still `from`: false when another sign-in moved it. */
  usePasskeyLogin(args: { credentialId: string; from: number; to: number; at: string }): Promise<boolean>;

  // ---- Policies ----
  /** The organization's policies, or null while it has set none. */
  getPolicies(orgId: OrgId): Promise<OrgPolicies | null>;
  /**
   * Sets the organization's policies under the lock of every account in it (a login deciding its
   * scope, an enrolment, a removal come wholly before or after), and narrows to enrolment the live
   * whole sessions of the accounts `planPolicyNarrowing` names (a session an account recovery opened
   * within RECOVERY_PASSWORD_WINDOW_MS stays whole). Answers the sessions it narrowed.
   */
  setPolicies(args: { orgId: OrgId; policies: OrgPolicies; at: string } & WithEvents): Promise<{ narrowedSessions: string[] }>;

  // ---- Account recovery ----
  /** The user's enrolment (replacing any earlier one, whose pending requests end) with its shares. */
  putRecoveryEnrolment(args: { enrolment: RecoveryEnrolment; shares: RecoveryShare[] } & WithEvents): Promise<void>;
  getRecoveryEnrolment(userId: UserId): Promise<{ enrolment: RecoveryEnrolment; shares: RecoveryShare[] } | null>;
  /** Removes the user's enrolment and ends its pending requests; false when there was none. */
  deleteRecoveryEnrolment(args: { userId: UserId } & WithEvents): Promise<boolean>;
  /**
   * The account of an address and its enrolment (null: no account), read alike for any address:
   * the same statements whether or not it has an account or an enrolment.
   */
  findRecoveryTarget(email: string): Promise<RecoveryTarget | null>;
  /**
   * Stores a request, real or decoy alike, under its address's lock: the address's open requests
   * read, `decideRequestSlot` (the ones it replaces end; held, it is stored ended), the row written
   * with its events. The same statements for any address.
   */
  startRecoveryRequest(args: { request: NewRecoveryRequest } & WithEvents): Promise<void>;
  /** Any stored request, a decoy's too, as the routes that name it by its secret read it. */
  findRecoveryAsk(requestId: string): Promise<RecoveryAsk | null>;
  /** A request's device signed in with `sessionId`: pending (or opened) and not expired at `at` -> opened. False otherwise. */
  openRecoveryRequest(args: { requestId: string; sessionId: string; at: string } & WithEvents): Promise<boolean>;
  /** The user's request opened by `sessionId` since `since`, not completed yet; null otherwise. */
  findOpenedRecovery(args: { userId: UserId; sessionId: string; since: string }): Promise<RecoveryRequest | null>;
  /** An account's request (a decoy is none). */
  findRecoveryRequest(requestId: string): Promise<RecoveryRequest | null>;
  /** Requests (pending at `now`, or all) of the user. */
  listRecoveryRequests(args: { userId: UserId; now: string; pendingOnly: boolean }): Promise<RecoveryRequest[]>;
  /** Pending requests (at `now`) whose enrolment names `trusteeId`. */
  listRequestsForTrustee(args: { trusteeId: UserId; now: string }): Promise<RecoveryRequest[]>;
  listApprovals(requestId: string): Promise<RecoveryApproval[]>;
  /** Adds a trustee's approval to a request still pending at `now` (409 when it is not, or they approved it already). */
  addRecoveryApproval(args: { approval: RecoveryApproval; now: string } & WithEvents): Promise<void>;
  /**
   * Ends a request, if it still can be: `cancelled` from pending; `completed` from opened (the new
   * password set), which spends the enrolment (deleted, its other requests cancelled). False otherwise.
   */
  endRecoveryRequest(args: { requestId: string; status: "completed" | "cancelled"; at: string } & WithEvents): Promise<boolean>;
}
