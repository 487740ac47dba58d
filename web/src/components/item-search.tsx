/** Search over opened items, here in the browser (sdk/search.ts, loaded when first used): within a vault, or across every vault on the vault list. */
import { useEffect, useRef, useState } from "preact/hooks";
import type { CheckedVault, Item, ItemSearch } from "../../../sdk";
import { currentClient } from "../session";
import { ErrorNote, Field, inputValue, useAction } from "./ui";

/** Favourites first, then as listed. */
export const favouritesFirst = (items: readonly Item[]): Item[] => [
  ...items.filter((i) => i.favorite),
  ...items.filter((i) => !i.favorite),
];

/** The items matching `query` (best first), or null while there is no query (or the search code is still loading). */
export function useItemSearch(items: readonly Item[], query: string): Item[] | null {
  const [index, setIndex] = useState<ItemSearch | null>(null);
  useEffect(() => {
    if (!query.trim()) return;
    void import("../../../sdk/search").then(({ ItemSearch }) => setIndex(new ItemSearch(items)));
  }, [items, query.trim() === ""]);
  if (!query.trim() || !index) return null;
  const byKey = new Map(items.map((i) => [`${i.vaultId}/${i.itemId}`, i]));
  return index.search(query, { limit: Number.POSITIVE_INFINITY }).flatMap((h) => byKey.get(`${h.vaultId}/${h.itemId}`) ?? []);
}

/** The most hits the vault list shows at once; it says so when there are more. */
const SHOWN = 200;

/** On the vault list: every item of every vault the user can open, searched here; each hit a link to its vault with it open. */
export function SearchAllItems({ vaults }: { vaults: readonly CheckedVault[] }) {
  const client = currentClient();
  const [query, setQuery] = useState("");
  const [items, setItems] = useState<Item[] | null>(null);
  const [skipped, setSkipped] = useState<string[]>([]);
  const load = useAction();
  const loading = useRef(false);
  useEffect(() => {
    // Read once the person starts typing, and again when the vault list is read again.
    if (!query.trim() || loading.current) return;
    loading.current = true;
    void load
      .run(async () => {
        const all: Item[] = [];
        const notOpened: string[] = [];
        for (const v of vaults) {
          try {
            all.push(...(await client.items.list(v.vaultId)));
          } catch {
            notOpened.push(v.nameCheck.name);
          }
        }
        setItems(all);
        setSkipped(notOpened);
      })
      .finally(() => (loading.current = false));
  }, [query.trim() === "", vaults]);
  const hits = useItemSearch(items ?? [], query);
  const vaultName = (id: string) => vaults.find((v) => v.vaultId === id)?.nameCheck.name ?? id;
  return (
    <section aria-labelledby="search-all-heading">
      <h2 id="search-all-heading" class="visually-hidden">
        Find an item in any vault
      </h2>
      <Field id="all-items-search" label="Search all items">
        <input id="all-items-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
      </Field>
      <ErrorNote error={load.error} />
      {hits && items && hits.length === 0 && <p>No item matches your search.</p>}
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
      {query.trim() && skipped.length > 0 && <p class="meta">Not searched (they could not be opened): {skipped.join(", ")}.</p>}
    </section>
  );
}
