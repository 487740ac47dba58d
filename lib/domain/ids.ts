/**
 * Identifiers, each a UUID string of its own type: a user's id cannot be passed where a vault's is
 * expected (`removeMember({ vaultId: userId, ... })` does not compile). At runtime they are plain
 * strings. An id becomes typed where it is checked: a route's parameters (lib/http/routes/), an
 * access token's claims, a row read from the store, or `newId()` for a new one.
 */
import { createHash, randomUUID } from "node:crypto";
import { USER_ID_CONTEXT, uuidFromDigest, VAULT_ID_CONTEXT } from "../../protocol/ids";

declare const kind: unique symbol;
type Id<Kind extends string> = string & { readonly [kind]: Kind };

export type UserId = Id<"user">;
export type OrgId = Id<"org">;
export type VaultId = Id<"vault">;
export type ItemId = Id<"item">;
export type InviteId = Id<"invite">;
export type AttachmentId = Id<"attachment">;
export type SendId = Id<"send">;

/** Any UUID (RFC 4122 versions 1 to 8), in either case: ids are case-insensitive on input and stored lower-case. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/** A new random id, of the id type asked for (`newId<VaultId>()`, or inferred from where it goes). */
export function newId<T extends string = string>(): T {
  return randomUUID() as T;
}

/**
 * A new user's id: derived from their Ed25519 public key (protocol/ids.ts, `userIdForKey`), so their
 * client knows it before registering and signs it into their key statement. Two accounts cannot
 * share a signing key; a registration with a key already registered answers 409.
 */
export function userIdForKey(signingPublicKeyB64: string): UserId {
  const digest = createHash("sha256").update(USER_ID_CONTEXT).update(Buffer.from(signingPublicKeyB64, "base64")).digest();
  return uuidFromDigest(new Uint8Array(digest)) as UserId;
}

/** A signed vault's id: derived from its creator and their wrap of its key (protocol/ids.ts, `vaultIdFor`). */
export function vaultIdFor(creatorId: string, encryptedVaultKey: string): VaultId {
  const digest = createHash("sha256").update(`${VAULT_ID_CONTEXT}${creatorId}\n${encryptedVaultKey}`).digest();
  return uuidFromDigest(new Uint8Array(digest)) as VaultId;
}
