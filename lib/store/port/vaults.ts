/**
 * Vaults and their members, with the signed roster and the rekey: everything that changes who
 * holds a vault's key. Each change runs in one transaction that locks the vault, reads a snapshot,
 * lets the domain decide (lib/domain/vaults/decisions.ts) and writes.
 *
 * Non-members: every method, read or change, throws NOT_FOUND ("Vault not found") for a vault the
 * caller is not a member of, exactly as for one that does not exist: no answer tells them apart.
 */
import type { OrgId, UserId, VaultId } from "../../domain/ids";
import type { RosterEntry, RosterLink } from "../../domain/vaults/roster";
import type { RekeyRequest } from "../../domain/vaults/rekey-plan";
import type { GrantableRole, VaultRole, VaultType } from "../../domain/types";
import type { WithEvents } from "./outbox";
import type { VaultLimits } from "../../domain/vaults/limits";

/** A vault as one member sees it. */
export interface VaultView {
  vaultId: VaultId;
  vaultName: string;
  vaultType: VaultType;
  orgId: OrgId;
  encryptedVaultKey: string;
  senderId: UserId;
  wrapSignature: string;
  role: VaultRole;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface MemberEntry {
  userId: UserId;
  vaultId: VaultId;
  vaultName: string;
  vaultType: VaultType;
  encryptedVaultKey: string;
  senderId: UserId;
  wrapSignature: string;
  role: VaultRole;
}

export interface WrappedKey {
  encryptedVaultKey: string;
  wrapSignature: string;
}

export interface NewVault extends WrappedKey {
  vaultId: VaultId;
  orgId: OrgId;
  name: string;
  type: VaultType;
  ownerId: UserId;
  /** The checked `create` link of a signed vault (its vaultId is the vault's), stored with it. */
  roster?: RosterEntry;
  /** A personal vault: the account key version its wrap is under (`decideWrapVersion`); unchecked when absent (older clients). */
  accountVersion?: number;
}

export interface NewMember extends WrappedKey {
  userId: UserId;
  role: GrantableRole;
  keyVersion?: number;
  /** Required on a signed vault, refused on another (lib/domain/vaults/roster.ts). */
  rosterLink?: RosterLink;
}

/** A rekey request as the domain plans it (lib/domain/vaults/rekey-plan.ts). */
export type RekeyInput = RekeyRequest;

/** A vault and the member acting on it (or reading it). */
export interface OnVault {
  vaultId: VaultId;
  actorId: UserId;
}

export interface VaultStore {
  listVaults(userId: UserId): Promise<VaultView[]>;
  getVault(args: { vaultId: VaultId; userId: UserId }): Promise<VaultView>;
  createVault(args: { vault: NewVault; now: string } & WithEvents): Promise<VaultView>;
  /** On a signed vault, with its `rename` link. */
  renameVault(args: OnVault & { name: string; now: string; rosterLink?: RosterLink } & WithEvents): Promise<VaultView>;
  deleteVault(args: OnVault & WithEvents): Promise<void>;

  listMembers(args: OnVault): Promise<MemberEntry[]>;
  addMember(args: OnVault & { member: NewMember; now: string } & WithEvents): Promise<void>;
  changeMemberRole(
    args: OnVault & { targetId: UserId; role: VaultRole; now: string; rosterLink?: RosterLink } & WithEvents,
  ): Promise<MemberEntry>;
  /** Refuses to remove the last owner (lib/domain/vaults/roles.ts); the vault then needs a rekey. */
  removeMember(
    args: OnVault & { targetId: UserId; now: string; rosterLink?: RosterLink } & WithEvents,
  ): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }>;

  // The signed roster (protocol/formats/roster.ts): every link is stored in the transaction of the change it
  // describes. A vault without one starts it with the `adopt` link of a rekey.
  /** The vault's chain in seq order (empty without a roster). */
  getRoster(args: OnVault): Promise<RosterLink[]>;

  /** Every wrap and item replaced, and the key version moved on, or nothing. */
  /** With `limits`, 413 when the new items would take the vault past them (decideRekeySize). */
  rekeyVault(args: OnVault & { rekey: RekeyInput; now: string; limits?: VaultLimits } & WithEvents): Promise<void>;
}
