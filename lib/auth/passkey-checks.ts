/**
 * The WebAuthn checks of sign-in passkeys, by `@simplewebauthn/server`: a discoverable credential
 * with user verification, registered and used at the web vault's relying party. Unlike a second
 * factor's key, a passkey stands for the password and the second step together: user verification
 * is required at both. Nothing here stores anything (the rules: lib/domain/accounts/passkey-logins.ts).
 */
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { PasskeyLogin } from "../domain/accounts/passkey-logins";
import { challenge, registrationOptions, verifyAssertion, verifyRegistration, webauthn, type RelyingParty } from "./factor-checks";

/** A registration's options: a discoverable credential with user verification, none of the account's own passkeys again. */
export const passkeyRegistrationOptions = (
  rp: RelyingParty,
  user: { userId: string; email: string },
  held: readonly Pick<PasskeyLogin, "credentialId" | "transports">[],
) => registrationOptions(rp, user, held, { residentKey: "required", userVerification: "required" });

/** A passkey's registration, verified (challenge, origin, relying party, user verification) before anything is stored; null when it fails. */
export const verifyPasskeyRegistration = (rp: RelyingParty, expectedChallenge: string, response: RegistrationResponseJSON) =>
  verifyRegistration(rp, expectedChallenge, response, { requireUserVerification: true });

/** A sign-in's options: no credential named (the authenticator offers the passkeys it holds for this relying party), user verification required. */
export async function passkeySignInOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return (await webauthn()).generateAuthenticationOptions({
    rpID: rp.rpId,
    challenge: challenge(),
    userVerification: "required",
    timeout: 120_000,
  });
}

/**
 * A sign-in's assertion against the passkey it names, the sealed challenge, the origin and relying
 * party, with user verification: the new counter, or null (a wrong signature, no user verification,
 * another credential, or a counter that went back: a cloned authenticator).
 */
export const verifyPasskeySignIn = (
  rp: RelyingParty,
  expectedChallenge: string,
  response: AuthenticationResponseJSON,
  login: PasskeyLogin,
) => verifyAssertion(rp, expectedChallenge, response, login, { requireUserVerification: true });
