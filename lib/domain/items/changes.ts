/**
 * Reads that scale with what changed: `GET /vaults/:vaultId/items?since=<cursor>`.
 *
 * Every vault counts its item changes: each create, update, delete (to the trash), restore or
 * import takes the vault's next change number (under the vault's exclusive lock, so numbers are
 * handed out in commit order) and records it against each item it touched; a rekey, which
 * rewrites every item, takes one number and marks a reset. A delta read answers, for `since` (the
 * `cursor` of an earlier answer, 0 at first), the items changed after it as they are now, the ids
 * of those no longer in the vault (tombstones: deleted, or moved to the trash), and the cursor to
 * pass next: the vault's change number, read before the changes, so nothing committed later is
 * skipped (it may come again, which is harmless: the answer is what is, not what happened).
 *
 * A cursor carries the store's change epoch above its low 32 bits (`cursorOf`): a random number
 * the store keeps (`server_keys`, CHANGE_EPOCH_KEY) and a restore from a backup drops, so that a
 * cursor given before a restore is never read against the restored counters, which new writes may
 * have brought back up to it. 0 is the start in any epoch.
 *
 * When the changes cannot be answered as a delta, the answer is `full`: no items, and the client
 * reads the whole list again (pages of `limit`/`after`), then goes on from the `cursor` of that
 * answer. That is the case when `since` is before the vault's last reset (a rekey; a vault of an
 * earlier release starts at a reset), when `since` is ahead of the vault (a cursor of another
 * server, or from before a restore), and when more than MAX_DELTA_ITEMS changed, so a delta's
 * answer stays small.
 */
import { deltaWithPage } from "./refusals";

/** Where the store keeps its change epoch (a restore drops it: lib/ops/backup.ts). */
export const CHANGE_EPOCH_KEY = "change-epoch";
/** Cursors hold the epoch above the vault's change number: numbers below 2^32, epochs below 2^20 (cursors stay safe integers). */
const EPOCH_UNIT = 2 ** 32;
const EPOCHS = 2 ** 20;

/** A new epoch for a store: 1 to 2^20 - 1. */
export function newChangeEpoch(random: () => number = Math.random): number {
  return 1 + Math.floor(random() * (EPOCHS - 1));
}

/** The cursor for a vault's change number in the store's epoch. */
export function cursorOf(epoch: number, changeSeq: number): number {
  return epoch * EPOCH_UNIT + changeSeq;
}

/** Changes a delta answers at most; past it, the answer is `full`. */
export const MAX_DELTA_ITEMS = 1_000;

/** A vault's change counter: its last change number, and the number of its last reset. */
export interface VaultChanges {
  changeSeq: number;
  resetSeq: number;
}

/** What a delta read does: answer the changes after `since`, or tell the client to read the whole list. */
export type DeltaPlan = { kind: "changes"; since: number } | { kind: "full" };

/** `since` with `limit` or `after` is `400` (field `since`): a delta is one answer, the full list has the pages. */
export function decideDeltaRead(query: { since?: number; limit?: number; after?: string }): number | undefined {
  if (query.since === undefined) return undefined;
  if (query.limit !== undefined || query.after !== undefined) throw deltaWithPage();
  return query.since;
}

/** Whether the changes after the cursor `since` can be answered from the vault's change records (`since` in the vault's numbers). */
export function planDelta(since: number, vault: VaultChanges, epoch: number): DeltaPlan {
  const seq = since === 0 ? 0 : since - epoch * EPOCH_UNIT;
  if (seq < 0 || seq >= EPOCH_UNIT) return { kind: "full" }; // another epoch: from before a restore, or another store
  if (seq < vault.resetSeq || seq > vault.changeSeq) return { kind: "full" };
  return { kind: "changes", since: seq };
}

/** The answer, from the change records read after `since` (at most MAX_DELTA_ITEMS + 1): the items now, and the ids gone. */
export function deltaAnswer<T extends { itemId: string }>(
  cursor: number,
  changed: Array<{ itemId: string; item: T | null }>,
): { items: T[]; deleted: string[]; cursor: number; full: boolean } {
  if (changed.length > MAX_DELTA_ITEMS) return { items: [], deleted: [], cursor, full: true };
  const items: T[] = [];
  const deleted: string[] = [];
  for (const c of changed) {
    if (c.item) items.push(c.item);
    else deleted.push(c.itemId);
  }
  return { items, deleted, cursor, full: false };
}

/** The answer that sends the client to the whole list. */
export function fullAnswer(cursor: number): { items: never[]; deleted: string[]; cursor: number; full: true } {
  return { items: [], deleted: [], cursor, full: true };
}
