/** Health and the API document, sign-up and sign-in, the caller's account, second factors and account recovery. */
import { MAX_PERSONAL_VAULTS } from "../../domain/accounts/password-change";
import { MAX_ROTATION_VAULTS } from "../../domain/accounts/key-rotation";
import { MAX_LINK_MEMBERS } from "../../../protocol/formats/roster-format";
import { MAX_ENROLMENT_VERSION } from "../../../protocol/formats/recovery";
import * as p from "../params";
import { ok, created, noContent, type RouteDef } from "./route-def";

const kdfParams = {
  type: "object",
  strict: "remove",
  props: {
    algorithm: { type: "enum", values: ["argon2id", "pbkdf2-sha256"] },
    salt: p.base64(1024),
    iterations: { ...p.positiveInteger, max: 100_000_000 },
    memoryKiB: { ...p.optionalPositiveInteger, max: 64 * 1024 * 1024 },
    parallelism: { ...p.optionalPositiveInteger, max: 1024 },
  },
};

/**
 * The master password's proof a factor change carries (lib/domain/accounts/second-factors.ts
 * `decidePasswordProof`): `currentAuthHash`, as the password change names it, or `authHash`, as
 * earlier clients send it. Optional here so that its absence is the named `passwordProofRequired`.
 */
export const passwordProof = {
  currentAuthHash: { ...p.authHash, optional: true },
  authHash: { ...p.authHash, optional: true },
};

/** A vault's key wrapped again for the caller (a password change, a key rotation), with its roster link. */
const ownWrapOfVault = {
  vaultId: p.uuid,
  keyVersion: p.positiveInteger,
  encryptedVaultKey: p.wrappedKey,
  wrapSignature: p.signature,
  rosterLink: p.rosterLink,
};

export const ACCOUNT_ROUTES = [
  { method: "GET", path: "/health", action: "api.health", public: true, summary: "Whether the service can serve", reply: ok("Health") },
  {
    method: "GET",
    path: "/openapi.json",
    action: "api.openapi",
    public: true,
    summary: "This document",
    reply: ok("OpenApiDocument"),
  },

  {
    method: "GET",
    path: "/auth/prelogin",
    action: "auth.prelogin",
    public: true,
    summary: "The key-derivation parameters of an email (and its key log, to a device that names keys it had)",
    params: { ...p.STRICT, email: p.email, knownSigningKey: { ...p.signingPublicKeyText, optional: true } },
    reply: ok("Prelogin"),
  },
  {
    method: "GET",
    path: "/auth/registration",
    action: "auth.registration",
    public: true,
    summary: "Whether registering needs an invite, and whether the server still has no account (a first page then leads with making one)",
    params: { ...p.STRICT },
    reply: ok("RegistrationOffer"),
  },
  {
    method: "POST",
    path: "/auth/register",
    action: "auth.register",
    public: true,
    summary: "Register a user with their key bundle",
    params: {
      ...p.STRICT,
      email: p.email,
      authHash: p.authHash,
      kdf: kdfParams,
      publicKey: p.base64(4096),
      signingPublicKey: p.base64(64),
      publicKeySignature: p.base64(128),
      encryptedPrivateKey: p.base64(16 * 1024),
      encryptedSigningPrivateKey: p.base64(16 * 1024),
      inviteToken: { ...p.opaqueToken, optional: true },
      orgName: { ...p.name, optional: true },
      keyStatement: p.optionalSignedStatement,
      kdfStatement: p.optionalSignedStatement,
      inviteBinding: { ...p.base64(32), optional: true },
    },
    reply: created("Registered"),
  },
  {
    method: "POST",
    path: "/auth/login",
    action: "auth.login",
    public: true,
    summary: "Log in: tokens and the encrypted key bundle",
    params: { ...p.STRICT, email: p.email, authHash: p.authHash, deviceName: p.deviceName, deviceToken: p.deviceToken },
    reply: ok("LoginAnswer"),
  },
  {
    method: "POST",
    path: "/auth/login/second-factor",
    action: "auth.secondStep",
    public: true,
    summary: "A login's second step: a TOTP code, a recovery code or a security key's answer (rememberDevice: a deviceToken too)",
    params: {
      ...p.STRICT,
      stepToken: { type: "string", min: 1, max: 4096 },
      totpCode: { type: "string", optional: true, max: 16 },
      recoveryCode: { type: "string", optional: true, max: 64 },
      webauthn: p.webauthnAnswer,
      deviceName: p.deviceName,
      rememberDevice: { type: "boolean", optional: true },
    },
    reply: ok("Login"),
  },
  {
    method: "POST",
    path: "/auth/refresh",
    action: "auth.refresh",
    public: true,
    summary: "A new token pair for a refresh token",
    params: { ...p.STRICT, refreshToken: p.opaqueToken },
    reply: ok("TokenPair"),
  },
  {
    method: "POST",
    path: "/auth/logout",
    action: "auth.logout",
    enrolOnly: true,
    summary: "Revoke a login",
    params: { ...p.STRICT, refreshToken: p.opaqueToken },
    reply: noContent,
  },

  { method: "GET", path: "/users/me", action: "users.me", enrolOnly: true, summary: "The caller's profile", reply: ok("Me") },
  {
    method: "POST",
    path: "/users/me/statements",
    action: "users.statements",
    summary: "Sign the caller's key and KDF statements (an account made before them)",
    params: { ...p.STRICT, keyStatement: p.optionalSignedStatement, kdfStatement: p.optionalSignedStatement },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/users/me/password",
    action: "users.changePassword",
    summary: "Change the master password: new KDF, auth hash, private keys and a new wrap of every personal vault, at once",
    params: {
      ...p.STRICT,
      // Absent only in the session an account recovery began (services/recovery.service.ts): its device knows no old password.
      currentAuthHash: { ...p.authHash, optional: true },
      authHash: p.authHash,
      kdf: kdfParams,
      encryptedPrivateKey: p.base64(16 * 1024),
      encryptedSigningPrivateKey: p.base64(16 * 1024),
      kdfStatement: p.signedStatement,
      accountVersion: p.positiveInteger,
      passkeys: p.passkeyRewraps,
      vaults: {
        type: "array",
        max: MAX_PERSONAL_VAULTS,
        items: {
          type: "object",
          strict: "remove",
          props: ownWrapOfVault,
        },
      },
    },
    reply: ok("PasswordChanged"),
  },
  {
    method: "POST",
    path: "/users/me/keys",
    action: "users.rotateKeys",
    summary:
      "Rotate the caller's keys: the next key-log entry (signed by the old key and the new), sealed private keys, statements, and every vault's key wrapped to the new key, at once",
    params: {
      ...p.STRICT,
      accountVersion: p.positiveInteger,
      keyLogEntry: p.keyLogEntry,
      encryptedPrivateKey: p.base64(16 * 1024),
      encryptedSigningPrivateKey: p.base64(16 * 1024),
      keyStatement: p.signedStatement,
      kdfStatement: p.signedStatement,
      passkeys: p.passkeyRewraps,
      vaults: {
        type: "array",
        max: MAX_ROTATION_VAULTS,
        items: {
          type: "object",
          strict: "remove",
          props: {
            ...ownWrapOfVault,
            resigned: {
              type: "array",
              max: MAX_LINK_MEMBERS,
              items: { type: "object", strict: "remove", props: { userId: p.uuid, wrapSignature: p.signature } },
            },
          },
        },
      },
    },
    reply: ok("KeysRotated"),
  },
  {
    method: "GET",
    path: "/users/:userId/key-log",
    action: "users.keyLog",
    summary: "A user's key log: every key bundle they had, oldest first, each step signed by the key before it",
    params: { userId: p.pathId },
    reply: ok("KeyLog"),
  },
  { method: "GET", path: "/users/me/sessions", action: "auth.sessions", summary: "The caller's live sessions", reply: ok("SessionList") },
  {
    method: "DELETE",
    path: "/users/me/sessions",
    action: "auth.endOtherSessions",
    summary: "End every session of the caller but the current one",
    reply: ok("SessionsEnded"),
  },
  {
    method: "DELETE",
    path: "/users/me/sessions/:sessionId",
    action: "auth.endSession",
    summary: "End one of the caller's sessions (its refresh token at once, its access tokens within SESSION_CHECK_INTERVAL)",
    params: { sessionId: p.pathId },
    reply: noContent,
  },
  // ---- Second factors (services/factors.service.ts) ----
  {
    method: "GET",
    path: "/users/me/factors",
    action: "factors.list",
    enrolOnly: true,
    summary: "The caller's second factors, how many recovery codes are left, and whether the organization requires one",
    reply: ok("SecondFactors"),
  },
  {
    method: "POST",
    path: "/users/me/factors/totp/setup",
    action: "factors.totpSetup",
    enrolOnly: true,
    summary: "A new authenticator-app secret to scan, and the token that confirms it",
    reply: ok("TotpSetup"),
  },
  {
    method: "POST",
    path: "/users/me/factors/totp",
    action: "factors.totpEnrol",
    enrolOnly: true,
    summary:
      "Enrol the authenticator app with a code it shows and the master password (the first factor comes with recovery codes; ends the account's other sessions)",
    params: {
      ...p.STRICT,
      name: { type: "string", max: 256 },
      setupToken: { type: "string", min: 1, max: 4096 },
      code: { type: "string", max: 16 },
      ...passwordProof,
    },
    reply: created("FactorEnrolled"),
  },
  {
    method: "POST",
    path: "/users/me/factors/webauthn/options",
    action: "factors.webauthnOptions",
    enrolOnly: true,
    summary: "A WebAuthn registration challenge for a new security key or passkey",
    reply: ok("WebauthnSetup"),
  },
  {
    method: "POST",
    path: "/users/me/factors/webauthn",
    action: "factors.webauthnEnrol",
    enrolOnly: true,
    summary:
      "Enrol a security key or passkey with its answer to the challenge (checked before anything is stored) and the master password; ends the account's other sessions",
    params: {
      ...p.STRICT,
      name: { type: "string", max: 256 },
      setupToken: { type: "string", min: 1, max: 4096 },
      response: p.webauthnRegistration,
      ...passwordProof,
    },
    reply: created("FactorEnrolled"),
  },
  {
    method: "DELETE",
    path: "/users/me/factors/:factorId",
    action: "factors.remove",
    summary: "Remove a second factor (with the master password; ends the account's other sessions)",
    params: { ...p.STRICT, factorId: p.pathId, ...passwordProof },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/users/me/factors/recovery-codes",
    action: "factors.recoveryCodes",
    summary: "New recovery codes, replacing the old ones (with the master password; ends the account's other sessions); shown once",
    params: { ...p.STRICT, ...passwordProof },
    reply: created("RecoveryCodes"),
  },
  // ---- Account recovery (services/recovery.service.ts) ----
  {
    method: "PUT",
    path: "/users/me/recovery",
    action: "recovery.enrol",
    summary: "Enrol in k-of-n account recovery: shares wrapped to trustees, the sealed copy, all signed (replaces an earlier enrolment)",
    params: {
      ...p.STRICT,
      enrolmentId: p.uuid,
      threshold: { type: "number", integer: true, min: 2, max: 10 },
      // The versioned form (protocol/formats/recovery.ts): all three, or none (an earlier client's unversioned enrolment).
      version: { type: "number", integer: true, min: 1, max: MAX_ENROLMENT_VERSION, optional: true },
      keys: { type: "string", pattern: /^[0-9a-f]{64}$/, optional: true },
      kdfVersion: { type: "number", integer: true, min: 1, optional: true },
      copy: p.base64(256),
      signature: p.signature,
      shares: {
        type: "array",
        min: 2,
        max: 10,
        items: {
          type: "object",
          strict: "remove",
          props: { trusteeId: p.uuid, encryptedShare: p.wrappedKey, trusteeKeys: { type: "string", pattern: /^[0-9a-f]{64}$/ } },
        },
      },
    },
    reply: ok("RecoveryEnrolment"),
  },
  {
    method: "GET",
    path: "/users/me/recovery",
    action: "recovery.get",
    summary: "The caller's recovery enrolment",
    reply: ok("RecoveryEnrolment"),
  },
  { method: "DELETE", path: "/users/me/recovery", action: "recovery.unenrol", summary: "Leave account recovery", reply: noContent },
  {
    method: "GET",
    path: "/users/me/recovery/requests",
    action: "recovery.myRequests",
    summary: "Recovery requests for the caller's account (a pending one the caller did not make is cancelled here)",
    reply: ok("RecoveryRequestList"),
  },
  {
    method: "DELETE",
    path: "/users/me/recovery/requests/:requestId",
    action: "recovery.cancel",
    summary: "Cancel a pending recovery request for the caller's account",
    params: { requestId: p.pathId },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/recovery/requests",
    action: "recovery.request",
    public: true,
    summary:
      "Ask to recover an account from a new device, with a one-time key (the same answer, and the same work, for any address); `binding`, a secret the device keeps, lets a later request of the same device replace this one, and no other",
    params: {
      ...p.STRICT,
      email: p.email,
      publicKey: p.base64(4096),
      // Optional (earlier clients send none): at least 256 bits, as 43 or more URL-safe characters.
      binding: { type: "string", min: 43, max: 512, optional: true },
    },
    reply: created("RecoveryRequestCreated"),
  },
  {
    method: "POST",
    path: "/recovery/requests/:requestId/state",
    action: "recovery.state",
    public: true,
    summary: "A request's approvals, and once k trustees approved the sealed copy and keys (with the request's secret)",
    params: { ...p.STRICT, requestId: p.pathId, requestToken: p.opaqueToken },
    reply: ok("RecoveryState"),
  },
  {
    method: "POST",
    path: "/recovery/requests/:requestId/session",
    action: "recovery.session",
    public: true,
    summary: "Sign in as the recovered account (k approvals, and a signature by its recovered key); every other session ends",
    params: { ...p.STRICT, requestId: p.pathId, requestToken: p.opaqueToken, signature: p.signature, deviceName: p.deviceName },
    reply: ok("Login"),
  },
  {
    method: "GET",
    path: "/recovery/tasks",
    action: "recovery.tasks",
    summary: "Pending recovery requests the caller is a trustee of, with the user's signed enrolment",
    reply: ok("RecoveryApprovalTasks"),
  },
  {
    method: "POST",
    path: "/recovery/requests/:requestId/approvals",
    action: "recovery.approve",
    summary: "Approve a recovery: the caller's share re-wrapped to the request's one-time key, signed",
    params: { ...p.STRICT, requestId: p.pathId, encryptedShare: p.wrappedKey, signature: p.signature },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/users/:userId/keys",
    action: "users.keys",
    summary: "A user's public keys",
    params: { userId: p.pathId },
    reply: ok("UserKeys"),
  },
] as const satisfies readonly RouteDef[];
