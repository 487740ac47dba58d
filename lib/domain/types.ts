/** The values the contract names, as types. */
import type { InviteId, OrgId, UserId } from "./ids";

export const VAULT_ROLES = ["owner", "admin", "member"] as const;
export type VaultRole = (typeof VAULT_ROLES)[number];

export const VAULT_TYPES = ["personal", "shared"] as const;
export type VaultType = (typeof VAULT_TYPES)[number];

export const ORG_ROLES = ["owner", "admin", "member"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** Roles an invite may grant, and a member may be given when added to a vault. */
export const GRANTABLE_ROLES = ["admin", "member"] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

export type Kdf =
  | { algorithm: "argon2id"; salt: string; iterations: number; memoryKiB: number; parallelism: number }
  | { algorithm: "pbkdf2-sha256"; salt: string; iterations: number };

/**
 * A statement signed by its holder (sdk/statements.ts): only the version and the signature travel
 * and are stored; the signed values are the holder's own fields (a user's id, email, keys, KDF).
 */
export interface SignedStatement {
  version: number;
  signature: string;
}

/** An invitee's MAC of their key statement under the invite link's binding secret, and the invite it answers. */
export interface InviteBinding {
  inviteId: InviteId;
  mac: string;
}

/** The identity an access token carries, as the services see it. */
export interface Caller {
  userId: UserId;
  orgId: OrgId;
  role: OrgRole;
}
