/**
 * Edits made offline (offline.ts): each item added, changed or moved to the trash while the server
 * cannot be reached is shown at once in the library, marked as waiting to be saved, and kept in a
 * queue that the server saves, in order, once it answers again (offline-replay.ts).
 *
 * The queue is kept in IndexedDB (`vault-offline`, store `edits`, one record per account id),
 * SEALED as the offline copy is: AES-256-GCM under a key HKDF derives from the password's stretched
 * key with its own info, "web-offline-edits-v1", that context and the account's id as associated
 * data. Only the account's id and the record's version are readable, so a reload or a lock keeps
 * the edits and nothing of them opens without the master password. The offline copy stays the
 * server's last answer; the queue is applied over it each time it is opened.
 *
 * An item's edits fold into one entry: edits of an item added offline change what is added, a
 * second edit replaces the first (on the revision the first was made on), moving to the trash an
 * item added offline drops its entry. Log out erases the queue (after a warning); a session the
 * server ended does not: the edits wait for the account's next login in this browser.
 */
import { useListeners } from "./subscribe";
import type { Item, ItemContent, VaultClient } from "../../sdk";
import { openValue, sealValue, WEB_OFFLINE_EDITS_CONTEXT, type SealKey } from "../../sdk/client/kept-session";
import { inStore, STORES } from "./offline-db";
import { libraryNow, putVaultItems } from "./library";
import type { ReplayReport, WaitingEdit } from "./offline-replay";

/** The queue as IndexedDB holds it: only the account's id and the version readable. */
interface StoredEdits {
  userId: string;
  version: 1;
  context: string;
  /** `sealValue` of `{ edits: WaitingEdit[] }`. */
  sealed: string;
}

interface EditsState {
  /** Whose queue is loaded (null: none). */
  userId: string | null;
  edits: readonly WaitingEdit[];
  /** True while the server saves them. */
  saving: boolean;
  /** What the last saving did. */
  report: ReplayReport | null;
  /** Why the queue could not be kept or opened, as a sentence; while set for an unopened queue, nothing is queued over it. */
  problem: string | null;
}

const NONE: EditsState = { userId: null, edits: [], saving: false, report: null, problem: null };
let state: EditsState = NONE;
/** The key the loaded queue is sealed under: held while it is loaded, like the queue itself. */
let sealing: SealKey | null = null;
/** A queue this browser holds that did not open: kept as it is, never written over. */
let unopened = false;
const listeners = new Set<() => void>();

function update(next: Partial<EditsState>): void {
  state = { ...state, ...next };
  for (const l of listeners) l();
}

/** The queue and what its last saving did, re-rendering the caller on each change. */
export function useWaitingEdits(): EditsState {
  useListeners(listeners);
  return state;
}

/** Whether an item shown has a change waiting to be saved. */
export const isWaiting = (itemId: string): boolean => state.edits.some((e) => e.itemId === itemId);

// ---- Kept in IndexedDB, sealed ------------------------------------------------------------------

/** Bumped by every erase and forget: a change asked before one is not written after it. */
let generation = 0;
/** This tab's changes to the record, one after the other. */
let writes: Promise<unknown> = Promise.resolve();

/** `task` after this tab's earlier ones, holding a lock every tab of this origin takes for the record (where the browser has Web Locks). */
function exclusively<T>(task: () => Promise<T>): Promise<T> {
  const locked = (): Promise<T> => ("locks" in navigator ? (navigator.locks.request("vault-offline-edits", task) as Promise<T>) : task());
  const run = writes.then(locked, locked);
  writes = run.catch(() => undefined);
  return run;
}

/** The account's record, as IndexedDB holds it (undefined: none). */
const storedEdits = async (userId: string) => (await inStore(STORES.edits, "readonly", (s) => s.get(userId))) as StoredEdits | undefined;

async function openEdits(key: SealKey, userId: string, stored: StoredEdits | undefined): Promise<WaitingEdit[]> {
  if (!stored) return [];
  if (stored.version !== 1 || stored.context !== WEB_OFFLINE_EDITS_CONTEXT || typeof stored.sealed !== "string")
    throw new Error("a record of another version");
  const { edits } = (await openValue(key, WEB_OFFLINE_EDITS_CONTEXT, userId, stored.sealed)) as { edits: WaitingEdit[] };
  if (!Array.isArray(edits)) throw new Error("no list of edits");
  return edits;
}

/**
 * The account's queue read again, changed by `change` and written back (erased once empty), as one
 * step under the lock: another tab's edits made meanwhile are kept, never written over.
 */
async function rewrite(client: VaultClient, change: (edits: WaitingEdit[]) => WaitingEdit[]): Promise<void> {
  await loadWaitingEdits(client);
  const { userId } = client.account;
  const key = sealing;
  const asOf = generation;
  if (!key || unopened) throw new Error("the edits made offline earlier did not open: nothing is queued over them");
  const edits = await exclusively(async () => {
    if (generation !== asOf) throw new Error("the vault was locked meanwhile: nothing was queued");
    const next = change(await openEdits(key, userId, await storedEdits(userId)));
    if (next.length === 0) await inStore(STORES.edits, "readwrite", (s) => s.delete(userId));
    else {
      const sealed = await sealValue(key, WEB_OFFLINE_EDITS_CONTEXT, userId, { edits: next });
      const record: StoredEdits = { userId, version: 1, context: WEB_OFFLINE_EDITS_CONTEXT, sealed };
      await inStore(STORES.edits, "readwrite", (s) => s.put(record));
    }
    return next;
  });
  if (generation === asOf) update({ edits });
}

/**
 * The account's queue read and opened with `client`'s key (once per account while unlocked, or
 * `again`): its edits, none when this browser holds none. A record that does not open is left as
 * it is and named.
 */
export async function loadWaitingEdits(client: VaultClient, again = false): Promise<readonly WaitingEdit[]> {
  const { userId } = client.account;
  if (state.userId === userId && !again) return state.edits;
  const asOf = generation;
  const key = await client.sealKey(WEB_OFFLINE_EDITS_CONTEXT);
  let edits: WaitingEdit[] = [];
  let problem: string | null = null;
  // A browser without IndexedDB here (some private windows) kept nothing: queueing says so when asked.
  const stored = await storedEdits(userId).catch(() => undefined);
  try {
    edits = await openEdits(key, userId, stored);
  } catch (err) {
    problem = `The edits made offline in this browser could not be opened (${(err as Error).message}): they are kept as they are, and Log out erases them.`;
  }
  if (generation !== asOf) return [];
  sealing = key;
  unopened = problem !== null;
  update({ userId, edits, problem, ...(state.userId !== userId && { saving: false, report: null }) });
  return edits;
}

/** The queue out of memory (lock, a shell leaving; with `userId`, only if it is not another account's): what IndexedDB holds stays. */
export function forgetWaitingEdits(userId?: string): void {
  if (userId !== undefined && state.userId !== null && state.userId !== userId) return;
  generation++;
  sealing = null;
  unopened = false;
  state = NONE;
  for (const l of listeners) l();
}

/** The account's queue erased from this browser (Log out, once the person accepted losing it). */
export function eraseWaitingEdits(userId: string): void {
  forgetWaitingEdits();
  void exclusively(() => inStore(STORES.edits, "readwrite", (s) => s.delete(userId))).catch(() => undefined);
}

/** Whether this browser holds a queue for the account (read without the password: only its id is in the clear). */
export async function holdsWaitingEdits(userId: string): Promise<boolean> {
  return (await inStore(STORES.edits, "readonly", (s) => s.getKey(userId)).catch(() => undefined)) !== undefined;
}

/**
 * Asked before a log out: true to go on. Edits this browser holds for the account (opened or not)
 * would be lost: the person is warned, and they are erased if the person goes on.
 */
export async function leaveWaitingEdits(userId: string): Promise<boolean> {
  if (!(await holdsWaitingEdits(userId))) return true;
  const n = state.userId === userId ? state.edits.length : 0;
  const what = n === 1 ? "1 edit made offline still waits" : `${n > 0 ? n : "Some"} edits made offline still wait`;
  if (!confirm(`${what} to be saved in this browser. Logging out erases them, and they are lost. Log out anyway?`)) return false;
  eraseWaitingEdits(userId);
  return true;
}

// ---- Queueing an edit --------------------------------------------------------------------------

/** The vault's name as the library lists it (for the report). */
const vaultName = (vaultId: string): string => libraryNow().vaults?.find((v) => v.vaultId === vaultId)?.nameCheck.name ?? vaultId;
const newId = (): string => globalThis.crypto.randomUUID();

async function queue(client: VaultClient, change: (edits: WaitingEdit[]) => WaitingEdit[]): Promise<void> {
  await rewrite(client, change);
  update({ report: null });
}

/** A new item, offline: queued, and shown at once under an id of this browser's. */
export async function addOffline(client: VaultClient, vaultId: string, content: ItemContent): Promise<Item> {
  const itemId = newId();
  await queue(client, (edits) => [...edits, { id: newId(), op: "add", vaultId, vaultName: vaultName(vaultId), itemId, content }]);
  return show(vaultId, shownItem(vaultId, itemId, content));
}

/** A change to an item, offline: folded into what waits for it, else queued on the revision shown. */
export async function editOffline(client: VaultClient, item: Item, content: ItemContent): Promise<Item> {
  const { vaultId, itemId } = item;
  await queue(client, (edits) => {
    const before = edits.find((e) => e.itemId === itemId);
    if (before?.op === "delete") throw new Error(`"${item.name}" waits to be moved to the trash`);
    if (before) return edits.map((e) => (e === before ? { ...before, id: newId(), content } : e));
    return [...edits, { id: newId(), op: "edit", vaultId, vaultName: vaultName(vaultId), itemId, revision: item.revision, content }];
  });
  return show(vaultId, shownItem(vaultId, itemId, content, item));
}

/** An item moved to the trash, offline: one added offline is simply no longer added. */
export async function deleteOffline(client: VaultClient, item: Item): Promise<void> {
  const { vaultId, itemId } = item;
  await queue(client, (edits) => {
    const before = edits.find((e) => e.itemId === itemId);
    const rest = edits.filter((e) => e !== before);
    if (before?.op === "add") return rest;
    const revision = before?.op === "edit" ? before.revision : item.revision;
    return [...rest, { id: newId(), op: "delete", vaultId, vaultName: vaultName(vaultId), itemId, revision, name: item.name }];
  });
  hide(vaultId, itemId);
}

// ---- Shown in the library ----------------------------------------------------------------------

/** An item as shown while its change waits: the content as edited, the revision it was made on. */
function shownItem(vaultId: string, itemId: string, content: ItemContent, was?: Item): Item {
  const now = new Date().toISOString();
  return {
    ...content,
    type: content.type ?? "login",
    itemId,
    vaultId,
    revision: was?.revision ?? 0,
    createdAt: was?.createdAt ?? now,
    updatedAt: now,
  };
}

function show(vaultId: string, item: Item): Item {
  const items = libraryNow().items.get(vaultId) ?? [];
  const at = items.findIndex((i) => i.itemId === item.itemId);
  putVaultItems(vaultId, at < 0 ? [...items, item] : items.map((i, n) => (n === at ? item : i)));
  return item;
}

const hide = (vaultId: string, itemId: string): void =>
  putVaultItems(
    vaultId,
    (libraryNow().items.get(vaultId) ?? []).filter((i) => i.itemId !== itemId),
  );

/** The queue applied over the library (the offline copy just opened): each vault's items as the person left them. */
export function showWaitingEdits(edits: readonly WaitingEdit[]): void {
  for (const e of edits) {
    if (e.op === "delete") hide(e.vaultId, e.itemId);
    else {
      const was = libraryNow()
        .items.get(e.vaultId)
        ?.find((i) => i.itemId === e.itemId);
      show(e.vaultId, shownItem(e.vaultId, e.itemId, e.content, was));
    }
  }
}

// ---- Saved, once the server answers -------------------------------------------------------------

/**
 * The queue saved with `client` (online): read again, each edit saved in order and taken out of
 * the queue once saved (offline-replay.ts, loaded only then). Answers whether anything changed on
 * the server, so that the caller reads it again.
 */
export async function saveWaitingEdits(client: VaultClient): Promise<boolean> {
  if (state.saving || !client.unlocked) return false;
  const edits = await loadWaitingEdits(client, true).catch((err: unknown) => {
    update({ problem: `The edits made offline could not be read: ${(err as Error).message}` });
    return [];
  });
  if (edits.length === 0) return false;
  const asOf = generation;
  update({ saving: true, report: null });
  try {
    const { replay } = await import("./offline-replay");
    const report = await replay(client, edits, (done) => rewrite(client, (now) => now.filter((e) => e.id !== done.id)));
    if (generation === asOf) update({ report });
    return report.saved + report.conflicts.length + report.restored.length + report.addedAgain.length > 0;
  } catch (err) {
    // An edit saved, but the queue not written without it: named, and the server read again.
    if (generation === asOf) update({ problem: `Saving the edits made offline stopped: ${(err as Error).message}` });
    return true;
  } finally {
    if (generation === asOf) update({ saving: false });
  }
}
