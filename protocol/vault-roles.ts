/**
 * Who may do what in a vault (contract section 3), as plain predicates with no dependencies: the
 * server enforces them on every request (lib/domain/vaults/roles.ts) and the SDK applies the same
 * ones when it replays a vault's signed roster (protocol/formats/roster.ts), so the two can never disagree.
 */
export const VAULT_ROLES = ["owner", "admin", "member"] as const;
export type VaultRole = (typeof VAULT_ROLES)[number];

export const VAULT_TYPES = ["personal", "shared"] as const;
export type VaultType = (typeof VAULT_TYPES)[number];

/** Roles an invite may grant, and a member may be given when added to a vault. */
export const GRANTABLE_ROLES = ["member", "admin"] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

export type VaultAction =
  | "read" // read vault, list members, items CRUD
  | "rename"
  | "addMember"
  | "changeRole"
  | "rekey"
  | "delete"
  | "adoptRoster";

const ALLOWED: Record<VaultAction, readonly VaultRole[]> = {
  read: ["owner", "admin", "member"],
  rename: ["owner", "admin"],
  addMember: ["owner", "admin"],
  changeRole: ["owner"],
  rekey: ["owner", "admin"],
  delete: ["owner"],
  adoptRoster: ["owner"],
};

export function mayDo(role: VaultRole, action: VaultAction): boolean {
  return ALLOWED[action].includes(role);
}

/** Anyone may leave; owners and admins may remove a `member`; only owners remove an `admin` or `owner`. */
export function mayRemoveMember(actorRole: VaultRole, targetRole: VaultRole, removingSelf: boolean): boolean {
  return removingSelf || actorRole === "owner" || (actorRole === "admin" && targetRole === "member");
}

/** Owners left after removing (`newRole` null) or re-roling a member: never allowed to reach zero. */
export function ownersAfter(ownersBefore: number, targetRole: VaultRole, newRole: VaultRole | null): number {
  return ownersBefore - (targetRole === "owner" ? 1 : 0) + (newRole === "owner" ? 1 : 0);
}

/** After a removal, a shared vault with members left must be rekeyed before the removed member's key is useless. */
export function rekeyRequiredAfterRemoval(vaultType: VaultType, membersLeft: number): boolean {
  return vaultType === "shared" && membersLeft > 0;
}
