/** Accounts: users and their organizations (their sessions: ./sessions.ts). */
import type { InviteId, OrgId, UserId } from "../../domain/ids";
import type { Caller, InviteBinding, Kdf, OrgRole, SignedStatement } from "../../domain/types";
import type { WithEvents } from "./outbox";
import type { PasswordChange } from "../../domain/accounts/password-change";
import type { VaultAfterRemoval } from "../../domain/orgs/membership";
import type { OrgLogEntry } from "../../domain/orgs/log";
import type { KeyLogEntry, KeyRotation } from "../../domain/accounts/key-rotation";
import type { PasskeyRewrap } from "../../domain/accounts/passkey-logins";

export interface UserRecord {
  userId: UserId;
  orgId: OrgId;
  email: string;
  role: OrgRole;
  authHash: string;
  kdf: Kdf;
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
  createdAt: string;
  /** The user's signed key statement (their id, email and keys); absent for an account made without one and not yet upgraded. */
  keyStatement?: SignedStatement;
  /** The user's signed KDF statement (their id, email and KDF parameters); absent likewise. */
  kdfStatement?: SignedStatement;
  /** What the user registered with, invited by a link that carried a binding secret. */
  inviteBinding?: InviteBinding;
  /** The account's key version: 1, then one more at each master password change (lib/domain/accounts/password-change.ts). */
  accountVersion: number;
  /** When they were taken out of their organization (lib/domain/orgs/membership.ts); absent while in it. */
  removedAt?: string;
}

/** A new user, before it has an organization and a role. */
export type NewUser = Omit<UserRecord, "orgId" | "role" | "accountVersion" | "removedAt">;

export interface OrgRecord {
  orgId: OrgId;
  name: string;
  createdAt: string;
}

export interface AccountStore {
  /** A new organization with the user as its owner. With `onlyIfFirstUser`, 403 unless the server has no user yet. */
  registerOwnerOfNewOrg(args: { user: NewUser; org: OrgRecord; onlyIfFirstUser: boolean } & WithEvents): Promise<UserRecord>;
  /** Creates the user in the invite's organization and marks the invite used, in one step: exactly one caller wins. */
  registerWithInvite(args: { user: NewUser; inviteId: InviteId; now: string } & WithEvents): Promise<UserRecord>;
  /** Whether the server has any user yet (registration without an invite is for the first one). */
  hasUsers(): Promise<boolean>;
  findUserByEmail(email: string): Promise<UserRecord | null>;
  findUserById(userId: UserId): Promise<UserRecord | null>;
  getOrg(orgId: OrgId): Promise<OrgRecord | null>;
  listOrgMembers(orgId: OrgId): Promise<UserRecord[]>;

  /**
   * A master password change, in one transaction (lib/domain/accounts/password-change.ts): locks the user's
   * personal vaults, swaps the account's key version (`409` when it is not `change.accountVersion`),
   * checks the re-wraps against exactly those vaults (`decidePasswordChange`), writes the new auth
   * hash, KDF, private keys, KDF statement and wraps (with their roster links), and ends every
   * other session of the user. Answers the sessions it ended. `authHash` is the stored form. Every
   * sign-in passkey that keeps an unlock gets its re-wrap from `passkeys`, exactly those (`decidePasskeyRewraps`).
   */
  changePassword(
    args: {
      userId: UserId;
      change: PasswordChange;
      authHash: string;
      encryptedPrivateKey: string;
      encryptedSigningPrivateKey: string;
      /** The unlock of each sign-in passkey that keeps one, wrapped again (none given: the account must have none). */
      passkeys?: PasskeyRewrap[];
      /** The stored auth hash the current password was proven against: the swap happens only while it is still the account's. */
      provenAuthHash: string;
      /** The session the change came from, which goes on. */
      keepSession?: string;
      /**
       * The account recovery (opened by this session) the change completes, in the same
       * transaction: the request completed and its enrolment spent; `409` when it is no longer opened.
       */
      completeRecovery?: string;
      /**
       * The emergency takeover (opened by this session, `keepSession`) the change completes, in the
       * same transaction: its grant spent, and the grantor's second factors, recovery codes and
       * sign-in passkeys removed (the grantee holds none of them; `passkeys` is then ignored); `404`
       * when the grant is gone.
       */
      completeTakeover?: string;
      now: string;
    } & WithEvents,
  ): Promise<{ endedSessions: string[] }>;

  /**
   * A key rotation, in one transaction (lib/domain/accounts/key-rotation.ts): locks every vault the user is a
   * member of (in id order) and the account, swaps the account's version (`409` when it is not
   * `rotation.accountVersion`), checks the entry still follows the key log's head and the vaults
   * against exactly those (`decideKeyRotation`), then writes the new keys, private keys and
   * statements, the log entry (entry 1 first, at the first rotation), each vault's new wrap with its
   * roster link and the wraps re-signed, each sign-in passkey's unlock re-wrapped (as `changePassword`
   * does), and ends every other session of the user.
   */
  rotateKeys(
    args: {
      userId: UserId;
      rotation: KeyRotation;
      passkeys?: PasskeyRewrap[];
      /** The head `checkKeyRotationForm` checked the entry against (its version): another rotation since is a `409`. */
      headVersion: number;
      keepSession?: string;
      now: string;
    } & WithEvents,
  ): Promise<{ endedSessions: string[] }>;

  /** The user's stored key log, oldest first; empty for an account that never rotated (its log is its registered keys). */
  keyLog(userId: UserId): Promise<KeyLogEntry[]>;

  /**
   * Takes `targetId` out of the caller's organization, in one transaction: every vault they are in
   * locked, the organization's removals one at a time, the rules (`decideOrgRemoval`,
   * `decideVaultsAfterRemoval`), then the person marked removed, their sessions ended, their
   * pending invites revoked, and the shared vaults others are in marked for a rekey; with
   * `orgLink`, the remover's signed link appended to the organization's log after its head
   * (`decideOrgLogStep`), in the same transaction. Answers what each vault needs and the sessions ended.
   */
  removeFromOrg(args: { caller: Caller; targetId: UserId; now: string; orgLink?: OrgLogEntry } & WithEvents): Promise<{
    vaults: VaultAfterRemoval[];
    endedSessions: string[];
    revokedInvites: InviteId[];
  }>;

  /**
   * Sets the user's statements that are not set yet (an account made before them, upgraded by its
   * client); one already set must be given unchanged, else `409 CONFLICT`. The caller checked them.
   */
  setStatements(args: { userId: UserId; keyStatement?: SignedStatement; kdfStatement?: SignedStatement }): Promise<void>;
}
