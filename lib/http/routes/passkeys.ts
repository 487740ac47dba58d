/**
 * Passkeys that sign in to the account, and with the PRF unlock it (lib/auth/passkey-logins.ts,
 * lib/domain/accounts/passkey-logins.ts; the wraps: docs/protocol/passkey-unlock.md).
 */
import * as p from "../params";
import { passwordProof } from "./accounts";
import { created, noContent, ok, type RouteDef } from "./route-def";

export const PASSKEY_ROUTES = [
  {
    method: "POST",
    path: "/auth/passkey/challenge",
    action: "auth.passkeyChallenge",
    public: true,
    summary: "A challenge to sign in with a passkey: WebAuthn request options naming no credential, and the token that seals them",
    reply: ok("PasskeyChallenge"),
  },
  {
    method: "POST",
    path: "/auth/passkey",
    action: "auth.passkeySignIn",
    public: true,
    summary:
      "Sign in with a passkey's answer to the challenge: tokens, the encrypted key bundle, the account's email, and the passkey's unlock wraps when it keeps them",
    params: {
      ...p.STRICT,
      challengeToken: { type: "string", min: 1, max: 4096 },
      response: { ...p.webauthnAnswer, optional: false },
      deviceName: p.deviceName,
    },
    reply: ok("PasskeyLogin"),
  },
  {
    method: "GET",
    path: "/users/me/passkeys",
    action: "factors.passkeys",
    summary: "The caller's sign-in passkeys (which keep an unlock, with its kept wrap) and the organization's passkey policy",
    reply: ok("PasskeyLogins"),
  },
  {
    method: "POST",
    path: "/users/me/passkeys/options",
    action: "factors.passkeyOptions",
    summary: "A WebAuthn registration challenge for a passkey that signs in (discoverable, user verification required)",
    reply: ok("WebauthnSetup"),
  },
  {
    method: "POST",
    path: "/users/me/passkeys",
    action: "factors.addPasskey",
    summary:
      "Register a passkey that signs in, with its answer to the challenge, the master password, and the unlock wraps the client made from its PRF answer",
    params: {
      ...p.STRICT,
      name: { type: "string", max: 256 },
      setupToken: { type: "string", min: 1, max: 4096 },
      response: p.webauthnRegistration,
      unlock: {
        type: "object",
        optional: true,
        strict: "remove",
        props: {
          prfWrappedKey: p.unlockWrap,
          wrappedStretchedKey: p.unlockWrap,
          keptWrappedKey: p.unlockWrap,
          accountVersion: p.positiveInteger,
        },
      },
      ...passwordProof,
    },
    reply: created("PasskeyAdded"),
  },
  {
    method: "DELETE",
    path: "/users/me/passkeys/:credentialId",
    action: "factors.removePasskey",
    summary: "Remove a sign-in passkey and its unlock",
    params: { ...p.STRICT, credentialId: p.pathId },
    reply: noContent,
  },
] as const satisfies readonly RouteDef[];
