/** Items: ciphertext in a vault, written under the vault's current key version. */
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import type { OnVault } from "./vaults";
import type { VaultLimits } from "../../domain/vaults/limits";
import type { ItemPageRequest } from "../../domain/items/pages";
import type { WithEvents } from "./outbox";
import type { ItemLink } from "../../domain/items/log";

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

/** A delta read's answer (lib/domain/items/changes.ts): with `full`, no items, and the client reads the whole list. */
export interface ItemChanges {
  items: ItemRecord[];
  /** Items changed since that are no longer in the vault (deleted, or in its trash). */
  deleted: string[];
  /** What to pass as `since` next. */
  cursor: number;
  full: boolean;
}

/** A revision an update replaced, as it was (lib/domain/items/history.ts). */
export interface ItemRevisionRecord {
  itemId: ItemId;
  vaultId: VaultId;
  revision: number;
  encryptedData: string;
  encryptedName: string;
  keyVersion: number;
  /** When it was written, and when the next revision replaced it. */
  createdAt: string;
  replacedAt: string;
}

/** An item in the vault's trash, as it was deleted. */
export interface TrashedItemRecord extends ItemRecord {
  deletedAt: string;
  deletedBy: UserId;
}

/** What a vault keeps of its past: revisions per item (ITEM_HISTORY, 0: none). */
export interface HistoryPolicy {
  keep: number;
}

/** One item of a vault, and the member acting on it. */
export type OnItem = OnVault & { itemId: ItemId };

export interface ItemStore {
  /** In order (`createdAt`, then `itemId`): every item, or with `page`, at most `page.limit + 1` after `page.after` (the one more tells whether a page follows). */
  listItems(args: OnVault & { page?: ItemPageRequest }): Promise<ItemRecord[]>;
  getItem(args: OnItem): Promise<ItemRecord>;
  /** The changes after `since` (a delta read, lib/domain/items/changes.ts); members only. */
  listChanges(args: OnVault & { since: number }): Promise<ItemChanges>;
  /** 413 when the vault would pass `limits` (decideVaultGrowth). */
  createItem(args: OnItem & { write: ItemWrite; limits: VaultLimits; now: string; itemLink?: ItemLink } & WithEvents): Promise<ItemRecord>;
  /** With `revision`, 409 unless it is the item's current one; 413 when a larger ciphertext would take the vault past `limits`. */
  updateItem(
    args: OnItem & {
      write: ItemWrite & { revision?: number };
      limits: VaultLimits;
      /** Default: DEFAULT_ITEM_HISTORY (lib/domain/items/history.ts). */
      history?: HistoryPolicy;
      now: string;
      itemLink?: ItemLink;
    } & WithEvents,
  ): Promise<ItemRecord>;
  /** Moves the item, with its history, to the vault's trash. */
  deleteItem(args: OnItem & { itemLink?: ItemLink; now: string } & WithEvents): Promise<void>;
  /** The revisions kept of one item (`itemId`) or of every item, the trashed ones' included; newest first by item. */
  listHistory(args: OnVault & { itemId?: ItemId }): Promise<ItemRevisionRecord[]>;
  /** The vault's trash, most recently deleted first. */
  listTrash(args: OnVault): Promise<TrashedItemRecord[]>;
  /** Brings a trashed item back as it was, at its next revision (404 when it is not in the trash). */
  restoreItem(args: OnItem & { itemLink?: ItemLink; now: string } & WithEvents): Promise<ItemRecord>;
  /** Deletes a trashed item and its history for good (404 when it is not in the trash). */
  purgeItem(args: OnItem & WithEvents): Promise<void>;
  /**
   * Adds many items at once (an import), atomically: all or none; 413 past the vault's limits.
   * On a vault with an item log, with its `import` link (the server computes the set digest it must name).
   */
  importItems(
    args: OnVault & {
      items: Array<{ itemId: ItemId; encryptedData: string; encryptedName: string }>;
      keyVersion?: number;
      limits: VaultLimits;
      now: string;
      itemLink?: ItemLink;
    } & WithEvents,
  ): Promise<{ created: number }>;
  /** Records the events of an export a member made (the export is made on the client): members only. */
  recordExport(args: OnVault & WithEvents): Promise<void>;
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
