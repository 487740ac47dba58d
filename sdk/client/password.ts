/**
 * Changing the master password. Everything is made here, in one request: the current
 * password proven (it must derive the stretched key this client holds), the new one checked for
 * strength, derived under new parameters (never below the floor), the private keys sealed again,
 * a KDF statement signed by the account's key (so this account's other devices take the new
 * parameters up without a warning), and every personal vault's key wrapped again under the new
 * stretched key, each with its signed `rewrap` roster link. The server swaps it all in one
 * transaction, under the account's key version: a change made from an older read (another change
 * came first, a personal vault was made meanwhile) is refused, and this client reads again and
 * starts over, so no personal vault is ever left wrapped under a password nobody knows.
 */
import { equalBytes, toBase64, type Bytes } from "../../protocol/encoding";
import { ApiError, SecurityError, UnlockError, WeakPasswordError } from "../errors";
import {
  DEFAULT_ARGON2ID,
  deriveAccountSecrets,
  keyFingerprint,
  newKdfParams,
  resealAccountKeys,
  type AccountKeys,
  type KdfChoice,
} from "../../protocol/crypto/keys";
import { checkMasterPassword, emailWords } from "../password-strength";
import { aesKwWrap, ed25519Sign, type KdfParams } from "../../protocol/crypto/primitives";
import { rosterWraps, type RosterLink } from "../../protocol/formats/roster";
import { kdfStatementBytes, signStatement } from "../../protocol/formats/statements";
import { passwordChangedElsewhere, type ClientCore } from "./core";
import type { Rosters } from "./roster";
import type { Trust } from "./trust";
import type { Vaults } from "./vaults";
import type { WrapLabels } from "./wrap-labels";
import type { WrapLabel } from "../../protocol/formats/roster-format";
import type { PasskeyLogins, PasskeyRewrap } from "./passkey-logins";

/** Reads and attempts before a change that keeps meeting another one gives up (409 to the caller). */
const MAX_ATTEMPTS = 3;

export interface PasswordChangeResult {
  /** The account's key version now. */
  accountVersion: number;
  /** The account's other sessions, ended by the change. */
  sessionsEnded: number;
  /** Personal vaults whose key was wrapped again. */
  vaults: number;
}

export class PasswordChanges {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly vaults: Vaults,
    private readonly labels: WrapLabels,
    private readonly passkeys: PasskeyLogins,
  ) {}

  async changePassword(current: string, next: string, opts: { kdf?: KdfChoice } = {}): Promise<PasswordChangeResult> {
    const proof = await deriveAccountSecrets(current, this.core.account.kdf, this.core.derive);
    if (!equalBytes(proof.stretchedKey, this.core.requireKeys().stretchedKey))
      throw new UnlockError("the current master password is not right");
    return this.setPassword(next, opts, toBase64(proof.authHash));
  }

  /** In the session an account recovery began (recovery.ts): a new password without the old one, which nobody knows. */
  setPasswordAfterRecovery(next: string, opts: { kdf?: KdfChoice } = {}): Promise<PasswordChangeResult> {
    return this.setPassword(next, opts, undefined);
  }

  private async setPassword(next: string, opts: { kdf?: KdfChoice }, currentAuthHash: string | undefined): Promise<PasswordChangeResult> {
    const keys = this.core.requireKeys();
    // Never from a session on an older password than this device verified: its change would fork the account's statements.
    const held = await this.labels.current();
    const made = await this.newSecrets(keys, next, opts);
    const subjectKey = await keyFingerprint(await this.trust.keysOf(this.core.account.userId));
    const label = { ...held, kdfVersion: made.kdfStatement.version };
    for (let attempt = 1; ; attempt++) {
      const accountVersion = await this.core.accountVersion();
      const rewraps = await this.rewrapPersonal(keys, made.fresh.stretchedKey, subjectKey, label);
      // Each passkey that unlocks, wrapped for the new password's stretched key at the next account version.
      const passkeys = await this.passkeys.rewraps(made.fresh.stretchedKey, accountVersion + 1);
      const answer = await this.send({ currentAuthHash, made, accountVersion, rewraps, passkeys }, attempt);
      if (!answer) continue;
      if (answer.accountVersion !== accountVersion + 1)
        throw new SecurityError(
          "INCONSISTENT",
          `the server answers account version ${answer.accountVersion} for a change from ${accountVersion}`,
        );
      await this.takeUp(keys, made, rewraps, answer.accountVersion);
      return { accountVersion: answer.accountVersion, sessionsEnded: answer.sessionsEnded, vaults: rewraps.length };
    }
  }

  /**
   * The new password checked for strength and derived under new parameters (never below the
   * floor), the private keys sealed again under it, and the KDF statement signed by the account's key.
   */
  private async newSecrets(keys: AccountKeys, next: string, opts: { kdf?: KdfChoice }): Promise<NewSecrets> {
    const { core } = this;
    const account = core.account;
    const verdict = await checkMasterPassword(next, emailWords(account.email));
    if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
    const kdf = newKdfParams(opts.kdf ?? (await this.policyKdf()));
    const fresh = await deriveAccountSecrets(next, kdf, core.derive);
    const sealed = await resealAccountKeys(keys.stretchedKey, fresh.stretchedKey, account);
    // The next statement version: one above the account's, as this device remembers it (else as prelogin answers it: a lie there only fails the change).
    const remembered = await core.kdfMemory.get(account.email);
    const statementVersion =
      remembered?.version ??
      (
        await core.http.request<{ kdfStatement?: { version: number } }>("GET", "/auth/prelogin", {
          auth: false,
          query: { email: account.email },
        })
      ).kdfStatement?.version ??
      1;
    const version = statementVersion + 1;
    const statementBytes = kdfStatementBytes({ userId: account.userId, email: account.email, kdf, version });
    const kdfStatement = { version, signature: await signStatement(statementBytes, keys.signingPrivateKey) };
    return { kdf, fresh, sealed, kdfStatement };
  }

  /**
   * Every personal vault, each opened as any read opens it (its roster verified, its wrap the one
   * the roster vouches for), its key wrapped under the new stretched key with a signed `rewrap` roster link.
   */
  private async rewrapPersonal(keys: AccountKeys, stretchedKey: Bytes, subjectKey: string, label: WrapLabel): Promise<Rewrap[]> {
    const me = this.core.account.userId;
    // Checked against the vaults this device knows: a personal vault the server leaves out would stay under the old password.
    const personal = (await this.vaults.listCheckedVaults()).filter((v) => v.vaultType === "personal");
    const rewraps: Rewrap[] = [];
    for (const listed of personal) {
      const { vault, key, roster } = await this.vaults.openCurrent(listed.vaultId);
      const wrapped = await aesKwWrap(stretchedKey, key);
      const encryptedVaultKey = toBase64(wrapped);
      const rosterLink =
        roster &&
        (await this.rosters.nextRosterLink(roster.state, {
          op: "rewrap",
          keyVersion: roster.state.keyVersion,
          subjectId: me,
          subjectKey,
          wraps: await rosterWraps([{ userId: me, encryptedVaultKey }], label),
        }));
      rewraps.push({
        vaultId: vault.vaultId,
        keyVersion: vault.keyVersion,
        encryptedVaultKey,
        wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
        ...(rosterLink && { rosterLink }),
        key,
      });
    }
    return rewraps;
  }

  /** The change in one request; undefined when another change came first and another attempt reads again. */
  private async send(
    change: {
      currentAuthHash: string | undefined;
      made: NewSecrets;
      accountVersion: number;
      rewraps: readonly Rewrap[];
      passkeys: readonly PasskeyRewrap[];
    },
    attempt: number,
  ): Promise<{ accountVersion: number; sessionsEnded: number } | undefined> {
    const { currentAuthHash, made, accountVersion, rewraps, passkeys } = change;
    try {
      return await this.core.http.request("POST", "/users/me/password", {
        body: {
          ...(currentAuthHash !== undefined && { currentAuthHash }),
          authHash: toBase64(made.fresh.authHash),
          kdf: made.kdf,
          ...made.sealed,
          kdfStatement: made.kdfStatement,
          accountVersion,
          vaults: rewraps.map(({ key: _key, ...wrap }) => wrap),
          passkeys,
        },
      });
    } catch (err) {
      // Changed on another device: this client's keys are the old ones, and no retry can help.
      if (err instanceof ApiError && err.status === 409 && err.field === "accountVersion") throw passwordChangedElsewhere();
      // A new personal vault, a passkey registered, a rekey or a roster link came first: read again.
      if (err instanceof ApiError && err.status === 409 && attempt < MAX_ATTEMPTS) return undefined;
      throw err;
    }
  }

  /** Taken up only once the server took the change: the new stretched key, parameters, sealed keys and version, and the wraps and heads it made. */
  private async takeUp(keys: AccountKeys, made: NewSecrets, rewraps: readonly Rewrap[], accountVersion: number): Promise<void> {
    const { core } = this;
    const account = core.account;
    core.keys = { ...keys, stretchedKey: made.fresh.stretchedKey };
    core.accountInfo = { ...account, kdf: made.kdf, ...made.sealed, accountVersion, kdfVersion: made.kdfStatement.version };
    for (const w of rewraps) core.vaultKeys.set(w.vaultId, { keyVersion: w.keyVersion, wrap: w.encryptedVaultKey, key: w.key });
    for (const w of rewraps) if (w.rosterLink) await this.rosters.sawRosterLink(w.rosterLink);
    await core.kdfMemory.set(account.email, {
      kdf: made.kdf,
      userId: account.userId,
      signingPublicKey: account.signingPublicKey,
      version: made.kdfStatement.version,
      orgId: account.orgId,
    });
  }

  /**
   * The default parameters, raised to the organization's least cost where it asks for more (a
   * password change below it is refused by the server): only ever up, whatever the server says.
   */
  private async policyKdf(): Promise<KdfChoice> {
    const policies = await this.core.http
      .request<{ minKdf?: { argon2idMemoryKiB: number; argon2idIterations: number } }>(
        "GET",
        `/orgs/${encodeURIComponent(this.core.account.orgId)}/policies`,
      )
      .catch(() => ({ minKdf: undefined }));
    const min = policies.minKdf;
    return {
      ...DEFAULT_ARGON2ID,
      memoryKiB: Math.max(DEFAULT_ARGON2ID.memoryKiB, min?.argon2idMemoryKiB ?? 0),
      iterations: Math.max(DEFAULT_ARGON2ID.iterations, min?.argon2idIterations ?? 0),
    };
  }
}

/** The new password's secrets: its parameters, what it derives, the private keys sealed under it, and the signed KDF statement. */
interface NewSecrets {
  kdf: KdfParams;
  fresh: Awaited<ReturnType<typeof deriveAccountSecrets>>;
  sealed: Awaited<ReturnType<typeof resealAccountKeys>>;
  kdfStatement: { version: number; signature: string };
}

/** A personal vault's key wrapped under the new stretched key, with the key itself (kept here, never sent). */
interface Rewrap {
  vaultId: string;
  keyVersion: number;
  encryptedVaultKey: string;
  wrapSignature: string;
  rosterLink?: RosterLink;
  key: Bytes;
}
