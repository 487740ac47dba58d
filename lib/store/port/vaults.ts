/**
 * Vaults and their members, with the signed roster and the rekey: everything that changes who
 * holds a vault's key. Each change runs in one transaction that locks the vault, reads a snapshot,
 * lets the domain decide (lib/domain/vault-decisions.ts) and writes.
 *
 * Non-members: a read answers null (the service turns it into 404), a change throws 404.
 */
import type { RosterEntry, RosterLink } from "../../domain/roster";
import type { GrantableRole, VaultRole, VaultType } from "../../domain/types";

/** A vault as one member sees it. */
export interface VaultView {
  vaultId: string;
  vaultName: string;
  vaultType: VaultType;
  orgId: string;
  encryptedVaultKey: string;
  senderId: string;
  wrapSignature: string;
  role: VaultRole;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface MemberEntry {
  userId: string;
  vaultId: string;
  vaultName: string;
  vaultType: VaultType;
  encryptedVaultKey: string;
  senderId: string;
  wrapSignature: string;
  role: VaultRole;
}

export interface WrappedKey {
  encryptedVaultKey: string;
  wrapSignature: string;
}

export interface NewVault extends WrappedKey {
  vaultId: string;
  orgId: string;
  name: string;
  type: VaultType;
  ownerId: string;
  /** The checked `create` link of a signed vault (its vaultId is the vault's), stored with it. */
  roster?: RosterEntry;
}

export interface NewMember extends WrappedKey {
  userId: string;
  role: GrantableRole;
  keyVersion?: number;
  /** Required on a signed vault, refused on another (lib/domain/roster.ts). */
  rosterLink?: RosterLink;
}

export interface RekeyInput {
  newKeys: Array<WrappedKey & { userId: string }>;
  /** `revision`, when given, is the one the client read and re-encrypted (checked: 409 if it changed since). */
  items: Array<{ itemId: string; encryptedData: string; encryptedName: string; revision?: number }>;
  keyVersion?: number;
  /** Required on a signed vault, refused on another. */
  rosterLink?: RosterLink;
}

/** A vault and the member acting on it (or reading it). */
export interface OnVault {
  vaultId: string;
  actorId: string;
}

export interface VaultStore {
  listVaults(userId: string): Promise<VaultView[]>;
  getVault(args: { vaultId: string; userId: string }): Promise<VaultView | null>;
  createVault(args: { vault: NewVault; now: string }): Promise<VaultView>;
  renameVault(args: OnVault & { name: string; now: string }): Promise<VaultView>;
  deleteVault(args: OnVault): Promise<void>;

  listMembers(args: OnVault): Promise<MemberEntry[] | null>;
  addMember(args: OnVault & { member: NewMember; now: string }): Promise<void>;
  changeMemberRole(args: OnVault & { targetId: string; role: VaultRole; now: string; rosterLink?: RosterLink }): Promise<MemberEntry>;
  /** Refuses to remove the last owner (lib/domain/vault-rules.ts); the vault then needs a rekey. */
  removeMember(
    args: OnVault & { targetId: string; now: string; rosterLink?: RosterLink },
  ): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }>;

  // The signed roster (sdk/roster.ts): every link is stored in the transaction of the change it describes.
  /** Makes a vault without a roster a signed one, with an owner's `adopt` link. */
  adoptRoster(args: OnVault & { link: RosterLink; now: string }): Promise<void>;
  /** The vault's chain in seq order (empty without a roster); null when the caller is not a member. */
  getRoster(args: OnVault): Promise<RosterLink[] | null>;

  /** Every wrap and item replaced, and the key version moved on, or nothing. */
  rekeyVault(args: OnVault & { rekey: RekeyInput; now: string }): Promise<void>;
}
