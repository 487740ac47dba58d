/**
 * Who may do what in a vault (contract section 3), and the last-owner rule, as the contract's
 * errors. The predicates themselves live in `sdk/vault-roles.ts`, shared with the SDK's roster
 * replay. Adapters call these inside their transactions on the state they read there, so every
 * store applies the same rules under the same locks.
 */
import { forbidden, invalid } from "../errors";
import { mayDo, mayRemoveMember, ownersAfter, type VaultAction } from "../../sdk/vault-roles";
import type { VaultRole, VaultType } from "./types";

export { mayDo, rekeyRequiredAfterRemoval, type VaultAction } from "../../sdk/vault-roles";

/** `403 FORBIDDEN` when a vault role may not take an action. */
export function assertMayDo(role: VaultRole, action: VaultAction): void {
  if (!mayDo(role, action)) throw forbidden(`A vault ${role} may not ${action.replace(/[A-Z]/g, (c) => " " + c.toLowerCase())}`);
}

/** Anyone may leave; owners and admins may remove a `member`; only owners remove an `admin` or `owner`. */
export function assertMayRemoveMember(actorRole: VaultRole, targetRole: VaultRole, removingSelf: boolean): void {
  if (!mayRemoveMember(actorRole, targetRole, removingSelf)) throw forbidden(`A vault ${actorRole} may not remove a vault ${targetRole}`);
}

/**
 * The last owner of a vault can never be removed or demoted: `400 INVALID` when the change would
 * leave no owner.
 */
export function assertOwnerRemains(ownersBefore: number, targetRole: VaultRole, newRole: VaultRole | null): void {
  if (ownersAfter(ownersBefore, targetRole, newRole) < 1) {
    throw invalid(newRole === null ? "The last owner of a vault cannot be removed" : "The last owner of a vault cannot be demoted");
  }
}

/** Personal vaults are never shared. */
export function assertShareable(vaultType: VaultType): void {
  if (vaultType === "personal") throw invalid("A personal vault cannot be shared");
}
