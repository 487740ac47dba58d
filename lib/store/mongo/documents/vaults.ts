/** The documents of vaults: the vault, its members, its signed roster's links. */
import type { ItemLogHead } from "../../../domain/items/log";
import type { OrgId, UserId, VaultId } from "../../../domain/ids";
import type { VaultRole, VaultType } from "../../../domain/types";
import type { MemberEntry, VaultView } from "../../port";

export interface VaultDoc {
  _id: VaultId;
  orgId: OrgId;
  name: string;
  type: VaultType;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
  /**
   * Bumped by every transaction that changes the vault, its members or its items. Two such
   * transactions write the same document, so MongoDB lets one commit and makes the other retry
   * on the new state: the counterpart of the SQL adapter's lock on the vault row.
   */
  writeSeq?: number;
  /** The signed roster's head; absent for a vault without one. */
  roster?: { seq: number; hash: string };
  /** The signed item log's head (protocol/formats/item-log.ts); absent for a vault without one. */
  itemLog?: { seq: number; hash: string; baseSeq: number; rosterSeq: number };
  /**
   * The vault's last item change number and that of its last reset (lib/domain/items/changes.ts).
   * Absent on a vault of an earlier release: read as a reset numbered 1 (as SQL's migration 016).
   */
  changeSeq?: number;
  resetSeq?: number;
}

/** A vault document's item-log head, as the domain reads it. */
export function itemLogHeadOf(vault: VaultDoc): ItemLogHead | null {
  return vault.itemLog ? { vaultId: vault._id, keyVersion: vault.keyVersion, head: vault.itemLog.hash, ...vault.itemLog } : null;
}

/** One link of a vault's signed roster (unique on vaultId + seq, as the SQL primary key). */
export interface RosterLinkDoc {
  /** `rosterLinkKey(vaultId, seq)`. */
  _id: string;
  vaultId: VaultId;
  seq: number;
  hash: string;
  /** The link's canonical JSON, signature included (stored as text: re-serializing a document could reorder it). */
  link: string;
  createdAt: string;
}

export function rosterLinkKey(vaultId: VaultId, seq: number): string {
  return `${vaultId}:${seq}`;
}

/** One per member and vault (unique on vaultId + userId). */
export interface MemberDoc {
  vaultId: VaultId;
  userId: UserId;
  role: VaultRole;
  encryptedVaultKey: string;
  senderId: UserId;
  wrapSignature: string;
  createdAt: string;
  updatedAt: string;
}

export function toVaultView(v: VaultDoc, m: MemberDoc): VaultView {
  return {
    vaultId: v._id,
    vaultName: v.name,
    vaultType: v.type,
    orgId: v.orgId,
    encryptedVaultKey: m.encryptedVaultKey,
    senderId: m.senderId,
    wrapSignature: m.wrapSignature,
    role: m.role,
    keyVersion: v.keyVersion,
    rekeyRequired: v.rekeyRequired,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}

export function toMemberEntry(v: VaultDoc, m: MemberDoc): MemberEntry {
  return {
    userId: m.userId,
    vaultId: v._id,
    vaultName: v.name,
    vaultType: v.type,
    encryptedVaultKey: m.encryptedVaultKey,
    senderId: m.senderId,
    wrapSignature: m.wrapSignature,
    role: m.role,
  };
}

/** Vault rows ordered as the contract lists them: by createdAt, then id. */
export function byCreatedThenId<T>(createdAt: (x: T) => string, id: (x: T) => string) {
  return (a: T, b: T) => (createdAt(a) < createdAt(b) ? -1 : createdAt(a) > createdAt(b) ? 1 : id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);
}
