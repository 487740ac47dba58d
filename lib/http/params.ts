/**
 * The vocabulary of parameter rules (fastest-validator) that the route table (lib/http/routes/)
 * declares its routes' parameters with. Shape and types only; meaning is the domain's.
 *
 * A rule may carry `openapi`, a JSON Schema that the OpenAPI document shows instead of the one
 * derived from the rule (fastest-validator ignores the key): for a value whose form the domain
 * checks, such as a roster link.
 */
import { MAX_PASSKEY_LOGINS } from "../domain/accounts/passkey-logins";
import { UUID } from "../domain/ids";
import { base64MaxChars, CANONICAL_BASE64, isCanonicalBase64 } from "../domain/encoding";
import { MAX_ENCRYPTED_DATA_BYTES, MAX_ENCRYPTED_NAME_BYTES } from "../domain/items/decisions";
import { GRANTABLE_ROLES, VAULT_ROLES, VAULT_TYPES } from "../domain/types";
import { bodyOf } from "./api-schemas";

/** Canonical base64 of 1 to `maxBytes` bytes (the exact size, where it matters, is checked by the domain). */
export function base64(maxBytes: number) {
  const max = base64MaxChars(maxBytes);
  return {
    type: "string",
    min: 1,
    max,
    // Checked by decoding (isCanonicalBase64); refused as a pattern mismatch, as the pattern the
    // OpenAPI document shows for it would be. A string past `max` is refused by its length alone.
    custom: canonicalBase64(max),
    openapi: { type: "string", minLength: 1, maxLength: max, pattern: CANONICAL_BASE64.source },
  } as const;
}

function canonicalBase64(max: number) {
  return (value: unknown, errors: Array<{ type: string; expected?: string }>): unknown => {
    if (typeof value === "string" && value.length <= max && !isCanonicalBase64(value))
      errors.push({ type: "stringPattern", expected: "canonical base64" });
    return value;
  };
}

/** UUIDs are case-insensitive on input (RFC 4122) and stored lower-case. */
export const uuid = { type: "string", pattern: UUID, lowercase: true } as const;
export const optionalUuid = { ...uuid, optional: true } as const;
export const email = { type: "string", min: 1, max: 320 } as const;
export const name = { type: "string", min: 1, max: 256 } as const;
/** Checked in full by `decideDeviceName` (lib/domain/accounts/sessions.ts); bounded here so nothing long is read. */
export const deviceName = { type: "string", max: 256, optional: true } as const;
/** Path ids: the gateway answers 404 for a malformed one before any action runs. */
export const pathId = { type: "string" } as const;
/** An organization named in a query string (a malformed one is simply not the caller's: 403). */
export const orgIdQuery = { type: "string", min: 1, max: 64, lowercase: true } as const;

/** 32 bytes, canonical base64. */
export const authHash = { type: "string", length: 44, pattern: /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/ } as const;
export const opaqueToken = { type: "string", min: 1, max: 512 } as const;
/** A remembered device's token at login (lib/domain/accounts/remembered-devices.ts). */
export const deviceToken = { ...opaqueToken, optional: true } as const;

/** At most the largest 32-bit integer: every such field (a version, a revision) is an int column on PostgreSQL. */
export const positiveInteger = { type: "number", integer: true, positive: true, max: 2_147_483_647 } as const;
export const optionalPositiveInteger = { ...positiveInteger, optional: true } as const;
/**
 * Query strings carry text: "20" converts, "20.5", "x" and "" do not pass. A seq is at most the
 * largest 32-bit integer (the column's range on PostgreSQL), so a larger `before` is a 400.
 */
export const seqNumber = { type: "number", integer: true, convert: true, min: 1, max: 2_147_483_647 } as const;

/** A signed-roster link: any JSON object here; its form is checked by `parseRosterLink` (lib/domain/vaults/roster.ts). */
export const rosterLink = { type: "object", optional: true, openapi: bodyOf("RosterLink") } as const;
/** A link of the organization's signed log (protocol/formats/org-log.ts): any JSON object here; its form is checked by lib/domain/orgs/log.ts. */
export const orgLink = { type: "object", openapi: bodyOf("OrgLink") } as const;
/** A key-log entry (protocol/formats/key-log.ts): any JSON object here; its form is checked by `parseKeyLogEntry`. */
export const keyLogEntry = { type: "object", openapi: bodyOf("KeyLogEntry") } as const;
/** A signed item-log link (protocol/formats/item-log.ts), checked field by field by lib/domain/items/log.ts. */
export const itemLink = { type: "object", optional: true, openapi: bodyOf("ItemLink") } as const;

/** A statement its holder signed (protocol/formats/statements.ts): a version and an Ed25519 signature; what it says is checked by the domain. */
export const signedStatement = {
  type: "object",
  strict: "remove",
  props: { version: { ...positiveInteger, max: 2_147_483_647 }, signature: base64(64) },
} as const;
export const optionalSignedStatement = { ...signedStatement, optional: true } as const;

/** An Ed25519 public key: 32 bytes, canonical base64. */
export const signingPublicKeyText = { type: "string", length: 44, pattern: /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/ } as const;

/** Drop body fields the contract does not know. */
export const STRICT = { $$strict: "remove" } as const;

/** A wrapped vault key: RSA-4096 is 512 bytes, AES-KW 40. */
export const wrappedKey = base64(512);
/** A passkey unlock's wrap (protocol/formats/passkey-unlock.ts): 32 bytes under AES-GCM, with room to spare. */
export const unlockWrap = base64(256);
/** An Ed25519 signature is 64 bytes; the domain rejects any other length. */
export const signature = base64(64);

export const vaultType = { type: "enum", values: [...VAULT_TYPES] } as const;
export const vaultRole = { type: "enum", values: [...VAULT_ROLES] } as const;
export const grantableRole = { type: "enum", values: [...GRANTABLE_ROLES] } as const;

export const encryptedData = base64(MAX_ENCRYPTED_DATA_BYTES);
export const encryptedName = base64(MAX_ENCRYPTED_NAME_BYTES);

export const b64url = (max: number) => ({ type: "string", max, pattern: /^[A-Za-z0-9_-]*$/ }) as const;
const webauthnEnvelope = {
  id: b64url(1024),
  rawId: b64url(1024),
  type: { type: "enum", values: ["public-key"] },
  clientExtensionResults: { type: "object", optional: true, strict: "remove", props: {} },
  authenticatorAttachment: { type: "string", optional: true, max: 32 },
} as const;

/** A security key's answer at sign-in (WebAuthn's AuthenticationResponseJSON), every field bounded. */
export const webauthnAnswer = {
  type: "object",
  optional: true,
  strict: "remove",
  props: {
    ...webauthnEnvelope,
    response: {
      type: "object",
      strict: "remove",
      props: {
        clientDataJSON: b64url(4096),
        authenticatorData: b64url(4096),
        signature: b64url(4096),
        userHandle: { ...b64url(1024), optional: true },
      },
    },
  },
} as const;

/** A security key's answer at enrolment (WebAuthn's RegistrationResponseJSON), every field bounded. */
export const webauthnRegistration = {
  type: "object",
  strict: "remove",
  props: {
    ...webauthnEnvelope,
    response: {
      type: "object",
      strict: "remove",
      props: {
        clientDataJSON: b64url(4096),
        attestationObject: b64url(16384),
        transports: { type: "array", optional: true, max: 8, items: { type: "string", max: 32 } },
        publicKeyAlgorithm: { type: "number", optional: true, integer: true },
        publicKey: { ...b64url(4096), optional: true },
        authenticatorData: { ...b64url(8192), optional: true },
      },
    },
  },
} as const;

/** The unlock of each passkey that keeps one, made again by a password change or key rotation (lib/domain/accounts/passkey-logins.ts). */
export const passkeyRewraps = {
  type: "array",
  optional: true,
  max: MAX_PASSKEY_LOGINS,
  items: {
    type: "object",
    strict: "remove",
    props: { credentialId: b64url(1024), wrappedStretchedKey: unlockWrap, keptWrappedKey: unlockWrap },
  },
} as const;
