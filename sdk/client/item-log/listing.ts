/**
 * A listing of a vault's items, and a single item, against the item log this client followed
 * (./index.ts): each refusal names the item and what was wrong.
 */
import { SecurityError } from "../../errors";
import { expectedAfter, itemSetDigest, setAtBase, type ItemLink, type ItemState } from "../../../protocol/formats/item-log";
import type { FollowedLog } from "./chain";

/**
 * A listing (`listed`: each item's revision and digest) against the log followed at `followed`:
 * every item the links after the base touched must be there at the revision and digest of the
 * last such link, or absent if it deleted them; the rest, with the states the links found their
 * items in, must give the base's digest. Where the whole set is known, it must be exactly that.
 */
export async function checkListed(vaultId: string, followed: FollowedLog, listed: ReadonlyMap<string, ItemState>): Promise<void> {
  if (followed.items) {
    for (const [id, state] of followed.items) compareItem(vaultId, id, state, listed.get(id), "the log");
    for (const id of listed.keys()) if (!followed.items.has(id)) throw notInLog(vaultId, id, followed.sinceBase);
    return;
  }
  const expected = expectedAfter(followed.sinceBase);
  for (const [id, state] of expected.touched) compareItem(vaultId, id, state, listed.get(id), `link ${lastTouch(followed, id)}`);
  if (followed.importedOver) {
    // An import adds only: every item of the set it was made over, where no link since touched it, as it was; the rest new.
    for (const [id, state] of followed.importedOver)
      if (!expected.touched.has(id)) compareItem(vaultId, id, state, listed.get(id), `the set import ${followed.base.seq} was made over`);
    for (const [id, state] of listed)
      if (!expected.touched.has(id) && !followed.importedOver.has(id) && state.revision !== 1)
        throw new SecurityError(
          "ITEM_SET_MISMATCH",
          `the server lists item ${id} of vault ${vaultId} at revision ${state.revision}, which neither the set import ${followed.base.seq} was made over nor the import itself holds`,
        );
  }
  const base = setAtBase(listed, expected);
  if (base.size !== followed.base.count || (await itemSetDigest(base)) !== followed.base.setDigest)
    throw new SecurityError(
      "ITEM_SET_MISMATCH",
      `the items the server lists for vault ${vaultId} are not the ones its signed ${followed.base.op} (link ${followed.base.seq}) and the links after it give: an item was dropped, added back, or served at another revision`,
    );
}

function lastTouch(followed: FollowedLog, itemId: string): number {
  return followed.sinceBase.findLast((l) => l.itemId === itemId)?.seq ?? followed.base.seq;
}

function notInLog(vaultId: string, itemId: string, sinceBase: readonly ItemLink[]): SecurityError {
  const deleted = sinceBase.findLast((l) => l.itemId === itemId && l.op === "delete");
  return new SecurityError(
    "ITEM_RESURRECTED",
    deleted
      ? `the server lists item ${itemId} of vault ${vaultId}, which link ${deleted.seq} of its signed item log deleted`
      : `the server lists item ${itemId} of vault ${vaultId}, which its signed item log does not hold (never created, or deleted)`,
  );
}

/** One item of a listing against the state the log gives it (null: deleted). */
function compareItem(vaultId: string, itemId: string, logged: ItemState | null, listed: ItemState | undefined, where: string): void {
  if (logged === null) {
    if (listed)
      throw new SecurityError(
        "ITEM_RESURRECTED",
        `the server lists item ${itemId} of vault ${vaultId}, which ${where} of its signed item log deleted`,
      );
    return;
  }
  if (!listed)
    throw new SecurityError(
      "ITEM_DROPPED",
      `the server leaves item ${itemId} out of vault ${vaultId}, which its signed item log holds (${where}, revision ${logged.revision})`,
    );
  if (listed.revision !== logged.revision)
    throw new SecurityError(
      "ITEM_STALE",
      `the server shows item ${itemId} of vault ${vaultId} at revision ${listed.revision}, but its signed item log is at revision ${logged.revision} (${where}): an older or other version`,
    );
  if (listed.sha256 !== logged.sha256)
    throw new SecurityError(
      "ITEM_HASH_MISMATCH",
      `the server's ciphertext of item ${itemId} of vault ${vaultId} is not the one its signed item log names for revision ${logged.revision} (${where}): another revision's, labelled as this one`,
    );
}

/** A single item against the log (getItem): its state in the known set. */
export function checkItemAgainst(vaultId: string, followed: FollowedLog, itemId: string, listed: ItemState): void {
  const logged = followed.items!.get(itemId);
  if (!logged) throw notInLog(vaultId, itemId, followed.sinceBase);
  compareItem(vaultId, itemId, logged, listed, "the log");
}
