/** A vault's items: finding one and opening it, reading it with its history, adding or editing one. */
import { useState } from "preact/hooks";
import type { Item, ItemContent } from "../../../../sdk";
import { Field, inputValue } from "../../components/ui";
import { favouritesFirst, useItemSearch } from "../../components/item-search";
import { ItemView } from "./item-view";
import { ItemForm } from "./item-form";
import { ItemHistory } from "./history";
import type { VaultState } from "./use-vault";

export function ItemsSection({ state }: { state: VaultState }) {
  const item = state.items.find((i) => i.itemId === state.open);
  return (
    <section aria-labelledby="items-heading">
      <h2 id="items-heading">Items</h2>
      <ItemList state={state} />
      {item && state.editing === null && <OpenItem state={state} item={item} />}
      {state.editing !== null ? (
        <EditItem state={state} editing={state.editing} />
      ) : (
        <button
          type="button"
          onClick={() => {
            state.setEditing("new");
            state.setOpen(null);
          }}
        >
          Add item
        </button>
      )}
    </section>
  );
}

/** The items, favourites first, or those matching the search; a click opens one (or closes it again). */
function ItemList({ state }: { state: VaultState }) {
  const { items, open } = state;
  const [query, setQuery] = useState("");
  const found = useItemSearch(items, query);
  return (
    <>
      {items.length === 0 && <p>No items yet.</p>}
      {items.length > 0 && (
        <Field id="item-search" label="Search items">
          <input id="item-search" type="search" value={query} onInput={(e) => setQuery(inputValue(e))} />
        </Field>
      )}
      {found && found.length === 0 && <p>No item matches your search.</p>}
      <ul class="list" aria-label="Items">
        {(found ?? favouritesFirst(items)).map((i) => (
          <li key={i.itemId}>
            <button
              type="button"
              class="link"
              aria-expanded={open === i.itemId}
              onClick={() => {
                state.setOpen(open === i.itemId ? null : i.itemId);
                state.setEditing(null);
              }}
            >
              {i.favorite ? "★ " : ""}
              {i.name}
            </button>
            {i.fields.username && <span class="meta">{i.fields.username}</span>}
          </li>
        ))}
      </ul>
    </>
  );
}

/** The item open: its fields, deleting it (to the trash), and its earlier versions. */
function OpenItem({ state, item }: { state: VaultState; item: Item }) {
  const { client, vaultId } = state;
  const remove = () => {
    if (confirm(`Move "${item.name}" to the trash? Members can restore it from there until it is purged.`))
      void state.change(async () => {
        await client.items.delete(vaultId, item.itemId);
        state.setOpen(null);
      });
  };
  return (
    <>
      <ItemView item={item} onEdit={() => state.setEditing(item)} onDelete={remove} />
      <ItemHistory vaultId={vaultId} item={item} onRestored={(i) => void state.reload().then(() => state.setOpen(i.itemId))} />
    </>
  );
}

/** A new item, or a change to one: saved against the revision it was read at. */
function EditItem({ state, editing }: { state: VaultState; editing: Item | "new" }) {
  const { client, vaultId } = state;
  const save = (content: ItemContent) =>
    state.change(async () => {
      const saved =
        editing === "new"
          ? await client.items.add(vaultId, content)
          : await client.items.edit(vaultId, editing.itemId, content, { revision: editing.revision });
      state.setEditing(null);
      state.setOpen(saved.itemId);
    });
  return (
    <ItemForm item={editing === "new" ? undefined : editing} busy={state.act.busy} onCancel={() => state.setEditing(null)} onSave={save} />
  );
}
