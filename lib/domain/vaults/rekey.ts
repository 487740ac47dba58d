/** The rekey's exact-set checks (contract section 5). */
import type { ItemId } from "../ids";
import { itemChangedSinceRead, keyVersionMismatch, missingFromSet, notInVault, twiceInSet } from "./refusals";

function assertExactSet(current: Iterable<string>, given: readonly string[], field: string, what: string): void {
  const expected = new Set(current);
  const seen = new Set<string>();
  for (const id of given) {
    if (seen.has(id)) throw twiceInSet(what, id, field);
    seen.add(id);
    if (!expected.has(id)) throw notInVault(what, id, field);
  }
  if (seen.size !== expected.size) throw missingFromSet(what, expected.size - seen.size, field);
}

/** `newKeys` holds exactly one entry per current member: none missing, none extra, no duplicates. */
export function assertExactMemberSet(currentMemberIds: Iterable<string>, newKeyUserIds: readonly string[]): void {
  assertExactSet(currentMemberIds, newKeyUserIds, "newKeys", "member");
}

/** `items` holds exactly the vault's current items. */
export function assertExactItemSet(currentItemIds: Iterable<string>, givenItemIds: readonly string[]): void {
  assertExactSet(currentItemIds, givenItemIds, "items", "item");
}

/**
 * An item the client re-encrypted from an older revision than the stored one would undo the
 * change made since it read it: `409 CONFLICT` (the SDK reads again and retries). Optional: an
 * item given without `revision` is not checked.
 */
export function assertItemRevisions(
  current: ReadonlyMap<string, number>,
  items: ReadonlyArray<{ itemId: ItemId; revision?: number }>,
): void {
  for (const item of items) {
    const stored = current.get(item.itemId);
    if (item.revision !== undefined && stored !== undefined && stored !== item.revision) {
      throw itemChangedSinceRead(item.itemId, stored, item.revision);
    }
  }
}

/** A `keyVersion` the client states must be the vault's current one (`409 CONFLICT`). */
export function assertKeyVersion(current: number, stated: number | undefined): void {
  if (stated !== undefined && stated !== current) {
    throw keyVersionMismatch(current, stated);
  }
}
