/**
 * The bodies the API answers, as JSON Schema (2020-12, the dialect of OpenAPI 3.1): the
 * `components.schemas` of the OpenAPI document (lib/http/openapi.ts). Routes name them in their
 * `responses` (lib/http/routes/). The end-to-end suite checks every answer it sees against them,
 * so a field added, renamed or dropped here or in a service is caught by the tests.
 *
 * Objects are closed (`additionalProperties: false`): the document says exactly what is sent.
 */
import { DOMAIN_EVENT_TYPES, EVENT_SUBJECTS } from "../domain/audit/events";
import { ERROR_STATUS } from "../errors";
import { GRANTABLE_ROLES, ORG_ROLES, VAULT_ROLES, VAULT_TYPES } from "../domain/types";
import { ORG_LOG_OPS } from "../../protocol/formats/org-log";
import { arrayOf, base64, hex64, integer, object, oneOfValues, ref, string, timestamp, uuid, type JsonSchema } from "./json-schema";
import { itemLink, keyLogEntry, publicKeys, rosterLink } from "./link-schemas";
import { SEND_SCHEMAS } from "./send-schemas";
import { EMERGENCY_SCHEMAS } from "./emergency-schemas";

export type { JsonSchema } from "./json-schema";

const argon2id = object({
  algorithm: { const: "argon2id" },
  salt: base64,
  iterations: integer(1),
  memoryKiB: integer(1),
  parallelism: integer(1),
});
const pbkdf2 = object({ algorithm: { const: "pbkdf2-sha256" }, salt: base64, iterations: integer(1) });

const statement = object({ version: integer(1), signature: base64 });
/** What a user's keys come with, where there is one: their signed key statement, the binding of the invite they registered with. */
const keyProofs = { keyStatement: statement, inviteBinding: object({ inviteId: uuid, mac: base64 }) };
const wrap = { encryptedVaultKey: base64, senderId: uuid, wrapSignature: base64 };

/** An item as stored: the Item answer, and what a kept revision and a trashed item are built on. */
const itemFields = {
  itemId: uuid,
  vaultId: uuid,
  encryptedData: base64,
  encryptedName: base64,
  revision: integer(1),
  keyVersion: integer(1),
  createdAt: timestamp,
  updatedAt: timestamp,
};
const { updatedAt: _updatedAt, ...revisionFields } = itemFields;

const memberEntry = object({
  userId: uuid,
  vaultId: uuid,
  vaultName: string,
  vaultType: oneOfValues(VAULT_TYPES),
  ...wrap,
  role: oneOfValues(VAULT_ROLES),
});

/** What every login answer holds, and may. */
const loginRequired: Record<string, JsonSchema> = {
  accessToken: string,
  refreshToken: string,
  tokenType: { const: "Bearer" },
  expiresIn: integer(1),
  userId: uuid,
  orgId: uuid,
  role: oneOfValues(ORG_ROLES),
  kdf: ref("Kdf"),
  ...publicKeys,
  encryptedPrivateKey: base64,
  encryptedSigningPrivateKey: base64,
  sessionId: uuid,
  accountVersion: integer(1),
};
const loginOptional: Record<string, JsonSchema> = {
  keyStatement: statement,
  kdfStatement: statement,
  keyLog: arrayOf(ref("KeyLogEntry")),
  enrolOnly: { const: true },
  /** A second step asked to remember the device: 32 random bytes (base64url) that skip the second step at its next logins. */
  deviceToken: string,
};

/** An attachment's fields (lib/store/port/attachments.ts). */
const attachmentFields = {
  attachmentId: uuid,
  vaultId: uuid,
  itemId: uuid,
  size: integer(0),
  chunkCount: integer(1),
  complete: { type: "boolean" },
  uploadedBy: uuid,
  createdAt: timestamp,
  completedAt: { type: ["string", "null"], format: "date-time" },
};

export const SCHEMAS = {
  Error: object({
    error: object({ code: oneOfValues(Object.keys(ERROR_STATUS)), message: string }, { field: string }),
  }),
  Health: object({ status: { const: "ok" } }),
  Kdf: { oneOf: [argon2id, pbkdf2] },
  SignedStatement: statement,
  Prelogin: object({ kdf: ref("Kdf"), kdfStatement: ref("SignedStatement") }, { keyLog: arrayOf(ref("KeyLogEntry")) }),
  RegistrationOffer: object({ mode: oneOfValues(["open", "invite", "disabled"]), firstAccount: { type: "boolean" } }),
  Registered: object({ userId: uuid, orgId: uuid, role: oneOfValues(ORG_ROLES) }),
  TokenPair: object({
    accessToken: string,
    refreshToken: string,
    tokenType: { const: "Bearer" },
    expiresIn: integer(1),
  }),
  Login: object(loginRequired, loginOptional),
  /** A passkey sign-in: a login, the account's email (the passkey named it, not the person), and the passkey with its unlock wraps when it keeps them. */
  PasskeyLogin: object(
    {
      ...loginRequired,
      email: string,
      passkey: object({ credentialId: string }, { unlock: object({ prfWrappedKey: base64, wrappedStretchedKey: base64 }) }),
    },
    loginOptional,
  ),
  PasskeyChallenge: object({ options: { type: "object" }, challengeToken: string }),
  PasskeyLoginView: object(
    { credentialId: string, name: string, createdAt: timestamp, unlock: { type: "boolean" } },
    { lastUsedAt: timestamp, keptWrappedKey: base64 },
  ),
  PasskeyLogins: object({ passkeys: arrayOf(ref("PasskeyLoginView")), policy: oneOfValues(["allowed", "forbidden", "required"]) }),
  PasskeyAdded: object({ passkey: ref("PasskeyLoginView") }),
  /** A login of an account with a second factor: the step it takes next (whether or not the password was right). */
  LoginStep: object(
    { secondFactorRequired: { const: true }, stepToken: string, methods: arrayOf(oneOfValues(["totp", "webauthn", "recovery-code"])) },
    { webauthn: { type: "object" } },
  ),
  LoginAnswer: { oneOf: [ref("Login"), ref("LoginStep")] },
  SecondFactor: object(
    { factorId: uuid, kind: oneOfValues(["totp", "webauthn"]), name: string, createdAt: timestamp },
    { lastUsedAt: timestamp },
  ),
  SecondFactors: object({ factors: arrayOf(ref("SecondFactor")), recoveryCodesLeft: integer(0), required: { type: "boolean" } }),
  FactorEnrolled: object({ factor: ref("SecondFactor") }, { recoveryCodes: arrayOf(string) }),
  TotpSetup: object({ secret: string, uri: string, setupToken: string }),
  WebauthnSetup: object({ options: { type: "object" }, setupToken: string }),
  RecoveryCodes: object({ recoveryCodes: arrayOf(string) }),
  Policies: object(
    {
      requireSecondFactor: { type: "boolean" },
      passkeySignIn: { type: "string", enum: ["allowed", "forbidden", "required"] },
      recoveryMinThreshold: integer(2),
      client: object({ minPasswordScore: integer(0) }, { idleLockMinutes: integer(1) }),
      enforced: arrayOf(string),
      clientOnly: arrayOf(string),
    },
    {
      minKdf: object({ argon2idMemoryKiB: integer(1), argon2idIterations: integer(1), pbkdf2Iterations: integer(1) }),
      inviteMaxLifetime: string,
      sendsForbidden: { type: "boolean" },
      sendMaxLifetime: string,
    },
  ),
  RecoveryEnrolment: object(
    {
      enrolmentId: uuid,
      userId: uuid,
      threshold: integer(2),
      copy: base64,
      signature: base64,
      createdAt: timestamp,
      current: { type: "boolean" },
      shares: arrayOf(object({ trusteeId: uuid, encryptedShare: base64, trusteeKeys: hex64 })),
    },
    { version: integer(1), keys: hex64, kdfVersion: integer(1) },
  ),
  RecoveryRequestCreated: object({ requestId: uuid, requestToken: string, expiresAt: timestamp }),
  RecoveryRequestSummary: object(
    {
      requestId: uuid,
      userId: uuid,
      publicKey: base64,
      status: oneOfValues(["pending", "opened", "completed", "cancelled"]),
      createdAt: timestamp,
      expiresAt: timestamp,
    },
    { endedAt: timestamp, approvedBy: arrayOf(uuid) },
  ),
  RecoveryRequestList: object({ requests: arrayOf(ref("RecoveryRequestSummary")) }),
  /** What a trustee is asked: the request, the user's signed enrolment, and the trustee's own share. */
  RecoveryApprovalTask: object({
    request: ref("RecoveryRequestSummary"),
    enrolment: object(
      { enrolmentId: uuid, threshold: integer(2), copy: base64, signature: base64, createdAt: timestamp },
      { version: integer(1), keys: hex64, kdfVersion: integer(1) },
    ),
    trustees: arrayOf(object({ trusteeId: uuid, trusteeKeys: hex64, encryptedShare: base64 })),
    approved: { type: "boolean" },
  }),
  RecoveryApprovalTasks: object({ tasks: arrayOf(ref("RecoveryApprovalTask")) }),
  /** What the recovering device reads with its request's secret. */
  RecoveryState: object(
    {
      requestId: uuid,
      status: oneOfValues(["pending", "opened", "completed", "cancelled"]),
      threshold: integer(2),
      approvals: arrayOf(object({ trusteeId: uuid, encryptedShare: base64, signature: base64, approvedAt: timestamp })),
    },
    {
      userId: uuid,
      enrolmentId: uuid,
      copy: base64,
      accountVersion: integer(1),
      kdf: ref("Kdf"),
      kdfStatement: statement,
      email: string,
      ...publicKeys,
      encryptedPrivateKey: base64,
      encryptedSigningPrivateKey: base64,
    },
  ),

  Me: object({
    userId: uuid,
    email: string,
    orgId: uuid,
    role: oneOfValues(ORG_ROLES),
    createdAt: timestamp,
    accountVersion: integer(1),
    kdf: ref("Kdf"),
  }),
  Session: object({
    sessionId: uuid,
    deviceName: string,
    createdAt: timestamp,
    lastUsedAt: timestamp,
    address: string,
    expiresAt: timestamp,
    current: { type: "boolean" },
  }),
  SessionList: object({ sessions: arrayOf(ref("Session")) }),
  RememberedDevice: object({ deviceId: uuid, deviceName: string, createdAt: timestamp, lastUsedAt: timestamp, expiresAt: timestamp }),
  RememberedDeviceList: object({ devices: arrayOf(ref("RememberedDevice")) }),
  SessionsEnded: object({ ended: integer(0) }),
  PasswordChanged: object({ accountVersion: integer(2), sessionsEnded: integer(0) }),
  UserKeys: object({ userId: uuid, email: string, ...publicKeys }, keyProofs),
  Org: object({ orgId: uuid, name: string, createdAt: timestamp }),
  OrgMembers: object({
    members: arrayOf(
      object(
        { userId: uuid, email: string, role: oneOfValues(ORG_ROLES), ...publicKeys, createdAt: timestamp },
        { ...keyProofs, removedAt: timestamp },
      ),
    ),
  }),
  OrgLink: object(
    { orgId: uuid, seq: integer(0), prev: hex64, op: oneOfValues(ORG_LOG_OPS), actorId: uuid, at: timestamp, sig: base64 },
    {
      members: arrayOf(object({ userId: uuid, email: string, role: oneOfValues(ORG_ROLES), key: hex64 })),
      subject: object({ userId: uuid, email: string, role: oneOfValues(ORG_ROLES), key: hex64 }),
      invite: object({
        inviteId: uuid,
        orgId: uuid,
        orgName: string,
        email: string,
        role: oneOfValues(GRANTABLE_ROLES),
        expiresAt: timestamp,
        inviterId: uuid,
        signature: base64,
      }),
      subjectId: uuid,
    },
  ),
  OrgLog: object({ links: arrayOf(ref("OrgLink")) }),
  OrgLogHead: object({ seq: integer(0), hash: hex64 }),
  RemovedFromOrg: object({
    userId: uuid,
    vaults: arrayOf(object({ vaultId: uuid, needs: oneOfValues(["rekey", "none"]) })),
    sessionsEnded: integer(0),
  }),
  Vault: object({
    vaultId: uuid,
    vaultName: string,
    vaultType: oneOfValues(VAULT_TYPES),
    orgId: uuid,
    ...wrap,
    role: oneOfValues(VAULT_ROLES),
    keyVersion: integer(1),
    rekeyRequired: { type: "boolean" },
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
  VaultList: object({ vaults: arrayOf(ref("Vault")) }),
  MemberEntry: memberEntry,
  MemberList: object({ members: arrayOf(ref("MemberEntry")) }),
  MemberRemoved: object({ rekeyRequired: { type: "boolean" }, remainingMembers: arrayOf(ref("MemberEntry")) }),
  RosterLink: rosterLink,
  KeyLogEntry: keyLogEntry,
  KeyLog: object({ entries: arrayOf(ref("KeyLogEntry")) }),
  KeysRotated: object({ accountVersion: integer(2), keyVersion: integer(2), sessionsEnded: integer(0) }),
  Roster: object({ links: arrayOf(ref("RosterLink")) }),
  ItemLink: itemLink,
  AuditCheckpoint: object({ orgId: uuid, seq: integer(0), head: hex64, at: timestamp, sig: base64 }),
  AuditKey: object({ publicKey: base64 }),
  ItemLog: object({
    links: arrayOf(ref("ItemLink")),
    baseSeq: { type: ["integer", "null"], minimum: 0 },
    next: { type: ["integer", "null"], minimum: 0 },
  }),
  Item: object(itemFields),
  // The whole list (`items` alone), a page (with `next`), or a delta read's answer (`since`: with
  // `deleted`, `cursor` and `full`; lib/domain/items/changes.ts).
  ItemList: object(
    { items: arrayOf(ref("Item")) },
    { next: { type: ["string", "null"] }, deleted: arrayOf(uuid), cursor: integer(0), full: { type: "boolean" } },
  ),
  Imported: object({ created: integer(1) }),
  // A file on an item, as the server knows it: never its name, type or key (those are in the item's sealed content).
  Attachment: object(attachmentFields),
  // The same, with the chunks stored so far: what a resumed upload sends next.
  AttachmentStatus: object({ ...attachmentFields, received: arrayOf(integer(0)) }),
  AttachmentList: object({ attachments: arrayOf(ref("Attachment")) }),
  AttachmentChunk: object({ index: integer(0), data: base64 }),
  ...SEND_SCHEMAS,
  ...EMERGENCY_SCHEMAS,
  /**
   * A released grant's session as its grantor: the grant, the wrapped key, the grantor's email, and a
   * login as the grantor (a read grant's has no refresh token: its session cannot be made whole).
   */
  EmergencySession: object(
    {
      ...Object.fromEntries(Object.entries(loginRequired).filter(([k]) => k !== "refreshToken")),
      grant: ref("EmergencyGrant"),
      wrappedKey: base64,
      email: string,
      readOnly: { type: "boolean" },
    },
    { ...loginOptional, refreshToken: string },
  ),
  ItemHistory: object({
    revisions: arrayOf(
      // A revision: what the item held then, and when the next one replaced it.
      object({ ...revisionFields, replacedAt: timestamp }),
    ),
  }),
  Trash: object({
    items: arrayOf(object({ ...itemFields, deletedAt: timestamp, deletedBy: uuid })),
  }),
  InviteCreated: object({ inviteId: uuid, token: string, expiresAt: timestamp }),
  InviteList: arrayOf(
    object({ id: uuid, email: string, role: oneOfValues(GRANTABLE_ROLES), inviterId: uuid, expiresAt: timestamp, createdAt: timestamp }),
  ),
  InviteRedeemable: object(
    {
      inviteId: uuid,
      orgId: uuid,
      email: string,
      role: oneOfValues(GRANTABLE_ROLES),
      expiresAt: timestamp,
      inviter: object({ userId: uuid, email: string, ...publicKeys }, { keyStatement: statement }),
    },
    { orgName: string, inviteStatement: statement },
  ),
  AuditRecord: object(
    {
      eventId: uuid,
      seq: integer(1),
      type: oneOfValues(DOMAIN_EVENT_TYPES),
      at: timestamp,
      actorId: uuid,
      orgId: uuid,
      prevHash: hex64,
      hash: hex64,
    },
    Object.fromEntries(EVENT_SUBJECTS.map((subject) => [subject, uuid])),
  ),
  AuditPage: object({ events: arrayOf(ref("AuditRecord")), nextBefore: { type: ["integer", "null"], minimum: 1 } }),
  AuditVerdict: {
    oneOf: [
      object({ ok: { const: true }, count: integer(0), head: hex64 }),
      object({ ok: { const: false }, count: integer(0), brokenAt: integer(1) }),
    ],
  },
  OpenApiDocument: {
    type: "object",
    required: ["openapi", "paths"],
    properties: { openapi: { const: "3.1.0" }, paths: { type: "object" } },
  },
} satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;

/** A route's answer body: one of the schemas above, by name. */
export const bodyOf = (name: SchemaName): JsonSchema => ref(name);
