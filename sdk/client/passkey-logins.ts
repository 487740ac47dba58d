/**
 * Passkeys that sign in to the account, and with the WebAuthn PRF extension unlock it without the
 * master password (protocol/formats/passkey-unlock.ts; design: docs/design/passkey-unlock.md).
 *
 * The authenticator is the caller's (`PasskeyAuthenticator`: the browser's `navigator.credentials`
 * in the web vault). What this client asks of it is its own, whatever the server's options say:
 * user verification, a discoverable credential, and the PRF with the one fixed salt. The PRF output
 * never leaves this file: the extension's results are dropped from what is sent.
 *
 * Against a dishonest server: a sign-in answered for another passkey or account is refused
 * (`PASSKEY_MISMATCH`); an authenticator that answered the PRF is never turned into a password
 * prompt because the server withholds the wraps (`PASSKEY_UNLOCK_WITHHELD`); wraps the server made
 * or moved do not open (`PASSKEY_UNLOCK_MISMATCH`); and the account they open is checked as a
 * password login checks it (the KDF this device remembers, the key pins, the statements).
 */
import { fromBase64Url, type Bytes } from "../../protocol/encoding";
import { SecurityError } from "../errors";
import { deriveAccountSecrets } from "../../protocol/crypto/keys";
import {
  newPasskeyUnlock,
  openPasskeyUnlock,
  prfSalt,
  rewrapPasskeyUnlock,
  type PasskeyUnlockWraps,
} from "../../protocol/formats/passkey-unlock";
import type { ClientCore } from "./core";
import type { LoginAnswer } from "./login";
import type { Session } from "./session";
import type { Account } from "./types";

/** What a passkey authenticator is asked: `navigator.credentials.create` / `.get` with these options and the PRF extension. */
export interface PasskeyAuthenticator {
  /**
   * Makes a passkey: the options as WebAuthn's JSON (PublicKeyCredentialCreationOptionsJSON), with
   * `extensions.prf.eval.first` set to `prfSalt`. Answers the registration as JSON and the PRF's
   * first output when the authenticator gave one at creation.
   */
  create(options: Record<string, unknown>, prfSalt: Bytes): Promise<{ response: Record<string, unknown>; prf?: Bytes }>;
  /** Signs with a passkey: the request options as JSON, with the PRF asked likewise. Answers the assertion and the PRF's first output, if any. */
  get(options: Record<string, unknown>, prfSalt: Bytes): Promise<{ response: Record<string, unknown>; prf?: Bytes }>;
}

export interface PasskeyLoginInfo {
  credentialId: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  /** Signing in with it unlocks too (it keeps PRF wraps); otherwise the master password unlocks. */
  unlock: boolean;
}

export type PasskeySignInPolicy = "allowed" | "forbidden" | "required";

/** A passkey sign-in's outcome: unlocked, or signed in and waiting for the master password (a passkey without the PRF). */
export type PasskeySignInResult = { unlocked: true; account: Account } | { unlocked: false; email: string };

interface PasskeyLoginAnswer extends LoginAnswer {
  email: string;
  passkey: { credentialId: string; unlock?: Pick<PasskeyUnlockWraps, "prfWrappedKey" | "wrappedStretchedKey"> };
}

interface ListedPasskey extends PasskeyLoginInfo {
  keptWrappedKey?: string;
}

/** A passkey's unlock made again for a password change or key rotation, as the server takes it. */
export interface PasskeyRewrap {
  credentialId: string;
  wrappedStretchedKey: string;
  keptWrappedKey: string;
}

/** The answer as sent: the extensions' results (the PRF output among them) never are. */
const withoutExtensions = (response: Record<string, unknown>) => ({ ...response, clientExtensionResults: {} });

const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

export class PasskeyLogins {
  /** A sign-in by a passkey without the PRF, waiting for the master password. */
  private pending?: PasskeyLoginAnswer;

  constructor(
    private readonly core: ClientCore,
    private readonly session: Session,
  ) {}

  async list(): Promise<{ passkeys: PasskeyLoginInfo[]; policy: PasskeySignInPolicy }> {
    const { passkeys, policy } = await this.listed();
    return { passkeys: passkeys.map(({ keptWrappedKey: _kept, ...info }) => info), policy };
  }

  private listed(): Promise<{ passkeys: ListedPasskey[]; policy: PasskeySignInPolicy }> {
    return this.core.http.request("GET", "/users/me/passkeys");
  }

  /**
   * Registers a passkey that signs in, with the master password (checked here against the unlocked
   * keys, and by the server). When the authenticator answers the PRF (at creation, or at a second
   * touch if it answers it only at sign-in), the passkey unlocks too: its wraps are made here.
   */
  async add(opts: { name: string; password: string; authenticator: PasskeyAuthenticator }): Promise<PasskeyLoginInfo> {
    const { core } = this;
    const keys = core.requireKeys();
    const account = core.account;
    const proof = await deriveAccountSecrets(opts.password, account.kdf, core.derive);
    const { options, setupToken } = await core.http.request<{ options: Record<string, unknown>; setupToken: string }>(
      "POST",
      "/users/me/passkeys/options",
    );
    const salt = await prfSalt();
    const asked = {
      ...options,
      authenticatorSelection: { ...(options.authenticatorSelection as object), residentKey: "required", userVerification: "required" },
    };
    const made = await opts.authenticator.create(asked, salt);
    const credentialId = String(made.response.id);
    const prf = made.prf ?? (await this.prfAtSignIn(opts.authenticator, options, credentialId, salt));
    const accountVersion = await core.accountVersion();
    const binding = { userId: account.userId, credentialId, accountVersion };
    const unlock = prf && { ...(await newPasskeyUnlock(prf, keys.stretchedKey, binding)), accountVersion };
    const { passkey } = await core.http.request<{ passkey: ListedPasskey }>("POST", "/users/me/passkeys", {
      body: {
        name: opts.name,
        setupToken,
        response: withoutExtensions(made.response),
        currentAuthHash: toBase64(proof.authHash),
        ...(unlock && { unlock }),
      },
    });
    const { keptWrappedKey: _kept, ...info } = passkey;
    return info;
  }

  /** Some authenticators answer the PRF only at sign-in: one more touch, with a challenge of this client's (nothing is sent). */
  private async prfAtSignIn(authenticator: PasskeyAuthenticator, created: Record<string, unknown>, credentialId: string, salt: Bytes) {
    const rp = created.rp as { id?: string } | undefined;
    const challenge = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
    const got = await authenticator
      .get({ challenge, rpId: rp?.id, allowCredentials: [{ id: credentialId, type: "public-key" }], userVerification: "required" }, salt)
      .catch(() => undefined);
    return got?.prf;
  }

  async remove(credentialId: string): Promise<void> {
    await this.core.http.request("DELETE", `/users/me/passkeys/${encodeURIComponent(credentialId)}`);
  }

  /**
   * Removes every passkey that unlocks: after a change made because the old password may be known.
   * Whoever holds it and an old copy of the server's data opens each passkey's kept key, and with it
   * every wrap made from it since; only the authenticator makes a new one (register it again).
   */
  async removeUnlocking(): Promise<number> {
    const { passkeys } = await this.listed();
    const unlocking = passkeys.filter((p) => p.unlock);
    for (const p of unlocking) await this.remove(p.credentialId);
    return unlocking.length;
  }

  /**
   * Signs in with a passkey the authenticator holds for this server. With the PRF, the account is
   * unlocked here; without it, the sign-in waits for the master password (`unlockWithPassword`).
   */
  async signIn(authenticator: PasskeyAuthenticator): Promise<PasskeySignInResult> {
    const { core } = this;
    this.pending = undefined;
    const { options, challengeToken } = await core.http.request<{ options: Record<string, unknown>; challengeToken: string }>(
      "POST",
      "/auth/passkey/challenge",
      { auth: false },
    );
    const { response, prf } = await authenticator.get({ ...options, userVerification: "required" }, await prfSalt());
    const answer = await core.http.request<PasskeyLoginAnswer>("POST", "/auth/passkey", {
      auth: false,
      body: { challengeToken, response: withoutExtensions(response), deviceName: core.deviceName },
    });
    try {
      checkSignedFor(answer, response);
      if (prf) return { unlocked: true, account: await this.unlockWithPrf(answer, prf) };
    } catch (err) {
      await this.endUnused(answer);
      throw err;
    }
    this.pending = answer;
    return { unlocked: false, email: answer.email };
  }

  private async unlockWithPrf(answer: PasskeyLoginAnswer, prf: Bytes): Promise<Account> {
    const unlock = answer.passkey.unlock;
    if (!unlock)
      throw new SecurityError(
        "PASSKEY_UNLOCK_WITHHELD",
        "your passkey can unlock your account, and the server answered without what it unlocks with: nothing was asked of your master password in its place",
      );
    const binding = { userId: answer.userId, credentialId: answer.passkey.credentialId, accountVersion: answer.accountVersion };
    const stretchedKey = await openPasskeyUnlock(prf, unlock, binding);
    return this.session.takeUpPasskey(answer.email, answer, stretchedKey);
  }

  /** A passkey sign-in waiting for the master password, given up: its session ends on the server. */
  async cancel(): Promise<void> {
    const answer = this.pending;
    this.pending = undefined;
    if (answer) await this.endUnused(answer);
  }

  /** A sign-in not taken up (refused here, or given up) ends on the server, or its session would stay open until it expired. Best effort. */
  private async endUnused(answer: PasskeyLoginAnswer): Promise<void> {
    if (typeof answer?.accessToken !== "string" || typeof answer.refreshToken !== "string") return;
    await this.core.http
      .request("POST", "/auth/logout", { auth: false, bearer: answer.accessToken, body: { refreshToken: answer.refreshToken } })
      .catch(() => undefined);
  }

  /** The master password for a passkey sign-in without the PRF: its KDF checked as a login checks it; a wrong one can be tried again. */
  async unlockWithPassword(password: string): Promise<Account> {
    const answer = this.pending;
    if (!answer) throw new Error("no passkey sign-in is waiting for the master password");
    await this.session.checkPasskeyKdf(answer.email, answer);
    const { stretchedKey } = await deriveAccountSecrets(password, answer.kdf, this.core.derive);
    const account = await this.session.takeUpPasskey(answer.email, answer, stretchedKey);
    this.pending = undefined;
    return account;
  }

  /**
   * Each passkey that unlocks, wrapped again for the account state a password change or key
   * rotation makes (`accountVersion`, under `nextStretchedKey`). The passkeys are the server's list;
   * one it leaves out keeps wrapping the old state, which this account's devices refuse (its KDF,
   * its keys), and a kept wrap it made up does not open here.
   */
  async rewraps(nextStretchedKey: Bytes, accountVersion: number): Promise<PasskeyRewrap[]> {
    const { core } = this;
    const { passkeys } = await this.listed();
    const userId = core.account.userId;
    const out: PasskeyRewrap[] = [];
    for (const p of passkeys) {
      if (!p.unlock || p.keptWrappedKey === undefined) continue;
      const binding = { userId, credentialId: p.credentialId, accountVersion };
      const wraps = await rewrapPasskeyUnlock(p.keptWrappedKey, core.requireKeys().stretchedKey, nextStretchedKey, binding);
      out.push({ credentialId: p.credentialId, ...wraps });
    }
    return out;
  }
}

/** The answer is for the passkey the authenticator signed with, and for the account it holds that passkey for. */
function checkSignedFor(answer: PasskeyLoginAnswer, response: Record<string, unknown>): void {
  if (answer.passkey?.credentialId !== response.id)
    throw new SecurityError("PASSKEY_MISMATCH", "the server answered a sign-in for another passkey than the one you used");
  const handle = (response.response as { userHandle?: unknown } | undefined)?.userHandle;
  if (typeof handle === "string" && handle !== "") {
    let holder: string | undefined;
    try {
      holder = utf8Decoder.decode(fromBase64Url(handle));
    } catch {
      holder = undefined;
    }
    if (holder !== answer.userId)
      throw new SecurityError(
        "PASSKEY_MISMATCH",
        `the server signed you in as ${answer.userId}, and your passkey is for ${holder ?? "another account"}`,
      );
  }
}

function toBase64(bytes: Bytes): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function toBase64Url(bytes: Bytes): string {
  return toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
