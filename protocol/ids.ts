/**
 * Ids as the client takes them from the server: lower-case UUIDs only, compared exactly. The
 * server stores ids lower-case and accepts any case on input, so a client lower-cases what a
 * person types, and refuses an id in any other form in an answer: pins, seen heads and opened
 * keys are kept by id, and an id spelt otherwise would find none of them.
 *
 * A user's id is derived from their Ed25519 public key when they register (`userIdForKey`), so a
 * client knows its id before the server answers, and signs it into its key statement.
 */
import { concatBytes, toHex, utf8, type Bytes } from "./encoding";
import { sha256 } from "./crypto/primitives";

export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isCanonicalId = (value: unknown): value is string => typeof value === "string" && CANONICAL_UUID.test(value);

/** Prepended to the Ed25519 public key whose SHA-256 gives a new user's id. */
export const USER_ID_CONTEXT = "vault-user-id/v1\n";

/**
 * Prepended to the creator's id and the vault key's wrap for them, whose SHA-256 gives a signed
 * vault's id: an id no one else can choose. A vault id another organization holds cannot be named
 * in a create (it would take a preimage), so creating with it answers as any id that is not derived
 * does, and no create reveals whether a vault exists.
 */
export const VAULT_ID_CONTEXT = "vault-id/v1\n";

/** A UUID (version 8, RFC 9562) from the first 16 bytes of a SHA-256. */
export function uuidFromDigest(digest: Uint8Array): string {
  const b = digest.slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = toHex(b);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The id a user registering with this Ed25519 public key (32 raw bytes) gets. */
export async function userIdForKey(signingPublicKeyRaw: Bytes): Promise<string> {
  return uuidFromDigest(await sha256(concatBytes(utf8(USER_ID_CONTEXT), signingPublicKeyRaw)));
}

/** The id of a vault its creator `creatorId` starts with the wrap `encryptedVaultKey` (base64, as sent). */
export async function vaultIdFor(creatorId: string, encryptedVaultKey: string): Promise<string> {
  return uuidFromDigest(await sha256(utf8(`${VAULT_ID_CONTEXT}${creatorId}\n${encryptedVaultKey}`)));
}
