/**
 * Items (contract section 4): their limits, and what each write decides on the state it reads
 * under the vault's lock. Both store adapters (lib/store/sql/items.ts, lib/store/mongo/items.ts)
 * read that state, call the `decide*` here, and store what it returns: they keep no rule.
 */
import { base64Bytes } from "../encoding";
import { itemDigestOf, type ItemChange, type LockedForItemLog } from "./log";
import { assertKeyVersion } from "../vaults/rekey";
import {
  importEmpty,
  importIdTaken,
  importIdTwice,
  importTooLarge,
  itemNotFound,
  itemIdInTrash,
  itemIdTaken,
  itemTooLarge,
  staleRevision,
  vaultNotFound,
} from "./refusals";
import type { VaultRole } from "../types";
import { assertMayDo } from "../vaults/roles";
import { itemBytes, type VaultSize } from "../vaults/limits";

export const MAX_ENCRYPTED_DATA_BYTES = 256 * 1024;
export const MAX_ENCRYPTED_NAME_BYTES = 4 * 1024;
/** Items one bulk request (an import) may add. */
export const MAX_IMPORT_ITEMS = 5_000;

export function assertItemSizes(item: { encryptedData: string; encryptedName: string }): void {
  if (base64Bytes(item.encryptedData) > MAX_ENCRYPTED_DATA_BYTES) throw itemTooLarge("encryptedData", "256 KiB");
  if (base64Bytes(item.encryptedName) > MAX_ENCRYPTED_NAME_BYTES) throw itemTooLarge("encryptedName", "4 KiB");
}

/** An item's ciphertexts and revision, as stored. */
export interface StoredItemState {
  revision: number;
  encryptedName: string;
  encryptedData: string;
}

/** What an item write finds under the vault's lock. */
export interface ItemSnapshot {
  /** The caller's role in the vault; null when the vault does not exist or they are not a member. */
  role: VaultRole | null;
  keyVersion: number;
  /** The item the write names, as stored (undefined: there is none). */
  item: StoredItemState | undefined;
}

/** A write the client states: its ciphertexts, and optionally the key version and revision it was made on. */
export interface ItemWriteRequest {
  encryptedName: string;
  encryptedData: string;
  keyVersion?: number;
  revision?: number;
}

/** What to store: the item's revision after the write, the growth to check against the vault's limits (none: it does not grow), and the log's change. */
export interface ItemWriteDecision {
  revision: number;
  growth: VaultSize | null;
  change: ItemChange;
}

/** The caller may work with the vault's items: a member whose role the table lets read (and write) items. */
function decideItemAccess(s: Pick<ItemSnapshot, "role">): void {
  if (s.role === null) throw vaultNotFound();
  assertMayDo(s.role, "read");
}

function requireItem(s: ItemSnapshot): StoredItemState {
  if (!s.item) throw itemNotFound();
  return s.item;
}

/** A new item: an id not taken (`taken`: the vault holds one by that id; `inTrash`: its trash does), at the vault's key version; it grows the vault by one item and its bytes. */
export function decideItemCreate(
  s: Omit<ItemSnapshot, "item"> & { taken: boolean; inTrash?: boolean },
  itemId: string,
  write: ItemWriteRequest,
): ItemWriteDecision {
  decideItemAccess(s);
  assertKeyVersion(s.keyVersion, write.keyVersion);
  if (s.taken) throw itemIdTaken();
  if (s.inTrash) throw itemIdInTrash();
  return {
    revision: 1,
    growth: { items: 1, bytes: itemBytes(write) },
    change: { op: "create", itemId, after: { revision: 1, sha256: itemDigestOf(write) } },
  };
}

/** A new revision of an item: on the stored revision (when the client states one), at the vault's key version. */
export function decideItemUpdate(s: ItemSnapshot, itemId: string, write: ItemWriteRequest): ItemWriteDecision {
  decideItemAccess(s);
  const item = requireItem(s);
  if (write.revision !== undefined && write.revision !== item.revision) throw staleRevision(item.revision, write.revision);
  assertKeyVersion(s.keyVersion, write.keyVersion);
  const growth = itemBytes(write) - itemBytes(item);
  return {
    revision: item.revision + 1,
    growth: growth > 0 ? { items: 0, bytes: growth } : null,
    change: {
      op: "update",
      itemId,
      before: { revision: item.revision, sha256: itemDigestOf(item) },
      after: { revision: item.revision + 1, sha256: itemDigestOf(write) },
    },
  };
}

/** An item deleted: it must exist; the log's tombstone names what it held. */
export function decideItemDelete(s: ItemSnapshot, itemId: string): ItemChange {
  decideItemAccess(s);
  const item = requireItem(s);
  return { op: "delete", itemId, before: { revision: item.revision, sha256: itemDigestOf(item) } };
}

/**
 * Items added in one request (an import): between 1 and MAX_IMPORT_ITEMS, each id once and none the
 * vault holds, in its items or its trash (`taken`), at the vault's key version; the vault grows by
 * all of them at once. On a vault with an item log the link is an `import`, a base link naming the
 * whole item set after it (the caller computes it from what it stores).
 */
export function decideItemImport(
  s: Omit<ItemSnapshot, "item"> & { taken: ReadonlySet<string> },
  items: ReadonlyArray<{ itemId: string; encryptedName: string; encryptedData: string }>,
  keyVersion: number | undefined,
): { growth: VaultSize } {
  decideItemAccess(s);
  assertKeyVersion(s.keyVersion, keyVersion);
  if (items.length === 0) throw importEmpty();
  if (items.length > MAX_IMPORT_ITEMS) throw importTooLarge(MAX_IMPORT_ITEMS);
  const seen = new Set<string>();
  let bytes = 0;
  for (const i of items) {
    if (seen.has(i.itemId)) throw importIdTwice(i.itemId);
    if (s.taken.has(i.itemId)) throw importIdTaken(i.itemId);
    seen.add(i.itemId);
    bytes += itemBytes(i);
  }
  return { growth: { items: items.length, bytes } };
}

/** A read of the vault's items (list, get), or an item write's lock: a member whose role may read; no role (not a member) is refused. */
export function decideItemRead(role: null): never;
export function decideItemRead(role: VaultRole | null): void;
export function decideItemRead(role: VaultRole | null): void {
  decideItemAccess({ role });
}

/** What an adapter locks for an item write: the item log's state, and the caller's role (a non-member is refused by the lock, with decideItemRead). */
export interface LockedForItems extends LockedForItemLog {
  role: VaultRole | null;
}

/** The snapshot a write decides on: what the lock found, and the item as stored. */
export const snapshotOf = (locked: LockedForItems, item: StoredItemState | undefined): ItemSnapshot => ({
  role: locked.role,
  keyVersion: locked.keyVersion,
  item,
});
