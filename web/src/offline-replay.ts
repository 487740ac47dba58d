/**
 * The edits made offline (offline-edits.ts) saved, in the order made, once the server answers
 * again; loaded only then. Nothing is lost, whatever happened on the server meanwhile:
 * - a change to an item nobody changed since is saved on the revision it was made on;
 * - a change to an item someone changed meanwhile (`409` on that revision) is saved on top: the
 *   other version stays in the item's history, and the report names the item;
 * - a change to an item someone moved to the trash meanwhile brings it back from the trash with the
 *   change on top (its history kept), or, where it cannot come back, adds it again as a new item;
 * - moving to the trash an item someone changed meanwhile is not done: the newer version stays;
 * - a write the server refuses (a vault no longer the person's, a role that may not write) stays
 *   in the queue, its error named; so does the rest when the server stops answering part way.
 * An edit leaves the queue (`done`) only once saved, or once answered as above.
 */
import { ApiError, sentence, type ItemContent, type VaultClient } from "../../sdk";

/** What every edit waiting to be saved holds: `id` names this version of it (an edit folded into it takes a new one). */
interface QueuedEdit {
  id: string;
  vaultId: string;
  /** The vault's name, for the report. */
  vaultName: string;
  itemId: string;
}

/** A new item, under an id of this browser's (the server's is made when it is saved). */
export interface QueuedAdd extends QueuedEdit {
  op: "add";
  content: ItemContent;
}

/** A change to an item as it was at `revision`. */
export interface QueuedChange extends QueuedEdit {
  op: "edit";
  revision: number;
  content: ItemContent;
}

/** The item, as it was at `revision` and named `name`, moved to the trash. */
export interface QueuedDelete extends QueuedEdit {
  op: "delete";
  revision: number;
  name: string;
}

export type WaitingEdit = QueuedAdd | QueuedChange | QueuedDelete;

/** What the saving did, each list by item name (with its vault's). */
export interface ReplayReport {
  /** Saved as they were made. */
  saved: number;
  /** Changed meanwhile by someone else: the offline version saved on top, the other in the item's history. */
  conflicts: string[];
  /** Moved to the trash meanwhile: brought back, the offline version on top. */
  restored: string[];
  /** Moved to the trash meanwhile and not to be brought back: added again as a new item. */
  addedAgain: string[];
  /** Moved to the trash offline, but changed meanwhile: not moved, the newer version kept. */
  notDeleted: string[];
  /** Still waiting, each with the server's refusal as a sentence. */
  waiting: Array<{ item: string; why: string }>;
  /** The server stopped answering part way: the edits left wait for the next time. */
  unreachable: boolean;
}

type Outcome = "saved" | "conflict" | "restored" | "addedAgain" | "notDeleted";

/** Each edit saved in order; `done` takes one out of the queue (its failure stops the saving: it is thrown). */
export async function replay(
  client: VaultClient,
  edits: readonly WaitingEdit[],
  done: (edit: WaitingEdit) => Promise<void>,
): Promise<ReplayReport> {
  const report: ReplayReport = { saved: 0, conflicts: [], restored: [], addedAgain: [], notDeleted: [], waiting: [], unreachable: false };
  for (const edit of edits) {
    let outcome: Outcome;
    try {
      outcome = await save(client, edit);
    } catch (err) {
      if (unreachable(err)) {
        report.unreachable = true;
        break;
      }
      report.waiting.push({ item: named(edit), why: sentence(err) });
      continue;
    }
    await done(edit);
    if (outcome === "saved") report.saved++;
    else report[outcome === "conflict" ? "conflicts" : outcome].push(named(edit));
  }
  return report;
}

/** "Name" (Vault): how the report names an edit's item. */
const named = (e: WaitingEdit): string => `"${e.op === "delete" ? e.name : e.content.name}" (${e.vaultName})`;

const unreachable = (err: unknown): boolean => err instanceof ApiError && err.status === 0;
/** The item's revision is no longer the one the edit was made on. */
const moved = (err: unknown): boolean => err instanceof ApiError && err.status === 409 && err.field === "revision";
const gone = (err: unknown): boolean => err instanceof ApiError && err.status === 404;

async function save(client: VaultClient, e: WaitingEdit): Promise<Outcome> {
  switch (e.op) {
    case "add":
      await client.items.add(e.vaultId, e.content);
      return "saved";
    case "edit":
      return saveEdit(client, e);
    case "delete":
      return saveDelete(client, e);
  }
}

async function saveEdit(client: VaultClient, e: QueuedChange): Promise<Outcome> {
  try {
    await client.items.edit(e.vaultId, e.itemId, e.content, { revision: e.revision });
    return "saved";
  } catch (err) {
    if (gone(err)) return bringBack(client, e);
    if (!moved(err)) throw err;
  }
  // On top of the version saved meanwhile, which the item's history keeps.
  try {
    await client.items.edit(e.vaultId, e.itemId, e.content);
    return "conflict";
  } catch (err) {
    if (gone(err)) return bringBack(client, e);
    throw err;
  }
}

/** An item moved to the trash meanwhile: restored with the edit on top, else added again (a vault lost meanwhile refuses both). */
async function bringBack(client: VaultClient, e: QueuedChange): Promise<Outcome> {
  try {
    await client.items.restore(e.vaultId, e.itemId);
  } catch (err) {
    if (unreachable(err)) throw err;
    // Purged, or a trashed version the signed history cannot vouch for: the edit becomes a new item.
    await client.items.add(e.vaultId, e.content);
    return "addedAgain";
  }
  await client.items.edit(e.vaultId, e.itemId, e.content);
  return "restored";
}

async function saveDelete(client: VaultClient, e: QueuedDelete): Promise<Outcome> {
  let now;
  try {
    now = await client.items.get(e.vaultId, e.itemId);
  } catch (err) {
    // Moved to the trash meanwhile too: nothing left to do.
    if (gone(err) && (await client.vaults.get(e.vaultId).then(() => true))) return "saved";
    throw err;
  }
  if (now.revision !== e.revision) return "notDeleted";
  await client.items.delete(e.vaultId, e.itemId);
  return "saved";
}
