/**
 * People leave: an owner or admin takes a person out of the organization, or they
 * leave. The person's sessions end and they lose every vault of the organization at once: the
 * server refuses them from then on, whatever their wraps and the rosters still say. What the
 * server cannot do is sign a roster: each shared vault they were in keeps them on its signed
 * roster until a manager of the vault signs their `remove` link and rekeys it (the SDK walks the
 * admin through them, from the answer's list). A person who is the last owner of a shared vault
 * others are in is not removed: an owner is named there first, or no one could manage it after.
 */
import type { UserId, VaultId } from "../ids";
import { lastOrgOwner, lastOwnerOfVaults, notOrgManager, userNotFound } from "./refusals";
import type { Caller, OrgRole, VaultRole, VaultType } from "../types";
import { mayRemoveFromOrg } from "../../../protocol/org-roles";

/** A person as the organization holds them. */
export interface OrgPerson {
  userId: UserId;
  orgId: string;
  role: OrgRole;
  removedAt?: string;
}

/** One of the person's vaults: their role in it, and who else is in it. */
export interface HeldVault {
  vaultId: VaultId;
  type: VaultType;
  role: VaultRole;
  /** The vault's other members. */
  others: Array<{ userId: UserId; role: VaultRole }>;
}

/** What the removal leaves to do, per vault. */
export interface VaultAfterRemoval {
  vaultId: VaultId;
  /** `rekey`: others still hold the key the person held, and the roster still names them; `none`: nobody else is in it. */
  needs: "rekey" | "none";
}

/**
 * Whether `caller` may take `target` out of their organization (`404` when the target is not a
 * person of it, `403` when the caller may not, `400` for its last owner), given how many owners it has.
 */
export function decideOrgRemoval(caller: Caller, target: OrgPerson | null, orgOwners: number): OrgPerson {
  if (!target || target.orgId !== caller.orgId || target.removedAt !== undefined) throw userNotFound();
  if (!mayRemoveFromOrg(caller.role, target.role, caller.userId === target.userId)) throw notOrgManager("remove its people");
  if (target.role === "owner" && orgOwners <= 1) throw lastOrgOwner();
  return target;
}

/**
 * The person's vaults after they are gone: refused whole (`400`, naming them) when they are the
 * last owner of a shared vault others are in; else what each needs.
 */
export function decideVaultsAfterRemoval(held: readonly HeldVault[]): VaultAfterRemoval[] {
  const orphaned = held.filter((v) => v.role === "owner" && v.others.length > 0 && !v.others.some((o) => o.role === "owner"));
  if (orphaned.length > 0) throw lastOwnerOfVaults(orphaned.map((v) => v.vaultId));
  return held.map((v) => ({ vaultId: v.vaultId, needs: v.type === "shared" && v.others.length > 0 ? "rekey" : "none" }));
}
