/**
 * Who may do what in a vault (contract section 3), and the last-owner rule, as the contract's
 * errors. The predicates themselves live in `protocol/vault-roles.ts`, shared with the SDK's roster
 * replay. Adapters call these inside their transactions on the state they read there, so every
 * store applies the same rules under the same locks.
 */
import { lastOwner, mayNotRemove, personalNotShareable, roleMayNot } from "./refusals";
import { mayDo, mayRemoveMember, ownersAfter, type VaultAction } from "../../../protocol/vault-roles";
import type { VaultRole, VaultType } from "../types";

export { mayDo, rekeyRequiredAfterRemoval, type VaultAction } from "../../../protocol/vault-roles";

/** `403 FORBIDDEN` when a vault role may not take an action. */
export function assertMayDo(role: VaultRole, action: VaultAction): void {
  if (!mayDo(role, action)) throw roleMayNot(role, action);
}

/** Anyone may leave; owners and admins may remove a `member`; only owners remove an `admin` or `owner`. */
export function assertMayRemoveMember(actorRole: VaultRole, targetRole: VaultRole, removingSelf: boolean): void {
  if (!mayRemoveMember(actorRole, targetRole, removingSelf)) throw mayNotRemove(actorRole, targetRole);
}

/**
 * The last owner of a vault can never be removed or demoted: `400 INVALID` when the change would
 * leave no owner.
 */
export function assertOwnerRemains(ownersBefore: number, targetRole: VaultRole, newRole: VaultRole | null): void {
  if (ownersAfter(ownersBefore, targetRole, newRole) < 1) {
    throw lastOwner(newRole === null);
  }
}

/** Personal vaults are never shared. */
export function assertShareable(vaultType: VaultType): void {
  if (vaultType === "personal") throw personalNotShareable();
}
