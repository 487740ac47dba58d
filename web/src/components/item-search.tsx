/**
 * Search over opened items, here in the browser, on the library's one index (web/src/library.ts):
 * kept current as each vault is read, so a keystroke searches and never reads or re-indexes.
 */
import { useState } from "preact/hooks";
import type { CheckedVault, Item } from "../../../sdk";
import { currentClient, useRefresh } from "../session";
import { allItems, useLibrary, type Library } from "../library";
import { Busy, Field, inputValue } from "./ui";

/** The items of `items` matching `query` (best first; within one vault with `vaultId`), or null without a query or before the index is ready. */
export function searchItems(lib: Library, items: readonly Item[], query: string, vaultId?: string): Item[] | null {
  if (!query.trim() || !lib.index) return null;
  const byKey = new Map(items.map((i) => [`${i.vaultId}/${i.itemId}`, i]));
  return lib.index
    .search(query, { limit: Number.POSITIVE_INFINITY, ...(vaultId && { vaultId }) })
    .flatMap((h) => byKey.get(`${h.vaultId}/${h.itemId}`) ?? []);
}

/** `searchItems` for a component, on the library of the signed-in client. */
export function useItemSearch(items: readonly Item[], query: string, vaultId?: string): Item[] | null {
  const lib = useLibrary(currentClient());
  return searchItems(lib, items, query, vaultId);
}

/** The most hits the vault list shows at once; it says so when there are more. */
const SHOWN = 200;

/** On the vault list: every item of every vault the user can open, searched here; each hit a link to its vault with it open. */
export function SearchAllItems({ vaults }: { vaults: readonly CheckedVault[] }) {
  const lib = useLibrary(currentClient(), useRefresh());
  const [query, setQuery] = useState("");
  const hits = searchItems(lib, allItems(lib), query);
  const vaultName = (id: string) => vaults.find((v) => v.vaultId === id)?.nameCheck.name ?? id;
  return (
    <section aria-labelledby="search-all-heading">
      <h2 id="search-all-heading" class="visually-hidden">
        Find an item in any vault
      </h2>
      <Field id="all-items-search" label="Search all items">
        <input id="all-items-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
      </Field>
      {query.trim() && lib.loading && <Busy label="Opening your vaults…" />}
      {hits && !lib.loading && hits.length === 0 && <p>No item matches your search.</p>}
      {hits && hits.length > SHOWN && (
        <p class="meta" role="status">
          Showing the best {SHOWN} of {hits.length} matching items: add a word to narrow the search.
        </p>
      )}
      {hits && hits.length > 0 && (
        <ul class="list" aria-label="Matching items">
          {hits.slice(0, SHOWN).map((i) => (
            <li key={`${i.vaultId}/${i.itemId}`}>
              <a href={`#/vault/${i.vaultId}/${i.itemId}`}>{i.name}</a>{" "}
              <span class="meta">
                {vaultName(i.vaultId)}
                {i.fields.username ? ` · ${i.fields.username}` : ""}
              </span>
            </li>
          ))}
        </ul>
      )}
      {query.trim() && lib.failed.length > 0 && <p class="meta">Not searched (they could not be opened): {lib.failed.join(", ")}.</p>}
    </section>
  );
}
