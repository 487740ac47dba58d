/**
 * The cryptographic checks of second factors, by the libraries made for them: TOTP (RFC 6238) by
 * `otpauth`, WebAuthn by `@simplewebauthn/server`. Each answers what the rules in
 * lib/domain/accounts/second-factors.ts decide on; nothing here stores anything.
 */
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";

/**
 * @simplewebauthn/server, loaded at the first WebAuthn operation: it costs about 90 ms and 23 MiB,
 * which a server whose users have no security key should not pay at every start.
 */
export const webauthn = () => import("@simplewebauthn/server");
import { TOTP_DIGITS, TOTP_PERIOD, TOTP_WINDOW, type SecondFactor } from "../domain/accounts/second-factors";

/** What a TOTP secret is sealed for at rest (lib/auth/sealed.ts). */
export const TOTP_SECRET_PURPOSE = "totp-secret";

/** The service's name in authenticator apps and security-key prompts. */
export const ISSUER = "Vault";

/** A new TOTP secret (160 bits, as RFC 4226 recommends), base32, and the otpauth:// address an app scans. */
export function newTotpSecret(accountName: string): { secret: string; uri: string } {
  const totp = new TOTP({ issuer: ISSUER, label: accountName, secret: new Secret({ size: 20 }), digits: TOTP_DIGITS, period: TOTP_PERIOD });
  return { secret: totp.secret.base32, uri: totp.toString() };
}

/** The time step a code matches within ±TOTP_WINDOW steps of `nowMs`, or null. */
export function totpStep(secret: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: TOTP_DIGITS, period: TOTP_PERIOD });
  const delta = totp.validate({ token: code, timestamp: nowMs, window: TOTP_WINDOW });
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PERIOD) + delta;
}

/** Where WebAuthn answers are accepted from: the relying party id, and the origins. */
export interface RelyingParty {
  rpId: string;
  /** Unset: any http://localhost origin (development). */
  origins?: string[];
}

/** The origins an answer may come from: the configured ones, or the answer's own when it is an http://localhost one. */
function expectedOrigins(rp: RelyingParty, clientDataJSON: string): string[] {
  if (rp.origins) return rp.origins;
  try {
    const origin = (JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { origin?: unknown }).origin;
    return typeof origin === "string" && /^http:\/\/localhost(:\d{1,5})?$/.test(origin) ? [origin] : [];
  } catch {
    return [];
  }
}

/** A new WebAuthn challenge: 32 random bytes, base64url. */
export const challenge = () => randomBytes(32).toString("base64url");

/**
 * A registration's options: none of `excluded` again (the account's own keys of that kind), and
 * the authenticator's selection (a second factor's key: preferred; a passkey that signs in: required).
 */
export async function registrationOptions(
  rp: RelyingParty,
  user: { userId: string; email: string },
  excluded: readonly Pick<StoredCredential, "credentialId" | "transports">[],
  authenticatorSelection: { residentKey: "preferred" | "required"; userVerification: "preferred" | "required" } = {
    residentKey: "preferred",
    userVerification: "preferred",
  },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return (await webauthn()).generateRegistrationOptions({
    rpName: ISSUER,
    rpID: rp.rpId,
    userName: user.email,
    userID: Buffer.from(user.userId, "utf8"),
    challenge: challenge(),
    attestationType: "none",
    excludeCredentials: excluded.map((c) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] | undefined })),
    authenticatorSelection,
    timeout: 120_000,
  });
}

/**
 * A registration, verified (its signature over the challenge, origin and relying party; the user
 * verified too, with `requireUserVerification`) before anything is stored; null when it fails.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  expectedChallenge: string,
  response: RegistrationResponseJSON,
  { requireUserVerification = false }: { requireUserVerification?: boolean } = {},
): Promise<{ credentialId: string; publicKey: string; counter: number; transports?: string[] } | null> {
  try {
    const v = await (
      await webauthn()
    ).verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: expectedOrigins(rp, response.response.clientDataJSON),
      expectedRPID: rp.rpId,
      requireUserVerification,
    });
    if (!v.verified || !v.registrationInfo) return null;
    const { credential } = v.registrationInfo;
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString("base64url"),
      counter: credential.counter,
      ...(credential.transports && { transports: credential.transports }),
    };
  } catch {
    return null;
  }
}

export async function authenticationOptions(
  rp: RelyingParty,
  factors: readonly SecondFactor[],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return (await webauthn()).generateAuthenticationOptions({
    rpID: rp.rpId,
    challenge: challenge(),
    allowCredentials: factors
      .filter((f) => f.kind === "webauthn")
      .map((f) => ({ id: f.credentialId!, transports: f.transports as AuthenticatorTransport[] | undefined })),
    userVerification: "preferred",
    timeout: 120_000,
  });
}

/** A stored credential as an assertion is checked against it. */
export interface StoredCredential {
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports?: string[];
}

/**
 * A sign-in's answer from a stored credential, verified against the challenge, origin, relying
 * party and the credential's public key and counter (and the user verified, with
 * `requireUserVerification`): the new counter, or null (a wrong signature, another credential, or
 * a counter that went back: a cloned key).
 */
export async function verifyAssertion(
  rp: RelyingParty,
  expectedChallenge: string,
  response: AuthenticationResponseJSON,
  stored: StoredCredential,
  { requireUserVerification = false }: { requireUserVerification?: boolean } = {},
): Promise<number | null> {
  if (response.id !== stored.credentialId) return null;
  try {
    const v = await (
      await webauthn()
    ).verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: expectedOrigins(rp, response.response.clientDataJSON),
      expectedRPID: rp.rpId,
      credential: {
        id: stored.credentialId,
        publicKey: new Uint8Array(Buffer.from(stored.publicKey, "base64url")),
        counter: stored.counter,
        transports: stored.transports as AuthenticatorTransport[] | undefined,
      },
      requireUserVerification,
    });
    return v.verified ? v.authenticationInfo.newCounter : null;
  } catch {
    return null;
  }
}

/** A second step's answer from one of the account's security keys (`verifyAssertion`, user verification not required). */
export async function verifyAuthentication(
  rp: RelyingParty,
  expectedChallenge: string,
  response: AuthenticationResponseJSON,
  factor: SecondFactor,
): Promise<number | null> {
  if (factor.kind !== "webauthn") return null;
  const stored = {
    credentialId: factor.credentialId!,
    publicKey: factor.publicKey!,
    counter: factor.counter ?? 0,
    transports: factor.transports,
  };
  return verifyAssertion(rp, expectedChallenge, response, stored);
}
