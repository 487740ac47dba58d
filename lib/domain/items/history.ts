/**
 * Item history and the trash: what a vault keeps of its items' past, and what a rekey
 * must do with it. Both store adapters read the state under the vault's lock, call the rules here
 * and store what they return.
 *
 * - **History.** An update keeps the revision it replaces (its ciphertexts, as they were) while
 *   the item has fewer than ITEM_HISTORY kept; the oldest go first. History is the one part of a
 *   vault that gives way: when a write needs the room, the vault's oldest revisions are dropped
 *   until its items, trash and history fit in VAULT_MAX_BYTES and VAULT_MAX_ITEMS (entries of
 *   all three) again. So history never makes a write fail, and a full vault, history and trash
 *   included, still fits in one rekey.
 * - **Trash.** A delete moves the item, with its history, to the vault's trash. It leaves the
 *   item list (and the item log's item set: the log's `delete` link) and counts towards the vault's
 *   limits until it is purged, by a member or when it has been there TRASH_RETENTION (30 days). A restore brings
 *   it back as it was, at the next revision, with a `restore` link.
 * - **Rekey.** History and trash are re-encrypted by the rekey that re-encrypts the items (its
 *   optional `history` and `trash`), each entry at most once and only entries the vault holds;
 *   every entry it leaves out is dropped in the same transaction. Nothing is kept under a key a
 *   removed member holds, and a client that knows nothing of history still rekeys.
 */
import { itemDigestOf, type ItemChange } from "./log";
import type { StoredItemState } from "./decisions";
import { decideItemRead } from "./decisions";
import { notInTrash } from "./refusals";
import { notInVault, revisionOfDroppedItem, twiceInSet } from "../vaults/refusals";
import type { VaultRole } from "../types";
import type { VaultSize } from "../vaults/limits";

/** Revisions kept per item: ITEM_HISTORY's default and most. */
export const DEFAULT_ITEM_HISTORY = 10;
export const MAX_ITEM_HISTORY = 100;

/** A revision kept in history, by item and revision. */
export interface RevisionKey {
  itemId: string;
  revision: number;
}

/** An item brought back out of the trash: at the revision after the one it was deleted at, with the same ciphertexts. */
export function decideItemRestore(
  s: { role: VaultRole | null; trashed: StoredItemState | undefined },
  itemId: string,
): { revision: number; change: ItemChange } {
  decideItemRead(s.role);
  if (!s.trashed) throw notInTrash();
  const revision = s.trashed.revision + 1;
  return { revision, change: { op: "restore", itemId, after: { revision, sha256: itemDigestOf(s.trashed) } } };
}

/** An item purged from the trash (for good, with its history): any member, an item that is there. */
export function decideTrashPurge(s: { role: VaultRole | null; trashed: boolean }): void {
  decideItemRead(s.role);
  if (!s.trashed) throw notInTrash();
}

/** An item's revisions (stored, once the new one is kept) beyond the `keep` newest: to drop, oldest first. */
export function revisionsBeyond(revisions: readonly number[], keep: number): number[] {
  const sorted = [...revisions].sort((a, b) => a - b);
  return sorted.slice(0, Math.max(0, sorted.length - keep));
}

/**
 * The history to drop so that a vault `over` its limits (bytes, and entries: its items, trash and
 * revisions together) fits again: the oldest revisions first (`oldestFirst`, each with its
 * bytes), as few as make the room. Only history gives way: when all of it is not enough, all of
 * it is dropped (the write itself was checked against the items and trash alone).
 */
export function historyToDrop(over: VaultSize, oldestFirst: ReadonlyArray<RevisionKey & { bytes: number }>): RevisionKey[] {
  const drop: RevisionKey[] = [];
  let bytes = 0;
  for (const r of oldestFirst) {
    if (bytes >= over.bytes && drop.length >= over.items) break;
    drop.push({ itemId: r.itemId, revision: r.revision });
    bytes += r.bytes;
  }
  return drop;
}

export const revisionKey = (r: RevisionKey): string => `${r.itemId}/${r.revision}`;

/**
 * A rekey's history and trash: each entry named at most once, and only entries the vault holds
 * (`400 INVALID`, field `history` or `trash`); what it leaves out is dropped (`dropHistory`,
 * `dropTrash`), never kept under the old key.
 */
export function decideRekeyExtras(
  stored: { history: ReadonlyArray<RevisionKey>; trash: readonly string[] },
  given: { history: ReadonlyArray<RevisionKey>; trash: ReadonlyArray<{ itemId: string }> },
): { dropHistory: RevisionKey[]; dropTrash: string[] } {
  const history = new Map(stored.history.map((r) => [revisionKey(r), r]));
  const seen = new Set<string>();
  for (const r of given.history) {
    const key = revisionKey(r);
    if (seen.has(key)) throw twiceInSet("revision", key, "history");
    if (!history.has(key)) throw notInVault("revision", key, "history");
    seen.add(key);
  }
  const trash = new Set(stored.trash);
  const seenTrash = new Set<string>();
  for (const t of given.trash) {
    if (seenTrash.has(t.itemId)) throw twiceInSet("trashed item", t.itemId, "trash");
    if (!trash.has(t.itemId)) throw notInVault("trashed item", t.itemId, "trash");
    seenTrash.add(t.itemId);
  }
  const dropTrash = stored.trash.filter((id) => !seenTrash.has(id));
  // A revision of a trashed item the rekey drops goes with it: naming it is a mistake, not a write.
  const dropped = new Set(dropTrash);
  for (const r of given.history) if (dropped.has(r.itemId)) throw revisionOfDroppedItem(revisionKey(r));
  return { dropHistory: [...history].filter(([key]) => !seen.has(key)).map(([, r]) => r), dropTrash };
}
