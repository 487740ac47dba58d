/** The values the contract names, as types. */
import type { InviteId, OrgId, UserId } from "./ids";

import type { OrgRole } from "../../protocol/org-roles";

// Each role and type union is declared once, in the SDK, beside the predicates clients share.
export { GRANTABLE_ROLES, VAULT_ROLES, VAULT_TYPES, type GrantableRole, type VaultRole, type VaultType } from "../../protocol/vault-roles";
export { ORG_ROLES, type OrgRole } from "../../protocol/org-roles";

export type Kdf =
  | { algorithm: "argon2id"; salt: string; iterations: number; memoryKiB: number; parallelism: number }
  | { algorithm: "pbkdf2-sha256"; salt: string; iterations: number };

/**
 * A statement signed by its holder (protocol/formats/statements.ts): only the version and the signature travel
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
  /** The session (login) the token belongs to (lib/domain/accounts/sessions.ts); absent in tokens from before sessions. */
  sessionId?: string;
  /** A login that may only enrol a second factor: its organization requires one and it has none (lib/domain/accounts/second-factors.ts). */
  enrolOnly?: true;
  /** A session emergency access opened to read the account (lib/domain/emergency/decisions.ts): it may only read. */
  readOnly?: true;
}
