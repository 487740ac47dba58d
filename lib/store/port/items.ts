/** Items: ciphertext in a vault, written under the vault's current key version. */
import type { ItemId, VaultId } from "../../domain/ids";
import type { OnVault } from "./vaults";
import type { VaultLimits } from "../../domain/vault-limits";
import type { ItemPageRequest } from "../../domain/item-pages";
import type { WithEvents } from "./outbox";
import type { ItemLink } from "../../domain/item-log";

export interface ItemRecord {
  itemId: ItemId;
  vaultId: VaultId;
  encryptedData: string;
  encryptedName: string;
  revision: number;
  /** The vault key version the item was last written under. */
  keyVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface ItemWrite {
  encryptedData: string;
  encryptedName: string;
  /** The key version the client encrypted under; refused with 409 when it is not the current one. */
  keyVersion?: number;
}

/** One item of a vault, and the member acting on it. */
export type OnItem = OnVault & { itemId: ItemId };

export interface ItemStore {
  /** In order (`createdAt`, then `itemId`): every item, or with `page`, at most `page.limit + 1` after `page.after` (the one more tells whether a page follows). */
  listItems(args: OnVault & { page?: ItemPageRequest }): Promise<ItemRecord[]>;
  getItem(args: OnItem): Promise<ItemRecord>;
  /** 413 when the vault would pass `limits` (decideVaultGrowth). */
  createItem(args: OnItem & { write: ItemWrite; limits: VaultLimits; now: string; itemLink?: ItemLink } & WithEvents): Promise<ItemRecord>;
  /** With `revision`, 409 unless it is the item's current one; 413 when a larger ciphertext would take the vault past `limits`. */
  updateItem(
    args: OnItem & { write: ItemWrite & { revision?: number }; limits: VaultLimits; now: string; itemLink?: ItemLink } & WithEvents,
  ): Promise<ItemRecord>;
  deleteItem(args: OnItem & { itemLink?: ItemLink; now: string } & WithEvents): Promise<void>;
  /** Appends a checkpoint link (the server computes the item set's digest it must name). */
  appendCheckpoint(args: OnVault & { itemLink: ItemLink; now: string }): Promise<void>;
  /** The vault's item log from seq `from` (default: its last base link), at most `limit` links; members only. */
  readItemLog(args: OnVault & { from?: number; limit: number }): Promise<ItemLogPage>;
}

export interface ItemLogPage {
  /** The links as stored (canonical JSON, parsed). */
  links: unknown[];
  /** The seq of the last checkpoint or rekey link; null for a vault without an item log. */
  baseSeq: number | null;
  /** The seq the next page starts at, or null. */
  next: number | null;
}
