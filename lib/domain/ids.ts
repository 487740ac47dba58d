/**
 * Identifiers, each a UUID string of its own type: a user's id cannot be passed where a vault's is
 * expected (`removeMember({ vaultId: userId, ... })` does not compile). At runtime they are plain
 * strings. An id becomes typed where it is checked: a route's parameters (lib/http/routes.ts), an
 * access token's claims, a row read from the store, or `newId()` for a new one.
 */
declare const kind: unique symbol;
type Id<Kind extends string> = string & { readonly [kind]: Kind };

export type UserId = Id<"user">;
export type OrgId = Id<"org">;
export type VaultId = Id<"vault">;
export type ItemId = Id<"item">;
export type InviteId = Id<"invite">;
