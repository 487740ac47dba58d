/**
 * Items across every vault, as the sidebar lists them: all (archived ones apart), favourites, one
 * type, one tag, or the archived ones; a search within the list; the item chosen shown beside the
 * list (below it on a phone), with a link to its vault, where it is edited.
 */
import { useState } from "preact/hooks";
import { ITEM_TYPES, type CheckedVault, type Item, type ItemType } from "../../../sdk";
import { allItems, isArchived, itemTags, useLibrary, type Library } from "../library";
import { currentClient, useRefresh } from "../session";
import { Busy, ErrorNote, Field, inputValue } from "../components/ui";
import { TYPE_LISTS } from "../components/sidebar";
import { searchItems } from "../components/item-search";
import { ItemView } from "./vault/item-view";
import { isWaiting } from "../offline-edits";

/** Which items a list shows, from the route `#/items/<kind>/<arg>`. */
export interface ItemFilter {
  title: string;
  keep(item: Item): boolean;
}

export function itemFilter(kind?: string, arg?: string): ItemFilter {
  if (kind === "favourites") return { title: "Favourites", keep: (i) => i.favorite === true && !isArchived(i) };
  if (kind === "archived") return { title: "Archived", keep: isArchived };
  if (kind === "type" && ITEM_TYPES.includes(arg as ItemType))
    return { title: TYPE_LISTS[arg as ItemType], keep: (i) => i.type === arg && !isArchived(i) };
  if (kind === "tag" && arg) return { title: `Tag: ${arg}`, keep: (i) => itemTags(i).includes(arg) && !isArchived(i) };
  return { title: "All items", keep: (i) => !isArchived(i) };
}

/** The most rows a list draws at once; it says so when there are more. */
export const SHOWN = 500;

export function ItemsPage({ kind, arg }: { kind?: string; arg?: string }) {
  const client = currentClient();
  const lib = useLibrary(client, useRefresh());
  const filter = itemFilter(kind, arg);
  const [query, setQuery] = useState("");
  const [chosen, setChosen] = useState<string | null>(null);
  const shown = matching(lib, query, filter);
  const item = shown.find((i) => key(i) === chosen) ?? null;
  const vaultOf = (id: string) => lib.vaults?.find((v) => v.vaultId === id);
  return (
    <main class="panes">
      <section class="list-pane" aria-labelledby="list-heading">
        <h1 id="list-heading">{filter.title}</h1>
        <Field id="all-items-search" label="Search all items">
          <input id="all-items-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
        </Field>
        {lib.loading && <Busy label="Opening your vaults…" />}
        <ErrorNote error={lib.error ? String((lib.error as Error).message ?? lib.error) : null} />
        <ItemRows items={shown} chosen={chosen} onChoose={setChosen} vaultOf={vaultOf} empty={!lib.loading} query={query} />
        {lib.failed.length > 0 && <p class="meta">Not shown (they could not be opened): {lib.failed.join(", ")}.</p>}
      </section>
      <section class="detail-pane" aria-label="Item">
        {item ? (
          <ItemView key={`${item.vaultId}/${item.itemId}`} item={item}>
            <p>
              <a href={`#/vault/${item.vaultId}/${item.itemId}`}>Open in {vaultOf(item.vaultId)?.nameCheck.name ?? "its vault"}</a> to edit
              it, see its history or delete it.
            </p>
          </ItemView>
        ) : (
          <p class="meta">Choose an item to see it here.</p>
        )}
      </section>
    </main>
  );
}

const key = (i: Item) => `${i.vaultId}/${i.itemId}`;

/** The list's items: those the search finds (best first) or, without a query, favourites first then by name. */
function matching(lib: Library, query: string, filter: ItemFilter): Item[] {
  const items = allItems(lib).filter(filter.keep);
  return searchItems(lib, items, query) ?? sortItems(items);
}

const collator = new Intl.Collator(undefined, { sensitivity: "base", numeric: true });

export function sortItems(items: readonly Item[]): Item[] {
  return [...items].sort((a, b) => Number(b.favorite === true) - Number(a.favorite === true) || collator.compare(a.name, b.name));
}

function ItemRows(props: {
  items: Item[];
  chosen: string | null;
  onChoose(key: string): void;
  vaultOf(id: string): CheckedVault | undefined;
  empty: boolean;
  query: string;
}) {
  const { items, chosen } = props;
  if (items.length === 0 && props.empty) return <p>{props.query.trim() ? "No item matches your search." : "No items here yet."}</p>;
  return (
    <>
      {items.length > SHOWN && (
        <p class="meta" role="status">
          Showing the first {SHOWN} of {items.length} items: search to narrow the list.
        </p>
      )}
      <ul class="list item-list" aria-label="Items">
        {items.slice(0, SHOWN).map((i) => (
          <li key={key(i)}>
            <button type="button" class="row" aria-current={chosen === key(i) ? "true" : undefined} onClick={() => props.onChoose(key(i))}>
              <span class="name">
                {i.favorite ? "★ " : ""}
                {i.name}
              </span>
              <span class="meta">
                {props.vaultOf(i.vaultId)?.nameCheck.name ?? ""}
                {i.fields.username ? ` · ${i.fields.username}` : ""}
                {isWaiting(i.itemId) ? " · waiting to be saved" : ""}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}
