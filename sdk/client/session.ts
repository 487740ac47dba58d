/** Registering, logging in and out, unlocking and locking: the account's keys in this session. */
import { toBase64, type Bytes } from "../encoding";
import { normalizeEmail } from "../email";
import { WeakPasswordError } from "../errors";
import type { Tokens } from "../http";
import { bundleFingerprint, createAccountKeys, deriveAccountSecrets, newKdfParams, openAccountKeys, type KdfChoice } from "../keys";
import { checkMasterPassword, emailWords } from "../password-strength";
import type { KdfParams } from "../primitives";
import type { ClientCore } from "./core";
import type { Trust } from "./trust";
import type { Account, OrgRole } from "./types";

export class Session {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
  ) {}

  /**
   * Refuses a weak master password (`checkMasterPassword`: `WeakPasswordError`), then generates the account's keys, registers them (with an invite token, or as the first user /
   * in open registration) and logs in. The password never leaves this function.
   */
  async register(opts: {
    email: string;
    password: string;
    inviteToken?: string;
    orgName?: string;
    kdf?: KdfChoice;
    rsaBits?: number;
  }): Promise<Account> {
    const verdict = await checkMasterPassword(opts.password, emailWords(opts.email));
    if (!verdict.ok) throw new WeakPasswordError(verdict.reasons, verdict.suggestions);
    const { registration, keys } = await createAccountKeys(opts.password, {
      kdf: opts.kdf && newKdfParams(opts.kdf),
      rsaBits: opts.rsaBits,
      derive: this.core.derive,
    });
    await this.core.http.request("POST", "/auth/register", {
      auth: false,
      body: { email: opts.email, ...registration, inviteToken: opts.inviteToken, orgName: opts.orgName },
    });
    return this.finishLogin(opts.email, registration.authHash, keys.stretchedKey);
  }

  /** Prelogin (for the KDF parameters), derive, log in, open the private keys. */
  async login(email: string, password: string): Promise<Account> {
    const { kdf } = await this.core.http.request<{ kdf: KdfParams }>("GET", "/auth/prelogin", { auth: false, query: { email } });
    const { authHash, stretchedKey } = await deriveAccountSecrets(password, kdf, this.core.derive);
    return this.finishLogin(email, toBase64(authHash), stretchedKey);
  }

  private async finishLogin(email: string, authHash: string, stretchedKey: Bytes): Promise<Account> {
    const res = await this.core.http.request<Account & Tokens>("POST", "/auth/login", { auth: false, body: { email, authHash } });
    this.core.accountInfo = {
      userId: res.userId,
      orgId: res.orgId,
      role: res.role,
      email: normalizeEmail(email),
      kdf: res.kdf,
      publicKey: res.publicKey,
      signingPublicKey: res.signingPublicKey,
      encryptedPrivateKey: res.encryptedPrivateKey,
      encryptedSigningPrivateKey: res.encryptedSigningPrivateKey,
    };
    await this.core.http.setTokens({ accessToken: res.accessToken, refreshToken: res.refreshToken });
    await this.unlockWithStretchedKey(stretchedKey);
    return this.core.accountInfo;
  }

  /** Opens the private keys of a resumed login with the password. */
  async unlock(password: string): Promise<void> {
    const { stretchedKey } = await deriveAccountSecrets(password, this.core.account.kdf, this.core.derive);
    await this.unlockWithStretchedKey(stretchedKey);
  }

  /**
   * Opens the private keys with an already derived stretched key (a CLI session), checks they
   * match the public keys the server holds for this account, and pins them.
   */
  async unlockWithStretchedKey(stretchedKey: Bytes): Promise<void> {
    const { account } = this.core;
    const keys = await openAccountKeys(stretchedKey, account);
    const own = { userId: account.userId, publicKey: account.publicKey, signingPublicKey: account.signingPublicKey };
    await this.trust.checkPin(own.userId, await bundleFingerprint(own));
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

  me(): Promise<{ userId: string; email: string; orgId: string; role: OrgRole; createdAt: string }> {
    return this.core.http.request("GET", "/users/me");
  }
}
