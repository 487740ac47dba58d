/**
 * `VaultClient`: the whole client flow over the service's HTTP interface. The server stores only
 * what this client seals, wraps and signs; everything it hands back is checked before use.
 *
 * The session's verbs (register, login, unlock, lock, logout, the password change) are its own
 * methods; everything else is a namespace: `sessions`, `keys`, `people`, `vaults`, `members`,
 * `items`, `invites`, `audit` (one file each in api/), `factors` and `recovery`. They stand on one
 * part per concern, each in its own file (or folder: trust/, item-log/) beside this one, wired in
 * parts.ts over one `ClientCore` (core.ts); callers never reach the parts. Ids a caller passes are
 * lowered in the namespaces, once (`lc`, api/ids.ts).
 */
import type { PasskeyAuthenticator, PasskeyLogins, PasskeySignInResult } from "./passkey-logins";
import type { Bytes } from "../../protocol/encoding";
import type { KdfChoice } from "../../protocol/crypto/keys";
import type { Transport } from "../http";
import {
  attachmentsApi,
  auditApi,
  invitesApi,
  itemsApi,
  keysApi,
  membersApi,
  peopleApi,
  sessionsApi,
  vaultsApi,
  type AttachmentsApi,
  type AuditApi,
  type InvitesApi,
  type ItemsApi,
  type KeysApi,
  type MembersApi,
  type PeopleApi,
  type SessionsApi,
  type VaultsApi,
} from "./api";
import type { VaultClientOptions } from "./core";
import type { Factors } from "./factors";
import { assembleParts, type Parts } from "./parts";
import type { PasswordChangeResult } from "./password";
import type { ProtectionProgress, ProtectionResult, ProtectionStep } from "./protect";
import type { Recovery, RecoveryRenewal } from "./recovery";
import type { Sends } from "./sends";
import type { EmergencyAccess, EmergencyRelease, EmergencyRenewal } from "./emergency";
import { WeakPasswordError } from "../errors";
import { checkMasterPassword, emailWords } from "../password-strength";
import type { Session } from "./session";
import { openKept, sealKeyFor, type KeptSession, type SealKey } from "./kept-session";
import type { Account, OrgRole } from "./types";

export type { VaultClientOptions } from "./core";
export type { AttachmentsApi, AuditApi, InvitesApi, ItemsApi, KeysApi, MembersApi, PeopleApi, SessionsApi, VaultsApi } from "./api";
export type { CheckedInvite, CreatedInvite } from "./invites";
export type { AdoptConfirmation, RekeyOptions } from "./rekey";
export type { CheckedVault, NameCheck } from "./vaults";
export type { PasswordChangeResult } from "./password";
export type { PendingUpload, UploadOptions } from "./attachments";
export type { MadeSend, SendContent, SendOptions, SendSummary } from "./sends";
export { ProtectionInterruptedError } from "./protect";
export type { ProtectedVault, ProtectionProgress, ProtectionResult, ProtectionStep, VaultLeft } from "./protect";
export type { KeyRotationResult } from "./keys";
export type { RecoveryRenewal } from "./recovery";
export type { EmergencyGrant, EmergencyRelease, EmergencyRenewal } from "./emergency";
export {
  WEB_OFFLINE_CACHE_CONTEXT,
  WEB_OFFLINE_EDITS_CONTEXT,
  WEB_SESSION_SEAL_CONTEXT,
  isKeptSession,
  openKept,
  openValue,
  sealKept,
  sealValue,
  type KeptSession,
  type SealKey,
} from "./kept-session";
export type { Removal, RemovalFinished } from "./people";
export type { SignedMember } from "./org-log";
export type { ImportedVault, ImportResult, TransferProgress, VaultPerFolderResult } from "./transfer";
export type { FactorInfo, LockOutPolicy, Policies } from "./factors";
export type { SecondFactorAnswer, SecondFactorChallenge, SecondFactorPrompt } from "./login";
export type { PendingRecovery, RecoveryTask } from "./recovery";
export type { PasskeyAuthenticator, PasskeyLoginInfo, PasskeySignInPolicy, PasskeySignInResult } from "./passkey-logins";
export type * from "./types";

export class VaultClient {
  private readonly parts: Parts;
  /** The account's signed-in devices: list, end one, end the others (api/sessions.ts). */
  readonly sessions: SessionsApi;
  /** Other users' keys checked and pinned, this account's own fingerprint, key rotation (api/keys.ts). */
  readonly keys: KeysApi;
  /** The organization's people: list, find, remove, and what a removed person could read (api/people.ts). */
  readonly people: PeopleApi;
  /** Vaults: list, create, open, rename, verify, rekey, export (api/vaults.ts). */
  readonly vaults: VaultsApi;
  /** A vault's members and its signed roster (api/members.ts). */
  readonly members: MembersApi;
  /** A vault's items, their history and trash, the import (api/items.ts). */
  readonly items: ItemsApi;
  /** Files on items: upload, resume, download, remove (api/attachments.ts). */
  readonly attachments: AttachmentsApi;
  /** Sends: a text or a file shared by a link that alone holds its key (sends.ts). */
  readonly sends: Sends;
  /** Invites to the organization (api/invites.ts). */
  readonly invites: InvitesApi;
  /** The organization's audit log, checked here (api/audit.ts). */
  readonly audit: AuditApi;
  /** Second factors and the organization's policies (factors.ts). */
  readonly factors: Factors;
  /** k-of-n account recovery: enrol, approve as a trustee, recover (recovery.ts). */
  readonly recovery: Recovery;
  /** Emergency access: grant a member your account after a wait you can stop; ask for, and open, access granted to you (emergency.ts). */
  readonly emergency: EmergencyAccess;
  /** The passkeys that sign in to this account, and unlock it with the PRF: list, register, remove (passkey-logins.ts). */
  readonly accountPasskeys: Pick<PasskeyLogins, "list" | "add" | "remove">;

  constructor(opts: VaultClientOptions) {
    const parts = assembleParts(opts);
    this.parts = parts;
    this.sessions = sessionsApi(parts);
    this.keys = keysApi(parts);
    this.people = peopleApi(parts);
    this.vaults = vaultsApi(parts);
    this.members = membersApi(parts);
    this.items = itemsApi(parts);
    this.attachments = attachmentsApi(parts);
    this.sends = parts.sends;
    this.emergency = parts.emergency;
    this.invites = invitesApi(parts);
    this.audit = auditApi(parts);
    this.factors = parts.factors;
    this.recovery = parts.recovery;
    this.accountPasskeys = parts.passkeyLogins;
  }

  get http(): Transport {
    return this.parts.core.http;
  }

  get account(): Account {
    return this.parts.core.account;
  }

  get unlocked(): boolean {
    return this.parts.core.keys !== undefined;
  }

  /**
   * A login kept on this device (kept-session.ts) taken up again with the master password: the
   * keys opened and checked as `unlock` does (a wrong password is its `UnlockError`, after one
   * KDF), the sealed tokens opened with the key the password gives (`sealKey` hears it before any
   * token rotates, to seal the next ones), and the same session refreshed: no new login, no second
   * step. A session that ended on the server meanwhile is `ApiError` 401 (the client is locked again).
   */
  static async resume(
    opts: VaultClientOptions,
    kept: KeptSession,
    password: string,
    hooks: { sealKey?: (key: SealKey) => void } = {},
  ): Promise<VaultClient> {
    const client = await VaultClient.unlockKept(opts, kept, password, hooks);
    try {
      await client.http.refresh();
    } catch (err) {
      client.lock();
      throw err;
    }
    return client;
  }

  /**
   * `resume` without the server: the keys opened and checked as `unlock` checks them (the
   * remembered KDF parameters, the pinned keys; a wrong password is its `UnlockError`), the sealed
   * tokens opened and set, and nothing sent. The caller refreshes the session when the server
   * answers (`http.refresh()`), or reads what it kept offline meanwhile.
   */
  static async unlockKept(
    opts: VaultClientOptions,
    kept: KeptSession,
    password: string,
    hooks: { sealKey?: (key: SealKey) => void } = {},
  ): Promise<VaultClient> {
    const client = new VaultClient({ ...opts, account: kept.account, tokens: undefined });
    await client.unlock(password);
    try {
      const key = await sealKeyFor(client.exportStretchedKey(), kept.context);
      const tokens = await openKept(key, kept);
      hooks.sealKey?.(key);
      await client.http.setTokens(tokens);
    } catch (err) {
      client.lock();
      throw err;
    }
    return client;
  }

  /** The key that seals this unlocked client's kept session under `context` (kept-session.ts). */
  sealKey(context: string): Promise<SealKey> {
    return sealKeyFor(this.parts.core.requireKeys().stretchedKey, context);
  }

  // ---- The session (session.ts) ------------------------------------------------------------------

  /**
   * Before anyone signs in: whether registering needs an invite, and whether the server still has no
   * account. The server's word, used only to choose what a first page shows first (never to hide the login).
   */
  registrationOffer(): Promise<{ mode: "open" | "invite" | "disabled"; firstAccount: boolean }> {
    return this.parts.core.http.request("GET", "/auth/registration", { auth: false });
  }
  register(opts: Parameters<Session["register"]>[0]): Promise<Account> {
    return this.parts.session.register(opts);
  }
  login(email: string, password: string): Promise<Account> {
    return this.parts.session.login(email, password);
  }
  unlock(password: string): Promise<void> {
    return this.parts.session.unlock(password);
  }
  /**
   * Signs in with a passkey (passkey-logins.ts): unlocked at once when the authenticator answers the
   * PRF and the passkey keeps an unlock; otherwise signed in and waiting for `unlockPasskeyLogin`.
   */
  loginWithPasskey(authenticator: PasskeyAuthenticator): Promise<PasskeySignInResult> {
    return this.parts.passkeyLogins.signIn(authenticator);
  }
  /** The master password for a passkey sign-in that did not unlock (a wrong one is its `UnlockError`; try again). */
  unlockPasskeyLogin(password: string): Promise<Account> {
    return this.parts.passkeyLogins.unlockWithPassword(password);
  }
  /** Gives up a passkey sign-in waiting for the master password: its session ends on the server. */
  cancelPasskeyLogin(): Promise<void> {
    return this.parts.passkeyLogins.cancel();
  }
  unlockWithStretchedKey(stretchedKey: Bytes): Promise<void> {
    return this.parts.session.unlockWithStretchedKey(stretchedKey);
  }
  exportStretchedKey(): Bytes {
    return this.parts.session.exportStretchedKey();
  }
  lock(): void {
    this.parts.session.lock();
  }
  logout(): Promise<void> {
    this.parts.items.synced.forget();
    return this.parts.session.logout();
  }
  me(): Promise<{ userId: string; email: string; orgId: string; role: OrgRole; createdAt: string; accountVersion: number }> {
    return this.parts.session.me();
  }
  /**
   * Changes the master password (password.ts): every personal vault's key wrapped again under the
   * new password, the account's other sessions ended. That alone keeps every key: the old password
   * and a copy of the server's data from before the change still open the private keys, and through
   * them every vault and every item written after it. With `oldPasswordMayBeKnown`, the change goes
   * on to cut the old password off (protect.ts): the account's keys rotated, every personal vault
   * and every shared vault the user manages rekeyed; `protection.left` lists the shared vaults only
   * their owners can rekey. Interrupted there, it throws `ProtectionInterruptedError` (the password
   * is changed; `protect({ resume })` finishes). `kdf` chooses new parameters (never below the floor).
   */
  async changePassword(
    current: string,
    next: string,
    opts: { kdf?: KdfChoice; oldPasswordMayBeKnown?: boolean; onProgress?: (step: ProtectionStep) => void } = {},
  ): Promise<
    PasswordChangeResult & {
      recovery: RecoveryRenewal;
      emergency: EmergencyRenewal;
      protection?: ProtectionResult;
      passkeysRemoved?: number;
    }
  > {
    const changed = await this.parts.passwords.changePassword(current, next, { kdf: opts.kdf });
    // The recovery copy held the old password's key: made again, or said to be stale. Emergency
    // grants are stale until the person makes each again (`emergency.renew`).
    if (!opts.oldPasswordMayBeKnown)
      return { ...changed, recovery: await this.parts.recovery.renew(), emergency: await this.parts.emergency.staleAfterChange() };
    // Each passkey's kept key opens with the old password and an old copy of the server's data: they are registered again, not re-wrapped.
    const passkeysRemoved = await this.parts.passkeyLogins.removeUnlocking();
    // Protecting rotates the keys the enrolment is bound to: it is made again once, after.
    const { recovery, emergency, ...protection } = await this.protect({ onProgress: opts.onProgress });
    return {
      ...changed,
      recovery,
      emergency,
      protection,
      passkeysRemoved,
      sessionsEnded: changed.sessionsEnded + protection.sessionsEnded,
    };
  }
  /**
   * In a fresh client (its own storage): takes up a released grant another client opened
   * (`emergency.open`), as the grantor. A read grant's session may only read, and ends when its
   * access token does (open it again); a takeover's goes on to `completeTakeover`.
   */
  takeUpEmergency(release: EmergencyRelease): Promise<Account> {
    return this.parts.session.takeUp(release.grantor.email, release.login, release.stretchedKey, release.kdf);
  }
  /**
   * In a client that took up a takeover grant: sets `newPassword` (checked for strength first) without
   * the old one, then rotates the account's keys. The grant is spent, the account's second factors,
   * recovery codes and sign-in passkeys are removed (their holder is gone), and every other session
   * of the account ends.
   */
  async completeTakeover(newPassword: string): Promise<PasswordChangeResult> {
    const verdict = await checkMasterPassword(newPassword, emailWords(this.parts.core.account.email));
    if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
    const changed = await this.parts.passwords.setPasswordAfterRecovery(newPassword);
    // New keys too: the old password and a copy of the server's data no longer open what is written from now on.
    await this.parts.keyRotations.rotateKeys();
    return changed;
  }
  /**
   * Cuts an old master password off without changing the password again (protect.ts): after a
   * plain change, or to finish one that was interrupted (`resume`: the error's `progress`).
   */
  async protect(opts?: {
    resume?: ProtectionProgress;
    onProgress?: (step: ProtectionStep) => void;
  }): Promise<ProtectionResult & { recovery: RecoveryRenewal; emergency: EmergencyRenewal }> {
    const protection = await this.parts.protection.protect(opts);
    // The recovery enrolment is bound to the account's keys and KDF statement: made again, or said to be stale; emergency grants are stale.
    return { ...protection, recovery: await this.parts.recovery.renew(), emergency: await this.parts.emergency.staleAfterChange() };
  }
}
