/**
 * Identifiers, each a UUID string of its own type: a user's id cannot be passed where a vault's is
 * expected (`removeMember({ vaultId: userId, ... })` does not compile). At runtime they are plain
 * strings. An id becomes typed where it is checked: a route's parameters (lib/http/routes.ts), an
 * access token's claims, a row read from the store, or `newId()` for a new one.
 */
import { randomUUID } from "node:crypto";

declare const kind: unique symbol;
type Id<Kind extends string> = string & { readonly [kind]: Kind };

export type UserId = Id<"user">;
export type OrgId = Id<"org">;
export type VaultId = Id<"vault">;
export type ItemId = Id<"item">;
export type InviteId = Id<"invite">;

/** Any UUID (RFC 4122 versions 1 to 8), in either case: ids are case-insensitive on input and stored lower-case. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/** A new random id, of the id type asked for (`newId<VaultId>()`, or inferred from where it goes). */
export function newId<T extends string = string>(): T {
  return randomUUID() as T;
}
