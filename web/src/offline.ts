/**
 * The web vault offline. While unlocked, what the library holds (the vault list with its verified
 * names, each vault's opened items) is copied to IndexedDB a second after each change, SEALED:
 * AES-256-GCM under a key HKDF derives from the password's stretched key with its own context,
 * "web-offline-cache-v1" (not the session seal's key: HKDF with another info), the context and the
 * account's id as associated data. Only the account's id and the record's version are in the
 * clear; the time it was saved is inside. When the lock screen cannot reach the server, the
 * password opens the kept account's keys (session.ts) and that key opens this copy: the app shows
 * it, with the edits made offline applied over it. Items can be added, changed and moved to the
 * trash offline: each edit shows at once, marked as waiting, and waits in a queue sealed beside the
 * copy (offline-edits.ts) until the server answers again (Reconnect, or the banner finding it
 * back); then the queue is saved in order and a conflict keeps the other version in the item's
 * history (offline-replay.ts). The copy is written only from the server's answers, never from
 * edits. Log out erases the copy and, after a warning, the waiting edits; Lock keeps both.
 */
import { useListeners } from "./subscribe";
import { SecurityError, type CheckedVault, type Item, type VaultClient } from "../../sdk";
import { openValue, sealValue, WEB_OFFLINE_CACHE_CONTEXT } from "../../sdk/client/kept-session";
import { fillFromCopy, libraryNow, libraryOwner, onLibraryChange } from "./library";
import { inStore, STORES } from "./offline-db";
import { loadWaitingEdits, showWaitingEdits } from "./offline-edits";

/** One account's copy, as IndexedDB holds it: only its id and the version readable. */
interface StoredCopy {
  userId: string;
  version: 1;
  context: string;
  /** `sealValue` of `CopyContent`. */
  sealed: string;
}

/** What the seal holds. */
interface CopyContent {
  savedAt: string;
  vaults: CheckedVault[];
  items: Array<[string, Item[]]>;
}

// ---- The offline flag: one for the app, which the pages read (`isOffline`) ----------------------

let offlineSince: Date | null = null;
const listeners = new Set<() => void>();

/** Whether the app shows the offline copy (its edits wait in the queue, offline-edits.ts). */
export const isOffline = (): boolean => offlineSince !== null;

/** When the copy shown offline was saved (null when online). */
export const offlineCopyDate = (): Date | null => offlineSince;

export function leaveOffline(): void {
  offlineSince = null;
  for (const l of listeners) l();
}

/** Re-renders the caller when the app goes offline or back. */
export function useOffline(): boolean {
  useListeners(listeners);
  return isOffline();
}

// ---- IndexedDB (offline-db.ts) ----------------------------------------------------------------

/** Bumped by every erase: a copy being sealed meanwhile is not written after it. */
let erasures = 0;

/** Erases the account's copy (log out, a session the server ended). */
export function eraseOfflineCopy(userId: string): void {
  erasures++;
  void inStore(STORES.snapshots, "readwrite", (s) => s.delete(userId)).catch(() => undefined);
}

// ---- Writing the copy --------------------------------------------------------------------------

/** The library as the server last answered it, sealed and written for `client`'s account. */
async function saveCopy(client: VaultClient): Promise<void> {
  const lib = libraryNow();
  if (!lib.vaults || lib.loading || !client.unlocked) return;
  const erasedBefore = erasures;
  const content: CopyContent = {
    savedAt: new Date().toISOString(),
    vaults: lib.vaults.map(storableVault),
    items: lib.vaults.flatMap((v): Array<[string, Item[]]> => {
      const items = lib.items.get(v.vaultId);
      return items ? [[v.vaultId, [...items]]] : [];
    }),
  };
  const { userId } = client.account;
  const key = await client.sealKey(WEB_OFFLINE_CACHE_CONTEXT);
  const copy: StoredCopy = {
    userId,
    version: 1,
    context: WEB_OFFLINE_CACHE_CONTEXT,
    sealed: await sealValue(key, WEB_OFFLINE_CACHE_CONTEXT, userId, content),
  };
  if (erasures !== erasedBefore || libraryOwner()?.client !== client) return;
  await inStore(STORES.snapshots, "readwrite", (s) => s.put(copy));
}

/** A vault's `problem` (an Error, which JSON would drop) kept as its code and message. */
function storableVault(v: CheckedVault): CheckedVault {
  if (!v.problem) return v;
  return { ...v, problem: { code: v.problem.code, message: v.problem.message } as SecurityError };
}

const SAVE_AFTER_MS = 1000;
let timer: ReturnType<typeof setTimeout> | undefined;

/** The copy follows the library: written a second after its last change, while it holds the server's answers. */
onLibraryChange(() => {
  clearTimeout(timer);
  const owner = libraryOwner();
  if (!owner?.fromServer) return;
  timer = setTimeout(() => void saveCopy(owner.client).catch(() => undefined), SAVE_AFTER_MS);
});

// ---- Reading it back ---------------------------------------------------------------------------

/**
 * The account's copy opened with the key of `client` (unlocked from the kept account, the server
 * unreachable) and put in the library, the edits still waiting applied over it; the app goes
 * offline. False when this browser holds no copy.
 */
export async function openOfflineCopy(client: VaultClient): Promise<boolean> {
  const { userId } = client.account;
  const stored = (await inStore(STORES.snapshots, "readonly", (s) => s.get(userId)).catch(() => undefined)) as StoredCopy | undefined;
  if (!stored || stored.version !== 1 || stored.context !== WEB_OFFLINE_CACHE_CONTEXT || typeof stored.sealed !== "string") return false;
  const key = await client.sealKey(WEB_OFFLINE_CACHE_CONTEXT);
  const content = (await openValue(key, WEB_OFFLINE_CACHE_CONTEXT, userId, stored.sealed)) as CopyContent;
  const vaults = content.vaults.map((v) => (v.problem ? { ...v, problem: new SecurityError(v.problem.code, v.problem.message) } : v));
  await fillFromCopy(client, vaults, new Map(content.items));
  showWaitingEdits(await loadWaitingEdits(client));
  offlineSince = new Date(content.savedAt);
  for (const l of listeners) l();
  return true;
}

// ---- The service worker: the app's files kept, so that the installed app loads offline (sw.ts) --

if ("serviceWorker" in navigator && location.protocol !== "file:") {
  // Browsers take one on https and on localhost only; without it the app still works online.
  void navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => undefined);
}
