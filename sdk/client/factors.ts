/**
 * Second factors: the second step of a login, and enrolling and managing an account's
 * factors (an authenticator app, security keys and passkeys, recovery codes), and reading the
 * organization's policies. What a factor protects is the download of ciphertext with a stolen
 * password; it does not make a dishonest server honest (README "Second factors").
 *
 * The server's WebAuthn options go to the platform's WebAuthn (the browser checks the relying party
 * against the page's origin); nothing here encrypts to or derives from what the server sends.
 */
import { deriveAccountSecrets } from "../../protocol/crypto/keys";
import { ApiError, SecondFactorRequiredError } from "../errors";
import { toBase64 } from "../../protocol/encoding";
import type { ClientCore } from "./core";
import type { LoginAnswer, LoginStep } from "./login";
import type { PasskeySignInPolicy } from "./passkey-logins";

export type { FactorMethod, SecondFactorAnswer, SecondFactorChallenge, SecondFactorPrompt } from "./login";

/** Answers a wrong code may get before the login starts over (the server takes five per step). */
const STEP_ANSWERS = 3;

/** The second step of a login: asks the client's prompt, up to three times while the answer is wrong. */
export async function secondStep(core: ClientCore, step: LoginStep): Promise<LoginAnswer> {
  const prompt = core.secondFactor;
  if (!prompt) throw new SecondFactorRequiredError(step.methods);
  for (let attempt = 1; ; attempt++) {
    const answer = await prompt({
      methods: step.methods,
      ...(step.webauthn && { webauthn: step.webauthn }),
      ...(attempt > 1 && { retry: true }),
    });
    try {
      return await core.http.request<LoginAnswer>("POST", "/auth/login/second-factor", {
        auth: false,
        body: { stepToken: step.stepToken, ...answer, deviceName: core.deviceName },
      });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401 || attempt >= STEP_ANSWERS) throw err;
    }
  }
}

export interface FactorInfo {
  factorId: string;
  kind: "totp" | "webauthn";
  name: string;
  createdAt: string;
  lastUsedAt?: string;
}

export interface Policies {
  requireSecondFactor: boolean;
  /** Signing in with a passkey (passkey-logins.ts): allowed, forbidden, or required of a member who has one. A server without them answers none; a change that leaves it out keeps the current one. */
  passkeySignIn?: PasskeySignInPolicy;
  minKdf?: { argon2idMemoryKiB: number; argon2idIterations: number; pbkdf2Iterations: number };
  inviteMaxLifetime?: string;
  /** Sends forbidden to members (and the links of those made before open nothing). Left out of a change: kept as it is. */
  sendsForbidden?: boolean;
  /** The longest a new send may live ("3d"); null in a change clears it, left out keeps it. */
  sendMaxLifetime?: string;
  recoveryMinThreshold: number;
  client: { minPasswordScore: number; idleLockMinutes?: number };
  /** Which of these the server enforces, and which only clients apply (a modified client need not). */
  enforced: string[];
  clientOnly: string[];
}

/** The policies whose change may shut people out, which a change names to go ahead anyway. */
export type LockOutPolicy = "requireSecondFactor" | "recoveryMinThreshold" | "inviteMaxLifetime";

export class Factors {
  constructor(private readonly core: ClientCore) {}

  list(): Promise<{ factors: FactorInfo[]; recoveryCodesLeft: number; required: boolean }> {
    return this.core.http.request("GET", "/users/me/factors");
  }

  /** A new authenticator-app secret: `uri` for a QR code, `secret` to type in; `confirmTotp` with a code the app shows (within 5 minutes). */
  setupTotp(): Promise<{ secret: string; uri: string; setupToken: string }> {
    return this.core.http.request("POST", "/users/me/factors/totp/setup");
  }

  /**
   * Enrols the app set up with `setupToken`; the first factor comes with recovery codes, shown once.
   * Takes the master password, on every login (one that may only enrol too). Every other session
   * of the account ends; this one, if it could only enrol, has full access from here on.
   */
  async confirmTotp(
    setupToken: string,
    code: string,
    name: string,
    password: string,
  ): Promise<{ factor: FactorInfo; recoveryCodes?: string[] }> {
    const currentAuthHash = await this.authHash(password);
    return this.afterEnrolment(
      await this.core.http.request("POST", "/users/me/factors/totp", {
        body: { name, code: code.replace(/\s/g, ""), setupToken, currentAuthHash },
      }),
    );
  }

  /**
   * A security key or passkey: `create` is the platform's WebAuthn registration (a browser passes
   * @simplewebauthn/browser's startRegistration), given the server's options. Takes the master
   * password, on every login; every other session of the account ends, as with `confirmTotp`.
   */
  async enrolWebauthn(
    name: string,
    create: (options: Record<string, unknown>) => Promise<unknown>,
    password: string,
  ): Promise<{ factor: FactorInfo; recoveryCodes?: string[] }> {
    const currentAuthHash = await this.authHash(password);
    const { options, setupToken } = await this.core.http.request<{ options: Record<string, unknown>; setupToken: string }>(
      "POST",
      "/users/me/factors/webauthn/options",
    );
    const response = await create(options);
    return this.afterEnrolment(
      await this.core.http.request("POST", "/users/me/factors/webauthn", { body: { name, setupToken, response, currentAuthHash } }),
    );
  }

  /** Removes a factor; takes the master password. Every other session of the account ends. */
  async remove(factorId: string, password: string): Promise<void> {
    await this.core.http.request("DELETE", `/users/me/factors/${encodeURIComponent(factorId)}`, {
      body: { currentAuthHash: await this.authHash(password) },
    });
  }

  /**
   * New recovery codes (the old ones stop working); takes the master password, and every other
   * session of the account ends. Shown once: keep them somewhere safe.
   */
  async newRecoveryCodes(password: string): Promise<string[]> {
    const res = await this.core.http.request<{ recoveryCodes: string[] }>("POST", "/users/me/factors/recovery-codes", {
      body: { currentAuthHash: await this.authHash(password) },
    });
    return res.recoveryCodes;
  }

  policies(): Promise<Policies> {
    return this.core.http.request("GET", `/orgs/${encodeURIComponent(this.core.account.orgId)}/policies`);
  }

  /**
   * Sets the organization's policies (owners). A change that would shut people out is refused
   * (409, field: the first policy at fault, the message naming who) unless `confirmLockOut` names
   * each such policy.
   */
  setPolicies(
    policies: Omit<Policies, "enforced" | "clientOnly" | "recoveryMinThreshold" | "client" | "sendMaxLifetime"> &
      Partial<Pick<Policies, "recoveryMinThreshold" | "client">> & { sendMaxLifetime?: string | null; confirmLockOut?: LockOutPolicy[] },
  ): Promise<Policies> {
    return this.core.http.request("PUT", `/orgs/${encodeURIComponent(this.core.account.orgId)}/policies`, { body: policies });
  }

  /**
   * An enrolment makes a session that could only enrol whole: its next access token has full
   * access. Refreshed now, so that the next call has it (on a whole session, a refresh changes nothing).
   */
  private async afterEnrolment<T>(enrolled: T): Promise<T> {
    await this.core.http.refresh();
    return enrolled;
  }

  private async authHash(password: string): Promise<string> {
    return toBase64((await deriveAccountSecrets(password, this.core.account.kdf, this.core.derive)).authHash);
  }
}
