/**
 * The route table: every route the gateway serves, relative to /api/v1, exactly the routes of the
 * interface and the contract and nothing else. One declaration per route gives
 *   - the gateway's alias (mixins/gateway.mixin.ts),
 *   - the parameters the action validates (`paramsOf`, used by each service),
 *   - the OpenAPI 3.1 document served at /api/v1/openapi.json (lib/http/openapi.ts), with the
 *     success answer's status and body (`reply`); every error answers the `Error` body.
 *
 * Path parameters are the `:name`s of `path`; a GET's other parameters come in the query string,
 * any other method's in the JSON body. `public` routes need no access token.
 */
import type { ActionParams } from "moleculer";
import { DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE } from "../domain/audit";
import { DEFAULT_ITEM_PAGE, MAX_ITEM_PAGE } from "../domain/item-pages";
import { DEFAULT_ITEM_LOG_PAGE, MAX_ITEM_LOG_PAGE } from "../domain/item-log";
import type { SchemaName } from "./api-schemas";
import * as p from "./params";
import { MAX_PERSONAL_VAULTS } from "../domain/password-change";
import { MAX_ROTATION_VAULTS } from "../domain/key-rotation";
import { MAX_LINK_MEMBERS } from "../../protocol/formats/roster-format";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** fastest-validator rules by parameter name, with `$$strict` where unknown fields are dropped. */
export type ParamSchema = Readonly<Record<string, unknown>>;

export interface RouteDef {
  method: Method;
  path: string;
  action: string;
  /** One line for the OpenAPI document. */
  summary: string;
  public?: boolean;
  /** Reached by a login that may only enrol a second factor (its organization requires one and it has none). */
  enrolOnly?: boolean;
  /**
   * The JSON body is streamed to the action, which reads it (up to the rekey body limit) and checks
   * it against `params` itself: it can be far larger than the 1 MiB of other routes and than one
   * NATS message.
   */
  streamBody?: boolean;
  params?: ParamSchema;
  /** The success answer: its status, and its body's schema (none for 204). */
  reply: { status: 200 | 201 | 204; body?: SchemaName };
}

export const API_PREFIX = "/api/v1";

const ok = (body: SchemaName) => ({ status: 200, body }) as const;
const created = (body: SchemaName) => ({ status: 201, body }) as const;
const noContent = { status: 204 } as const;

/** A vault's key wrapped again for the caller (a password change, a key rotation), with its roster link. */
const ownWrapOfVault = {
  vaultId: p.uuid,
  keyVersion: p.positiveInteger,
  encryptedVaultKey: p.wrappedKey,
  wrapSignature: p.signature,
  rosterLink: p.rosterLink,
};

const rekeyBody = {
  newKeys: {
    type: "array",
    min: 1,
    items: { type: "object", strict: "remove", props: { userId: p.uuid, encryptedVaultKey: p.wrappedKey, wrapSignature: p.signature } },
  },
  items: {
    type: "array",
    items: {
      type: "object",
      strict: "remove",
      props: {
        itemId: p.uuid,
        encryptedData: p.encryptedData,
        encryptedName: p.encryptedName,
        revision: p.optionalPositiveInteger,
      },
    },
  },
  keyVersion: p.optionalPositiveInteger,
  rosterLink: p.rosterLink,
  itemLink: p.itemLink,
  accountVersion: p.optionalPositiveInteger,
  // Kept revisions and trashed items re-encrypted (lib/domain/item-history.ts); what is left out is dropped.
  history: {
    type: "array",
    optional: true,
    items: {
      type: "object",
      strict: "remove",
      props: { itemId: p.uuid, revision: p.positiveInteger, encryptedData: p.encryptedData, encryptedName: p.encryptedName },
    },
  },
  trash: {
    type: "array",
    optional: true,
    items: { type: "object", strict: "remove", props: { itemId: p.uuid, encryptedData: p.encryptedData, encryptedName: p.encryptedName } },
  },
};

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

const itemContent = { encryptedData: p.encryptedData, encryptedName: p.encryptedName, keyVersion: p.optionalPositiveInteger };

const ROUTE_TABLE = [
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
    params: { ...p.STRICT, email: p.email, authHash: p.authHash, deviceName: p.deviceName },
    reply: ok("LoginAnswer"),
  },
  {
    method: "POST",
    path: "/auth/login/second-factor",
    action: "auth.secondStep",
    public: true,
    summary: "A login's second step: a TOTP code, a recovery code or a security key's answer, with the first step's token",
    params: {
      ...p.STRICT,
      stepToken: { type: "string", min: 1, max: 4096 },
      totpCode: { type: "string", optional: true, max: 16 },
      recoveryCode: { type: "string", optional: true, max: 64 },
      webauthn: p.webauthnAnswer,
      deviceName: p.deviceName,
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
    summary: "Enrol the authenticator app with a code it shows (the first factor comes with recovery codes)",
    params: {
      ...p.STRICT,
      name: { type: "string", max: 256 },
      setupToken: { type: "string", min: 1, max: 4096 },
      code: { type: "string", max: 16 },
      // The master password; not asked of a login that may only enrol.
      authHash: { ...p.authHash, optional: true },
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
    summary: "Enrol a security key or passkey with its answer to the challenge (checked before anything is stored)",
    params: {
      ...p.STRICT,
      name: { type: "string", max: 256 },
      setupToken: { type: "string", min: 1, max: 4096 },
      response: p.webauthnRegistration,
      authHash: { ...p.authHash, optional: true },
    },
    reply: created("FactorEnrolled"),
  },
  {
    method: "DELETE",
    path: "/users/me/factors/:factorId",
    action: "factors.remove",
    summary: "Remove a second factor (with the master password)",
    params: { ...p.STRICT, factorId: p.pathId, authHash: p.authHash },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/users/me/factors/recovery-codes",
    action: "factors.recoveryCodes",
    summary: "New recovery codes, replacing the old ones (with the master password); shown once",
    params: { ...p.STRICT, authHash: p.authHash },
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
    summary: "Ask to recover an account from a new device, with a one-time key (the same answer for any address)",
    params: { ...p.STRICT, email: p.email, publicKey: p.base64(4096) },
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
  { method: "GET", path: "/orgs/:orgId", action: "orgs.get", summary: "An organization", params: { orgId: p.pathId }, reply: ok("Org") },
  {
    method: "DELETE",
    path: "/orgs/:orgId/members/:userId",
    action: "orgs.removeMember",
    summary: "Take a person out of the organization (or leave it): their sessions end and every vault refuses them",
    params: { orgId: p.pathId, userId: p.pathId },
    reply: ok("RemovedFromOrg"),
  },
  {
    method: "GET",
    path: "/orgs/:orgId/policies",
    action: "orgs.policies",
    enrolOnly: true,
    summary: "The organization's policies: what the server enforces, and what only clients apply",
    params: { orgId: p.pathId },
    reply: ok("Policies"),
  },
  {
    method: "PUT",
    path: "/orgs/:orgId/policies",
    action: "orgs.setPolicies",
    summary: "Set the organization's policies (owners)",
    params: {
      ...p.STRICT,
      orgId: p.pathId,
      requireSecondFactor: { type: "boolean" },
      minKdf: {
        type: "object",
        optional: true,
        strict: "remove",
        props: { argon2idMemoryKiB: p.positiveInteger, argon2idIterations: p.positiveInteger, pbkdf2Iterations: p.positiveInteger },
      },
      inviteMaxLifetime: { type: "string", optional: true, max: 16 },
      recoveryMinThreshold: { type: "number", integer: true, optional: true },
      client: {
        type: "object",
        optional: true,
        strict: "remove",
        props: {
          minPasswordScore: { type: "number", integer: true, optional: true },
          idleLockMinutes: { type: "number", integer: true, optional: true },
        },
      },
    },
    reply: ok("Policies"),
  },
  {
    method: "GET",
    path: "/orgs/:orgId/members",
    action: "orgs.members",
    summary: "An organization's users and their public keys",
    params: { orgId: p.pathId },
    reply: ok("OrgMembers"),
  },

  { method: "GET", path: "/vaults", action: "vaults.list", summary: "The caller's vaults", reply: ok("VaultList") },
  {
    method: "POST",
    path: "/vaults",
    action: "vaults.create",
    summary: "Create a vault",
    params: {
      ...p.STRICT,
      name: p.name,
      type: p.vaultType,
      encryptedVaultKey: p.wrappedKey,
      wrapSignature: p.signature,
      rosterLink: p.rosterLink,
      accountVersion: p.optionalPositiveInteger,
    },
    reply: created("Vault"),
  },
  { method: "GET", path: "/vaults/:vaultId", action: "vaults.get", summary: "A vault", params: { vaultId: p.pathId }, reply: ok("Vault") },
  {
    method: "PATCH",
    path: "/vaults/:vaultId",
    action: "vaults.rename",
    summary: "Rename a vault",
    params: { ...p.STRICT, vaultId: p.pathId, name: p.name, rosterLink: p.rosterLink },
    reply: ok("Vault"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId",
    action: "vaults.remove",
    summary: "Delete a vault with its items",
    params: { vaultId: p.pathId },
    reply: noContent,
  },

  {
    method: "GET",
    path: "/vaults/:vaultId/members",
    action: "members.list",
    summary: "A vault's members",
    params: { vaultId: p.pathId },
    reply: ok("MemberList"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/members",
    action: "members.add",
    summary: "Share a vault (add a member)",
    params: {
      ...p.STRICT,
      vaultId: p.pathId,
      recipientUserId: p.uuid,
      encryptedVaultKey: p.wrappedKey,
      wrapSignature: p.signature,
      role: p.grantableRole,
      keyVersion: p.optionalPositiveInteger,
      rosterLink: p.rosterLink,
    },
    reply: noContent,
  },
  {
    method: "PATCH",
    path: "/vaults/:vaultId/members/:userId",
    action: "members.changeRole",
    summary: "Change a member's role",
    params: { ...p.STRICT, vaultId: p.pathId, userId: p.pathId, role: p.vaultRole, rosterLink: p.rosterLink },
    reply: ok("MemberEntry"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/members/:userId",
    action: "members.remove",
    // The interface's DELETE has no body; a signed vault's `remove` link comes in an optional JSON body.
    summary: "Remove a member (or leave)",
    params: { ...p.STRICT, vaultId: p.pathId, userId: p.pathId, rosterLink: p.rosterLink },
    reply: ok("MemberRemoved"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/roster",
    action: "members.roster",
    summary: "A vault's signed roster",
    params: { vaultId: p.pathId },
    reply: ok("Roster"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/rekey",
    action: "rekey.rekey",
    streamBody: true,
    summary: "Rekey a vault atomically",
    params: { ...p.STRICT, vaultId: p.pathId, ...rekeyBody },
    reply: noContent,
  },

  {
    method: "GET",
    path: "/vaults/:vaultId/items",
    action: "items.list",
    summary:
      "A vault's items: all of them; with `limit` or `after` a page and the cursor of the next; with `since` (a `cursor`, 0 at first) what changed since, the ids gone, and the next cursor (`full`: read the whole list)",
    params: {
      vaultId: p.pathId,
      limit: {
        ...p.seqNumber,
        max: MAX_ITEM_PAGE,
        optional: true,
        openapi: { type: "integer", minimum: 1, maximum: MAX_ITEM_PAGE, default: DEFAULT_ITEM_PAGE },
      },
      after: { type: "string", min: 1, max: 256, optional: true },
      since: {
        ...p.seqNumber,
        min: 0,
        max: Number.MAX_SAFE_INTEGER,
        optional: true,
        openapi: { type: "integer", minimum: 0, description: "a delta read: the `cursor` of an earlier answer, or 0" },
      },
    },
    reply: ok("ItemList"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/items",
    action: "items.create",
    summary: "Create an item",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.optionalUuid, ...itemContent, itemLink: p.itemLink },
    reply: created("Item"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/items/bulk",
    action: "items.import",
    streamBody: true,
    summary: "Add many items at once (an import): all or none, at most 5,000",
    params: {
      ...p.STRICT,
      vaultId: p.pathId,
      items: {
        type: "array",
        items: {
          type: "object",
          strict: "remove",
          props: { itemId: p.uuid, encryptedData: p.encryptedData, encryptedName: p.encryptedName },
        },
      },
      keyVersion: p.optionalPositiveInteger,
      itemLink: p.itemLink,
    },
    reply: created("Imported"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/exports",
    action: "items.exported",
    summary: "Record that a member exported the vault (the export itself is made on the client)",
    params: { ...p.STRICT, vaultId: p.pathId, format: { type: "enum", values: ["encrypted", "json", "csv"] } },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/items/:itemId",
    action: "items.get",
    summary: "An item",
    params: { vaultId: p.pathId, itemId: p.pathId },
    reply: ok("Item"),
  },
  {
    method: "PUT",
    path: "/vaults/:vaultId/items/:itemId",
    action: "items.update",
    summary: "Replace an item's ciphertext",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.pathId, ...itemContent, revision: p.optionalPositiveInteger, itemLink: p.itemLink },
    reply: ok("Item"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/items/:itemId",
    action: "items.remove",
    summary: "Delete an item (with a JSON body `{ itemLink }` on a vault that keeps a signed item log)",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.pathId, itemLink: p.itemLink },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/history",
    action: "items.history",
    summary: "The revisions a vault keeps of its items (of one, with `itemId`), newest first by item",
    params: { vaultId: p.pathId, itemId: { ...p.uuid, optional: true } },
    reply: ok("ItemHistory"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/trash",
    action: "items.trash",
    summary: "A vault's trash: deleted items, most recent first",
    params: { vaultId: p.pathId },
    reply: ok("Trash"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/trash/:itemId/restore",
    action: "items.restore",
    summary: "Bring an item back out of the trash (with `{ itemLink }` on a vault that keeps a signed item log)",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.pathId, itemLink: p.itemLink },
    reply: ok("Item"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/trash/:itemId",
    action: "items.purge",
    summary: "Delete a trashed item and its history for good",
    params: { vaultId: p.pathId, itemId: p.pathId },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/item-log",
    action: "items.log",
    summary: "A vault's signed item log, from seq `from` (default: its last checkpoint or rekey link)",
    params: {
      vaultId: p.pathId,
      from: { ...p.seqNumber, min: 0, optional: true, openapi: { type: "integer", minimum: 0 } },
      limit: {
        ...p.seqNumber,
        max: MAX_ITEM_LOG_PAGE,
        optional: true,
        openapi: { type: "integer", minimum: 1, maximum: MAX_ITEM_LOG_PAGE, default: DEFAULT_ITEM_LOG_PAGE },
      },
    },
    reply: ok("ItemLog"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/item-log",
    action: "items.checkpoint",
    summary: "Append a checkpoint to a vault's signed item log (or start the log with one)",
    params: { ...p.STRICT, vaultId: p.pathId, itemLink: { ...p.itemLink, optional: false } },
    reply: noContent,
  },

  {
    method: "POST",
    path: "/invites",
    action: "invites.create",
    summary: "Invite a new user",
    params: { ...p.STRICT, email: p.email, role: p.grantableRole, expiresIn: { type: "string", min: 1, max: 16, optional: true } },
    reply: created("InviteCreated"),
  },
  {
    method: "GET",
    path: "/invites",
    action: "invites.list",
    summary: "An organization's pending invites",
    params: { orgId: p.orgIdQuery },
    reply: ok("InviteList"),
  },
  {
    method: "POST",
    path: "/invites/redeem",
    action: "invites.redeem",
    public: true,
    summary: "Check an invite token",
    // Checked by the action, after the rate limit: a malformed token costs a redeem attempt too.
    params: {
      ...p.STRICT,
      token: { type: "any", optional: true, openapi: { type: "string", minLength: p.opaqueToken.min, maxLength: p.opaqueToken.max } },
    },
    reply: ok("InviteRedeemable"),
  },
  {
    method: "POST",
    path: "/invites/:inviteId/statement",
    action: "invites.attachStatement",
    summary: "Attach the inviter's signed statement to an invite",
    params: { ...p.STRICT, inviteId: p.pathId, statement: p.signedStatement },
    reply: noContent,
  },
  {
    method: "DELETE",
    path: "/invites/:inviteId",
    action: "invites.revoke",
    summary: "Revoke an invite",
    params: { inviteId: p.pathId },
    reply: noContent,
  },

  {
    method: "GET",
    path: "/audit",
    action: "audit.list",
    summary: "An organization's audit log, newest first",
    params: {
      orgId: p.orgIdQuery,
      limit: {
        ...p.seqNumber,
        max: MAX_AUDIT_PAGE,
        optional: true,
        openapi: { type: "integer", minimum: 1, maximum: MAX_AUDIT_PAGE, default: DEFAULT_AUDIT_PAGE },
      },
      before: { ...p.seqNumber, optional: true },
    },
    reply: ok("AuditPage"),
  },
  {
    method: "GET",
    path: "/audit/verify",
    action: "audit.verify",
    summary: "Check an organization's audit chain (the server's word; clients check it themselves)",
    params: { orgId: p.orgIdQuery },
    reply: ok("AuditVerdict"),
  },
  {
    method: "GET",
    path: "/audit/checkpoint",
    action: "audit.checkpoint",
    summary: "The organization's audit head (seq, hash), signed now with the server's audit key",
    params: { orgId: p.orgIdQuery },
    reply: ok("AuditCheckpoint"),
  },
  {
    method: "GET",
    path: "/audit/key",
    action: "audit.key",
    public: true,
    summary: "The server's audit key (Ed25519, raw, base64): clients pin it and check checkpoints and exported logs with it",
    params: {},
    reply: ok("AuditKey"),
  },
] as const satisfies readonly RouteDef[];

/** Every action a route calls: a name that is not one of them (a typo) fails the type check. */
export type ActionName = (typeof ROUTE_TABLE)[number]["action"];

export const ROUTES: readonly RouteDef[] = ROUTE_TABLE;

/** The route of an action: the one place its parameters are declared. */
export function routeOf(action: ActionName): RouteDef {
  const route = ROUTES.find((r) => r.action === action);
  if (!route) throw new Error(`No route calls ${action}`);
  return route;
}

/** An action's parameter rules, from its route (for the service's `params`). */
export function paramsOf(action: ActionName): ActionParams {
  const params = routeOf(action).params;
  if (!params) throw new Error(`The route of ${action} declares no parameters`);
  return params as ActionParams;
}

/** A route's path parameters: `/vaults/:vaultId/items/:itemId` -> vaultId, itemId. */
export function pathParamsOf(route: Pick<RouteDef, "path">): string[] {
  return route.path
    .split("/")
    .filter((part) => part.startsWith(":"))
    .map((part) => part.slice(1));
}

/** The methods declared for a path under API_PREFIX (`/api/v1/vaults/abc` -> GET, PATCH, DELETE), none for an unknown one. */
export function methodsForPath(pathname: string): Method[] {
  return routesForPath(pathname).map((r) => r.method);
}

/** The routes declared for a path under API_PREFIX, whatever their method. */
export function routesForPath(pathname: string): RouteDef[] {
  if (!pathname.startsWith(`${API_PREFIX}/`)) return [];
  const path = pathname.slice(API_PREFIX.length).replace(/\/+$/, "");
  const parts = path.split("/");
  return ROUTES.filter((r) => {
    const pattern = r.path.split("/");
    return pattern.length === parts.length && pattern.every((part, i) => (part.startsWith(":") ? parts[i] !== "" : part === parts[i]));
  });
}
