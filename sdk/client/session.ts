/**
 * Registering, logging in and out, unlocking and locking: the account's keys in this session.
 *
 * Nothing derived from the password leaves this file before its KDF parameters are checked: the
 * floor and caps (kdf.ts, inside every derivation), and, on a device that has logged in to the
 * account before, the parameters and salt it remembers, which only a statement signed by the
 * account's own key (known to this device) may change (`KDF_CHANGED`).
 */
import { normalizeEmail } from "../../protocol/email";
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { ApiError, SecurityError, WeakPasswordError } from "../errors";
import { sameKdf } from "../../protocol/crypto/kdf";
import {
  createAccountKeys,
  deriveAccountSecrets,
  keyFingerprint,
  newKdfParams,
  openAccountKeys,
  type AccountKeys,
  type KdfChoice,
} from "../../protocol/crypto/keys";
import { checkMasterPassword, emailWords } from "../password-strength";
import type { KdfParams } from "../../protocol/crypto/primitives";
import {
  inviteBindingMac,
  kdfStatementBytes,
  keyStatementBytes,
  signStatement,
  statementVerifies,
  type KdfStatement,
  type KeyStatement,
  type SignedStatement,
} from "../../protocol/formats/statements";
import { userIdForKey } from "../../protocol/ids";
import type { ClientCore } from "./core";
import { secondStep } from "./factors";
import { isDeviceToken, type LoginAnswer, type LoginStep } from "./login";
import type { CheckedInvite, Invites } from "./invites";
import type { OrgLogs } from "./org-log";
import type { Trust } from "./trust";
import type { Account, OrgRole, SessionInfo } from "./types";

/** The statements of this release have version 1. */
const STATEMENT_VERSION = 1;

export class Session {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly invites: Invites,
    private readonly orgLogs: OrgLogs,
  ) {}

  /**
   * The organization's signed log settled at the start of a session (an owner adopts one, an
   * invited member adds their join: org-log.ts). It does not hold up the login: wherever a client
   * acts on the log (roles, removals, writes) it is fetched and checked again, and refused there.
   */
  private async settleOrgLog(invite?: CheckedInvite): Promise<void> {
    const signed = invite?.verified && invite.inviteStatement;
    await this.orgLogs
      .settle(
        signed
          ? {
              inviteId: invite.inviteId,
              orgId: invite.orgId,
              orgName: invite.orgName ?? "",
              email: invite.email,
              role: invite.role,
              expiresAt: invite.expiresAt,
              inviterId: invite.inviter.userId,
              signature: signed.signature,
            }
          : undefined,
      )
      .catch(() => undefined);
  }

  /**
   * Refuses a weak master password (`checkMasterPassword`: `WeakPasswordError`); with an invite,
   * checks it against what its inviter signed before anything is sent (`INVITE_MISMATCH`); then
   * generates the account's keys, signs its key and KDF statements (and, invited through a link
   * with a binding secret, the MAC that vouches for them to the inviter), registers and logs in.
   * The password never leaves this function.
   */
  async register(opts: {
    email: string;
    password: string;
    /** The invite link, its code, or a bare token. */
    invite?: string;
    orgName?: string;
    kdf?: KdfChoice;
    rsaBits?: number;
  }): Promise<Account> {
    const email = normalizeEmail(opts.email);
    const verdict = await checkMasterPassword(opts.password, emailWords(email));
    if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
    const invite = opts.invite === undefined ? undefined : await this.invites.redeemInvite(opts.invite);
    if (invite && invite.email !== email) throw new ApiError(400, "INVALID", `this invite is for ${invite.email}, not ${email}`, "email");
    const { registration, keys } = await createAccountKeys(opts.password, {
      kdf: newKdfParams(opts.kdf),
      rsaBits: opts.rsaBits,
      derive: this.core.derive,
    });
    // The server derives the new user's id from the signing key: known here before it answers, and signed.
    const userId = await userIdForKey(keys.signingPublicKeyRaw);
    const statement: KeyStatement = { userId, email, keys: await keyFingerprint(registration), version: STATEMENT_VERSION };
    const kdfStatement: KdfStatement = { userId, email, kdf: registration.kdf, version: STATEMENT_VERSION };
    const registered = await this.core.http.request<{ userId: string; orgId: string; role: OrgRole }>("POST", "/auth/register", {
      auth: false,
      body: {
        email,
        ...registration,
        inviteToken: invite?.token,
        orgName: opts.orgName,
        keyStatement: { version: STATEMENT_VERSION, signature: await signStatement(keyStatementBytes(statement), keys.signingPrivateKey) },
        kdfStatement: {
          version: STATEMENT_VERSION,
          signature: await signStatement(kdfStatementBytes(kdfStatement), keys.signingPrivateKey),
        },
        inviteBinding: invite?.secret && (await inviteBindingMac(invite.secret, statement)),
      },
    });
    if (registered.userId !== userId)
      throw new SecurityError("INCONSISTENT", `the server registered user ${registered.userId}, not the ${userId} this client signed`);
    if (invite?.verified) {
      // What this account is, as the inviter signed it: remembered before anything the server says next.
      await this.core.kdfMemory.set(email, {
        kdf: registration.kdf,
        userId,
        signingPublicKey: registration.signingPublicKey,
        version: STATEMENT_VERSION,
        orgId: invite.orgId,
      });
      if (registered.orgId !== invite.orgId || registered.role !== invite.role)
        throw new SecurityError(
          "INVITE_MISMATCH",
          `the server registered you as ${registered.role} of organization ${registered.orgId}, not as the ${invite.role} of "${invite.orgName}" (${invite.orgId}) your inviter signed`,
        );
    }
    const account = await this.finishLogin(email, registration.authHash, keys.stretchedKey, registration.kdf);
    if (invite?.verified) await this.invites.pinInviter(invite);
    await this.settleOrgLog(invite);
    return account;
  }

  /** Prelogin (for the KDF parameters, checked), derive, log in, open the private keys. */
  async login(rawEmail: string, password: string): Promise<Account> {
    const email = normalizeEmail(rawEmail);
    const remembered = await this.core.kdfMemory.get(email);
    const { kdf, kdfStatement, keyLog } = await this.core.http.request<{
      kdf: KdfParams;
      kdfStatement?: SignedStatement;
      keyLog?: unknown;
    }>("GET", "/auth/prelogin", { auth: false, query: { email, ...(remembered && { knownSigningKey: remembered.signingPublicKey }) } });
    await this.checkRemembered(email, kdf, kdfStatement, keyLog);
    const { authHash, stretchedKey } = await deriveAccountSecrets(password, kdf, this.core.derive);
    const account = await this.finishLogin(email, toBase64(authHash), stretchedKey, kdf);
    await this.settleOrgLog();
    return account;
  }

  /**
   * Parameters other than the ones this device remembers for the account are refused unless the
   * account's signing key, which this device knows, signed them in a newer statement.
   */
  private async checkRemembered(email: string, kdf: KdfParams, statement: SignedStatement | undefined, keyLog?: unknown): Promise<void> {
    const remembered = await this.core.kdfMemory.get(email);
    if (!remembered || sameKdf(kdf, remembered.kdf)) return;
    const bytes = kdfStatementBytes({ userId: remembered.userId, email, kdf, version: statement?.version ?? 0 });
    // The key that may sign new parameters: the one remembered or, after a rotation, the current one its signed key log leads to
    // (never a key the log shows was replaced: a thief of an old key signs nothing this device takes).
    const signer = (await this.keyAfter(remembered, keyLog)) ?? remembered.signingPublicKey;
    const vouched =
      statement !== undefined && statement.version > remembered.version && (await statementVerifies(bytes, signer, statement.signature));
    if (!vouched) {
      throw new SecurityError(
        "KDF_CHANGED",
        `the server answers other key-derivation parameters for ${email} than this device logged in with (${describeKdf(remembered.kdf)}, now ${describeKdf(kdf)}), and your account never signed them: nothing was derived or sent`,
      );
    }
  }

  /**
   * Takes up a login once everything in the answer checks out, and only then: the parameters
   * derived with, the account this device knows under this email (its id, signing key and
   * organization), the private keys (they open, and match the public ones and their pin), and
   * the account's own statements. A login that fails a check leaves this client as it was.
   */
  private async finishLogin(email: string, authHash: string, stretchedKey: Bytes, derivedWith: KdfParams): Promise<Account> {
    const deviceToken = await this.core.deviceTokens?.get(email);
    const first = await this.core.http.request<LoginAnswer | LoginStep>("POST", "/auth/login", {
      auth: false,
      body: { email, authHash, deviceName: this.core.deviceName, ...(isDeviceToken(deviceToken) && { deviceToken }) },
    });
    const res = "secondFactorRequired" in first ? await secondStep(this.core, first) : first;
    const account = await this.takeUp(email, res, stretchedKey, derivedWith);
    // A device remembered at the second step: kept once the login checks out (and only from a second step).
    if ("secondFactorRequired" in first && isDeviceToken(res.deviceToken)) await this.core.deviceTokens?.set(email, res.deviceToken);
    return account;
  }

  /**
   * A login answer (of a password, a second step or an account recovery) taken up with the
   * stretched key that opens its keys, once every check passes.
   */
  async takeUp(email: string, res: LoginAnswer, stretchedKey: Bytes, derivedWith: KdfParams): Promise<Account> {
    const remembered = await this.core.kdfMemory.get(email);
    if (!sameKdf(res.kdf, derivedWith))
      throw new SecurityError("KDF_CHANGED", "the server's login answer names other key-derivation parameters than the ones derived with");
    if (remembered) {
      if (remembered.userId !== res.userId) throw otherAccount(email);
      // Other keys than the ones remembered: the account rotated them, and its signed key log leads from those to these.
      if (remembered.signingPublicKey !== res.signingPublicKey) await this.checkRotatedFrom(remembered.signingPublicKey, res, email);
      if (remembered.orgId !== undefined && remembered.orgId !== res.orgId)
        throw new SecurityError("IDENTITY_MISMATCH", `the server puts ${email} in organization ${res.orgId}, not ${remembered.orgId}`);
    }
    const account: Account = {
      userId: res.userId,
      orgId: res.orgId,
      role: res.role,
      email,
      kdf: derivedWith,
      publicKey: res.publicKey,
      signingPublicKey: res.signingPublicKey,
      encryptedPrivateKey: res.encryptedPrivateKey,
      encryptedSigningPrivateKey: res.encryptedSigningPrivateKey,
      accountVersion: res.accountVersion,
    };
    const keys = await openAccountKeys(stretchedKey, account);
    const upgrade = await this.checkOwnStatements(account, keys, res);
    // Last, as it pins the account's keys on this device's first login: nothing is kept of a login that fails a check.
    await this.trust.checkOwnPin(account, account, res.keyLog ?? null);
    // The account state these keys belong to, as verified: the statement just checked (or signed), the key log as followed.
    account.kdfVersion = res.kdfStatement?.version ?? STATEMENT_VERSION;
    account.keyLogVersion = await this.trust.ownKeyLogVersion(account.userId);
    this.core.accountInfo = account;
    this.core.keys = keys;
    await this.core.http.setTokens({ accessToken: res.accessToken, refreshToken: res.refreshToken });
    if (upgrade) await this.core.http.request("POST", "/users/me/statements", { body: upgrade });
    // The version of the verified statement (1 for one this client has just signed), never lower than one seen before.
    const version = Math.max(res.kdfStatement?.version ?? STATEMENT_VERSION, remembered?.version ?? 0);
    // A newer state this device saw the account sign a wrap under stays known until a login takes it up.
    const seen =
      remembered?.seen && (remembered.seen.kdfVersion > version || remembered.seen.keyLogVersion > account.keyLogVersion)
        ? remembered.seen
        : undefined;
    await this.core.kdfMemory.set(email, {
      kdf: derivedWith,
      userId: res.userId,
      signingPublicKey: res.signingPublicKey,
      version,
      orgId: res.orgId,
      ...(seen && { seen }),
    });
    return account;
  }

  /**
   * The current signing key the account's key log (as prelogin served it) leads to from the
   * remembered one, each step signed by the key before it; undefined when there is no such log or
   * it does not verify (the remembered key alone then vouches, as before rotations).
   */
  private async keyAfter(remembered: { userId: string; signingPublicKey: string }, keyLog: unknown): Promise<string | undefined> {
    if (keyLog === undefined) return undefined;
    try {
      const log = await this.trust.verifiedKeyLog(remembered.userId, keyLog);
      const from = log.findIndex((e) => e.entry.signingPublicKey === remembered.signingPublicKey);
      return from < 0 || from === log.length - 1 ? undefined : log[log.length - 1]!.entry.signingPublicKey;
    } catch (err) {
      if (err instanceof SecurityError) return undefined;
      throw err;
    }
  }

  /**
   * Keys a login answers other than the ones this device remembers for the account: the account's
   * key log, as the login carries it, verified, must hold the remembered signing key and end with
   * the answered keys, after it. Else the server answers another account (`IDENTITY_MISMATCH`).
   */
  private async checkRotatedFrom(rememberedSigningKey: string, res: LoginAnswer, email: string): Promise<void> {
    if (res.keyLog === undefined) throw otherAccount(email);
    const log = await this.trust.verifiedKeyLog(res.userId, res.keyLog);
    const from = log.findIndex((e) => e.entry.signingPublicKey === rememberedSigningKey);
    const last = log[log.length - 1]!;
    if (from < 0 || from === log.length - 1 || last.keys !== (await keyFingerprint(res))) throw otherAccount(email);
  }

  /**
   * The account's own statements, as the login answered them: each must verify over what this
   * client knows of itself. One that is missing (an account made before statements) is signed
   * here, to be sent once the login is taken up, so that others can check this account's id,
   * email and keys from then on.
   */
  private async checkOwnStatements(
    account: Account,
    keys: AccountKeys,
    res: LoginAnswer,
  ): Promise<{ keyStatement?: SignedStatement; kdfStatement?: SignedStatement } | undefined> {
    const key: KeyStatement = { userId: account.userId, email: account.email, keys: await keyFingerprint(account), version: 0 };
    const kdf: KdfStatement = { userId: account.userId, email: account.email, kdf: account.kdf, version: 0 };
    const upgrade: { keyStatement?: SignedStatement; kdfStatement?: SignedStatement } = {};
    if (res.keyStatement) {
      const bytes = keyStatementBytes({ ...key, version: res.keyStatement.version });
      if (!(await statementVerifies(bytes, account.signingPublicKey, res.keyStatement.signature)))
        throw new SecurityError("IDENTITY_MISMATCH", "the server holds a key statement for your account that you did not sign");
    } else {
      const bytes = keyStatementBytes({ ...key, version: STATEMENT_VERSION });
      upgrade.keyStatement = { version: STATEMENT_VERSION, signature: await signStatement(bytes, keys.signingPrivateKey) };
    }
    if (res.kdfStatement) {
      const bytes = kdfStatementBytes({ ...kdf, version: res.kdfStatement.version });
      if (!(await statementVerifies(bytes, account.signingPublicKey, res.kdfStatement.signature)))
        throw new SecurityError("KDF_CHANGED", "the server holds a KDF statement for your account that you did not sign");
    } else {
      const bytes = kdfStatementBytes({ ...kdf, version: STATEMENT_VERSION });
      upgrade.kdfStatement = { version: STATEMENT_VERSION, signature: await signStatement(bytes, keys.signingPrivateKey) };
    }
    return upgrade.keyStatement || upgrade.kdfStatement ? upgrade : undefined;
  }

  /**
   * A passkey sign-in's answer taken up with the stretched key its unlock opened (or the password
   * derived): the parameters checked as a login checks prelogin's (the ones this device remembers,
   * or a newer statement the account signed), then everything `takeUp` checks.
   */
  async takeUpPasskey(email: string, res: LoginAnswer, stretchedKey: Bytes): Promise<Account> {
    await this.checkPasskeyKdf(email, res);
    const account = await this.takeUp(normalizeEmail(email), res, stretchedKey, res.kdf);
    await this.settleOrgLog();
    return account;
  }

  /** A passkey sign-in's KDF parameters against the ones this device remembers for the account (as `login` checks prelogin's). */
  checkPasskeyKdf(email: string, res: LoginAnswer & { kdfStatement?: SignedStatement }): Promise<void> {
    return this.checkRemembered(normalizeEmail(email), res.kdf, res.kdfStatement, res.keyLog);
  }

  /** Opens the private keys of a resumed login with the password; its KDF parameters are checked as login checks them. */
  async unlock(password: string): Promise<void> {
    const { email, kdf } = this.core.account;
    await this.checkRemembered(email, kdf, undefined);
    const { stretchedKey } = await deriveAccountSecrets(password, kdf, this.core.derive);
    await this.unlockWithStretchedKey(stretchedKey);
  }

  /**
   * Opens the private keys with an already derived stretched key (a CLI session), checks they
   * match the public keys the server holds for this account, and pins them.
   */
  async unlockWithStretchedKey(stretchedKey: Bytes): Promise<void> {
    const keys = await openAccountKeys(stretchedKey, this.core.account);
    await this.trust.checkOwnPin({ publicKey: toBase64(keys.publicKeyDer), signingPublicKey: toBase64(keys.signingPublicKeyRaw) });
    this.core.keys = keys;
  }

  /** The stretched key of an unlocked client, for a caller that seals it into a session. */
  exportStretchedKey(): Bytes {
    return this.core.requireKeys().stretchedKey.slice();
  }

  lock(): void {
    this.core.keys = undefined;
    this.core.vaultKeys.clear();
  }

  async logout(): Promise<void> {
    const refreshToken = this.core.http.currentTokens?.refreshToken;
    try {
      if (refreshToken) await this.core.http.request("POST", "/auth/logout", { body: { refreshToken } });
    } finally {
      await this.core.http.setTokens(undefined);
      this.lock();
    }
  }

  me(): Promise<{ userId: string; email: string; orgId: string; role: OrgRole; createdAt: string; accountVersion: number }> {
    return this.core.http.request("GET", "/users/me");
  }

  /**
   * The account's live sessions, the most recently used first. What the server says of them
   * (device names, addresses, times) is what it recorded at each login and use: shown as its
   * account, never acted on. Ending one acts on its id alone.
   */
  async sessions(): Promise<SessionInfo[]> {
    return (await this.core.http.request<{ sessions: SessionInfo[] }>("GET", "/users/me/sessions")).sessions;
  }

  /** Ends one session: its refresh token at once, its access tokens within the server's SESSION_CHECK_INTERVAL. */
  async endSession(sessionId: string): Promise<void> {
    await this.core.http.request("DELETE", `/users/me/sessions/${encodeURIComponent(sessionId)}`);
  }

  /** Ends every session but this one; answers how many ended. */
  async endOtherSessions(): Promise<number> {
    return (await this.core.http.request<{ ended: number }>("DELETE", "/users/me/sessions")).ended;
  }
}

const otherAccount = (email: string) =>
  new SecurityError("IDENTITY_MISMATCH", `the server answers another account for ${email} than the one this device knows`);

function describeKdf(kdf: KdfParams): string {
  const salt = (() => {
    try {
      return `salt ${toBase64(fromBase64(kdf.salt)).slice(0, 8)}…`;
    } catch {
      return "an unreadable salt";
    }
  })();
  return kdf.algorithm === "argon2id"
    ? `Argon2id, ${kdf.iterations} passes over ${kdf.memoryKiB} KiB, ${salt}`
    : `PBKDF2-SHA256, ${kdf.iterations} iterations, ${salt}`;
}
