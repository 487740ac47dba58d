/** Parameter rules for fastest-validator, shared by the services. Shape and types only; meaning is the domain's. */
import { base64MaxChars, CANONICAL_BASE64, UUID } from "../domain/encoding";

/** Canonical base64 of 1 to `maxBytes` bytes (the exact size, where it matters, is checked by the domain). */
export function base64(maxBytes: number) {
  return { type: "string", min: 1, max: base64MaxChars(maxBytes), pattern: CANONICAL_BASE64 } as const;
}

/** UUIDs are case-insensitive on input (RFC 4122) and stored lower-case. */
export const uuid = { type: "string", pattern: UUID, lowercase: true } as const;
export const optionalUuid = { ...uuid, optional: true } as const;
export const email = { type: "string", min: 1, max: 320 } as const;
export const name = { type: "string", min: 1, max: 256 } as const;
/** Path ids: the gateway answers 404 for a malformed one before any action runs. */
export const pathId = { type: "string" } as const;

/** A signed-roster link: any JSON object here; its form is checked by `parseRosterLink` (lib/domain/roster.ts). */
export const rosterLink = { type: "object", optional: true } as const;

/** Drop body fields the contract does not know. */
export const STRICT = { $$strict: "remove" } as const;

/** A wrapped vault key: RSA-4096 is 512 bytes, AES-KW 40. */
export const wrappedKey = base64(512);
/** An Ed25519 signature is 64 bytes; the domain rejects any other length. */
export const signature = base64(64);
