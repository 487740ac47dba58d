/**
 * A vault's items: the list (searched, favourites first) beside the item open with its history;
 * adding or editing one in a dialog. "/" moves to the search, "n" adds an item (docs/user/web-vault.md).
 * Offline (web/src/offline.ts) the same changes wait in this browser to be saved (offline-edits.ts).
 */
import { useEffect, useState } from "preact/hooks";
import type { Item, ItemContent } from "../../../../sdk";
import { ErrorNote, Field, inputValue } from "../../components/ui";
import { useItemSearch } from "../../components/item-search";
import { Dialog } from "../../components/dialog";
import { sortItems } from "../items";
import { ItemView } from "./item-view";
import { ItemForm } from "./item-form";
import { ItemHistory } from "./history";
import type { VaultState } from "./use-vault";
import { isOffline } from "../../offline";
import { addOffline, deleteOffline, editOffline, isWaiting, useWaitingEdits } from "../../offline-edits";

export function ItemsSection({ state }: { state: VaultState }) {
  const item = state.items.find((i) => i.itemId === state.open);
  const add = () => {
    state.act.clear();
    state.setEditing("new");
  };
  useShortcut("n", add, state.editing === null);
  // The marks "waiting to be saved" follow the queue.
  useWaitingEdits();
  return (
    <div class="panes">
      <section class="list-pane" aria-labelledby="items-heading">
        <h2 id="items-heading">Items</h2>
        <button type="button" onClick={add}>
          Add item
        </button>
        <ItemList state={state} />
      </section>
      <section class="detail-pane" aria-label="Item">
        {item ? <OpenItem state={state} item={item} /> : <p class="meta">Choose an item to see it here.</p>}
      </section>
      {state.editing !== null && <EditItem state={state} editing={state.editing} />}
    </div>
  );
}

/** A single-key shortcut, not while typing in a field (or with a modifier held). */
export function useShortcut(key: string, run: () => void, active = true): void {
  useEffect(() => {
    if (!active) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== key || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      e.preventDefault();
      run();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [key, active]);
}

const typing = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

/** The items, favourites first, or those matching the search; a click opens one (or closes it again). */
function ItemList({ state }: { state: VaultState }) {
  const { items, open } = state;
  const [query, setQuery] = useState("");
  const found = useItemSearch(items, query, state.vaultId);
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
        {(found ?? sortItems(items)).map((i) => (
          <li key={i.itemId}>
            <button
              type="button"
              class="row"
              aria-current={open === i.itemId ? "true" : undefined}
              onClick={() => state.setOpen(open === i.itemId ? null : i.itemId)}
            >
              <span class="name">
                {i.favorite ? "★ " : ""}
                {i.name}
              </span>
              {i.fields.username && <span class="meta">{i.fields.username}</span>}
              {isWaiting(i.itemId) && <span class="meta">waiting to be saved</span>}
            </button>
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
        if (isOffline()) await deleteOffline(client, item);
        else await client.items.delete(vaultId, item.itemId);
        state.setOpen(null);
      });
  };
  const edit = () => {
    state.act.clear();
    state.setEditing(item);
  };
  // Keyed: a secret revealed on one item is not shown on the next one opened. Offline: no history (it is the server's).
  return (
    <>
      <ItemView key={item.itemId} item={item} onEdit={edit} onDelete={remove} onFilesChanged={() => void state.reload()} />
      {isWaiting(item.itemId) && <p class="note">Changed offline: waiting to be saved when the server answers again.</p>}
      {!isOffline() && (
        <ItemHistory vaultId={vaultId} item={item} onRestored={(i) => void state.reload().then(() => state.setOpen(i.itemId))} />
      )}
    </>
  );
}

/** A new item, or a change to one: saved against the revision it was read at (offline: queued on it). */
function EditItem({ state, editing }: { state: VaultState; editing: Item | "new" }) {
  const { client, vaultId } = state;
  const save = (content: ItemContent) =>
    state.change(async () => {
      const offline = isOffline();
      const saved =
        editing === "new"
          ? await (offline ? addOffline(client, vaultId, content) : client.items.add(vaultId, content))
          : await (offline
              ? editOffline(client, editing, content)
              : client.items.edit(vaultId, editing.itemId, content, { revision: editing.revision }));
      state.setEditing(null);
      state.setOpen(saved.itemId);
    });
  const cancel = () => state.setEditing(null);
  return (
    <Dialog label={editing === "new" ? "New item" : `Edit ${editing.name}`} onClose={cancel}>
      <ErrorNote error={state.act.error} />
      <ItemForm item={editing === "new" ? undefined : editing} busy={state.act.busy} onCancel={cancel} onSave={save} />
    </Dialog>
  );
}
