/** The documents of items: the items, their revisions, the trash, the change numbers and the signed item log's links. */
import type { ItemId, VaultId } from "../../../domain/ids";
import type { ItemRecord, ItemRevisionRecord, TrashedItemRecord } from "../../port";

/** An item; `_id` is `itemKey(vaultId, itemId)`: item ids are unique per vault, as in SQL. */
export type ItemDoc = ItemRecord & { _id: string };

/**
 * A revision an update replaced (lib/domain/items/history.ts): the item's ciphertexts as they were;
 * `_id` is `itemRevisionKey(vaultId, itemId, revision)`, one per item and revision, as the SQL primary key.
 */
export type ItemRevisionDoc = ItemRevisionRecord & { _id: string };

/** An item deleted into its vault's trash, as it was; `_id` is its `itemKey`, as in `items`. */
export type TrashedItemDoc = TrashedItemRecord & { _id: string };

/** Per item, the number of its last change (SQL: `item_changes`); an item no longer in `items` is a tombstone. */
export interface ItemChangeDoc {
  /** `itemKey(vaultId, itemId)`. */
  _id: string;
  vaultId: VaultId;
  itemId: string;
  seq: number;
}

/** One link of a vault's signed item log (unique on vaultId + seq). */
export interface ItemLinkDoc {
  /** `rosterLinkKey(vaultId, seq)`, the same form. */
  _id: string;
  vaultId: VaultId;
  seq: number;
  /** The link's canonical JSON, signature included. */
  link: string;
  createdAt: string;
}

/** An item's document id: its vault and its id (a client's id may be used in another vault too). */
export function itemKey(vaultId: VaultId, itemId: ItemId): string {
  return `${vaultId}:${itemId}`;
}

export function itemRevisionKey(vaultId: VaultId, itemId: ItemId, revision: number): string {
  return `${vaultId}/${itemId}/${revision}`;
}

export function toItem(d: ItemDoc): ItemRecord {
  return {
    itemId: d.itemId,
    vaultId: d.vaultId,
    encryptedData: d.encryptedData,
    encryptedName: d.encryptedName,
    revision: d.revision,
    keyVersion: d.keyVersion,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function toRevision(d: ItemRevisionDoc): ItemRevisionRecord {
  return {
    itemId: d.itemId,
    vaultId: d.vaultId,
    revision: d.revision,
    encryptedData: d.encryptedData,
    encryptedName: d.encryptedName,
    keyVersion: d.keyVersion,
    createdAt: d.createdAt,
    replacedAt: d.replacedAt,
  };
}

export function toTrashed(d: TrashedItemDoc): TrashedItemRecord {
  return { ...toItem(d), deletedAt: d.deletedAt, deletedBy: d.deletedBy };
}
