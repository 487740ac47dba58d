/**
 * Who may do what in a vault (contract section 3), and the last-owner rule.
 * Adapters call these inside their transactions on the state they read there, so every store
 * applies the same rules under the same locks.
 */
import { forbidden, invalid } from "../errors";
import type { VaultRole, VaultType } from "./types";

export type VaultAction =
  | "read" // read vault, list members, items CRUD
  | "rename"
  | "addMember"
  | "changeRole"
  | "rekey"
  | "delete";

const ALLOWED: Record<VaultAction, readonly VaultRole[]> = {
  read: ["owner", "admin", "member"],
  rename: ["owner", "admin"],
  addMember: ["owner", "admin"],
  changeRole: ["owner"],
  rekey: ["owner", "admin"],
  delete: ["owner"],
};

export function mayDo(role: VaultRole, action: VaultAction): boolean {
  return ALLOWED[action].includes(role);
}

/** `403 FORBIDDEN` when a vault role may not take an action. */
export function assertMayDo(role: VaultRole, action: VaultAction): void {
  if (!mayDo(role, action)) throw forbidden(`A vault ${role} may not ${action === "read" ? "read this vault" : action.replace(/[A-Z]/g, (c) => " " + c.toLowerCase())}`);
}

/** Anyone may leave; owners and admins may remove a `member`; only owners remove an `admin` or `owner`. */
export function assertMayRemoveMember(actorRole: VaultRole, targetRole: VaultRole, removingSelf: boolean): void {
  if (removingSelf) return;
  if (actorRole === "owner") return;
  if (actorRole === "admin" && targetRole === "member") return;
  throw forbidden(`A vault ${actorRole} may not remove a vault ${targetRole}`);
}

/**
 * The last owner of a vault can never be removed or demoted: `400 INVALID` when the change would
 * leave `ownersAfter` at zero.
 */
export function assertOwnerRemains(ownersBefore: number, targetRole: VaultRole, newRole: VaultRole | null): void {
  const ownersAfter = ownersBefore - (targetRole === "owner" ? 1 : 0) + (newRole === "owner" ? 1 : 0);
  if (ownersAfter < 1) {
    throw invalid(newRole === null ? "The last owner of a vault cannot be removed" : "The last owner of a vault cannot be demoted");
  }
}

/** Personal vaults are never shared. */
export function assertShareable(vaultType: VaultType): void {
  if (vaultType === "personal") throw invalid("A personal vault cannot be shared");
}

/** After a removal, a shared vault with members left must be rekeyed before the removed member's key is useless. */
export function rekeyRequiredAfterRemoval(vaultType: VaultType, membersLeft: number): boolean {
  return vaultType === "shared" && membersLeft > 0;
}
