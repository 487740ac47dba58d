/**
 * Everything the signed-in person can open, kept while the vault is unlocked: the vault list (names
 * as their signed rosters vouch for them), each vault's opened items, and one search index over all
 * of them. The sidebar, the cross-vault lists and the search read it; a vault page that reads its
 * items again puts them here, so the index follows each vault as it syncs instead of being rebuilt
 * for every search. Dropped when the app locks or logs out (`clearLibrary`): nothing opened outlives
 * the keys.
 */
import { useListeners } from "./subscribe";
import { useEffect, useState } from "preact/hooks";
import { VaultListChanged, type CheckedVault, type Item, type ItemSearch, type VaultClient } from "../../sdk";

export interface Library {
  /** The vault list, once read. */
  vaults: CheckedVault[] | null;
  /** Vaults this browser knew that the listing left out (shown on the vault list until confirmed gone). */
  missing: VaultListChanged | null;
  /** Each vault's opened items, by vault id, as they are read. */
  items: ReadonlyMap<string, readonly Item[]>;
  /** Vaults whose items could not be opened, by name. */
  failed: readonly string[];
  /** The search over every item read so far (null until its code has loaded). */
  index: ItemSearch | null;
  /** True while the first full read runs. */
  loading: boolean;
  /** The first full read's failure, as thrown. */
  error: unknown;
}

const EMPTY: Library = { vaults: null, missing: null, items: new Map(), failed: [], index: null, loading: false, error: null };

let library: Library = EMPTY;
let owner: VaultClient | null = null;
let reading: Promise<void> | null = null;
/** Set while the library holds the offline copy (offline.ts), not the server's answers: nothing is read until it is cleared. */
let fromCopy = false;
const listeners = new Set<() => void>();

function update(next: Partial<Library>): void {
  library = { ...library, ...next };
  for (const l of listeners) l();
}

/** Vault reads at once while filling the library (each is a request and a decryption pass). */
const PARALLEL_VAULTS = 4;

/** Reads the vault list and every vault's items once per unlock (again with `again`), for `client`. */
export function fillLibrary(client: VaultClient, again = false): Promise<void> {
  if (owner !== client) {
    clearLibrary();
    owner = client;
  }
  if (reading && (!again || fromCopy)) return reading;
  const run = (async () => {
    update({ loading: true, error: null });
    try {
      const [vaults, search] = await Promise.all([readVaultList(client), import("../../sdk/search")]);
      if (owner !== client) return;
      // Items a vault page put here before the search code arrived are indexed now.
      if (!library.index) update({ index: new search.ItemSearch([...library.items.values()].flat()) });
      const failed: string[] = [];
      const queue = [...vaults];
      const worker = async () => {
        for (let v = queue.shift(); v; v = queue.shift()) {
          try {
            const items = await client.items.list(v.vaultId);
            if (owner === client) putVaultItems(v.vaultId, items);
          } catch {
            failed.push(v.nameCheck.name);
          }
        }
      };
      await Promise.all(Array.from({ length: PARALLEL_VAULTS }, worker));
      if (owner === client) update({ failed, loading: false });
    } catch (err) {
      if (owner === client) update({ loading: false, error: err });
    }
  })();
  reading = run;
  return run;
}

async function readVaultList(client: VaultClient): Promise<CheckedVault[]> {
  try {
    const vaults = await client.vaults.listChecked();
    update({ vaults, missing: null });
    return vaults;
  } catch (err) {
    if (!(err instanceof VaultListChanged)) throw err;
    update({ vaults: err.listed, missing: err });
    return err.listed;
  }
}

/** A vault's items as just read: kept, and the search index brought up to date for that vault alone. */
export function putVaultItems(vaultId: string, items: readonly Item[]): void {
  const before = library.items.get(vaultId) ?? [];
  const index = library.index;
  if (index) {
    const now = new Set(items.map((i) => i.itemId));
    for (const old of before) if (!now.has(old.itemId)) index.remove(vaultId, old.itemId);
    const unchanged = new Map(before.map((i) => [i.itemId, i.revision]));
    for (const item of items) if (unchanged.get(item.itemId) !== item.revision) index.put(item);
  }
  const next = new Map(library.items);
  next.set(vaultId, items);
  update({ items: next });
}

/**
 * Forgets what `client` opened, when the library is still its (a shell leaving with its client):
 * a newer client's library, filled meanwhile, stays.
 */
export function clearLibraryOf(client: VaultClient): void {
  if (owner === client) clearLibrary();
}

/** Forgets every opened item and the index (on lock and log-out). */
export function clearLibrary(): void {
  owner = null;
  reading = null;
  fromCopy = false;
  library = EMPTY;
  for (const l of listeners) l();
}

/**
 * The library filled from the offline copy this browser kept (offline.ts) for `client`, whose
 * server cannot be reached: read as it is, and not read from the server until `clearLibrary`.
 */
export async function fillFromCopy(
  client: VaultClient,
  vaults: CheckedVault[],
  items: ReadonlyMap<string, readonly Item[]>,
): Promise<void> {
  clearLibrary();
  owner = client;
  fromCopy = true;
  reading = Promise.resolve();
  update({ vaults, items });
  const search = await import("../../sdk/search");
  if (owner === client) update({ index: new search.ItemSearch([...library.items.values()].flat()) });
}

/** Whom the library was read for (null once cleared), and whether from the server (not the offline copy). */
export const libraryOwner = (): { client: VaultClient; fromServer: boolean } | null =>
  owner ? { client: owner, fromServer: !fromCopy } : null;

/** Calls `listener` on every change of the library; returns what stops it. */
export function onLibraryChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** The library as it is now (for a first paint; components that follow it use `useLibrary`). */
export const libraryNow = (): Library => library;

/** Every item read so far, across vaults, in the vault list's order. */
export function allItems(lib: Library): Item[] {
  return (lib.vaults ?? []).flatMap((v) => lib.items.get(v.vaultId) ?? []);
}

/** The tags in use, sorted, each with how many items carry it. */
export function tagCounts(items: readonly Item[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const i of items) for (const t of itemTags(i)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a.localeCompare(b));
}

/** An item's tags (none on items written before tags existed). */
export const itemTags = (item: Item): readonly string[] => item.tags ?? [];
export const isArchived = (item: Item): boolean => item.archived === true;

/** The library, re-rendering the caller on every change; starts the first read, and reads again when `refresh` moves on. */
export function useLibrary(client: VaultClient, refresh = 0): Library {
  useListeners(listeners);
  const [seen, setSeen] = useState(refresh);
  useEffect(() => {
    void fillLibrary(client, refresh !== seen);
    setSeen(refresh);
  }, [client, refresh]);
  return library;
}
