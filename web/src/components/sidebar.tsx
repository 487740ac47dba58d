/**
 * The app's sidebar: the item lists (all, favourites, each type, archived), the vaults by their
 * verified names, the tags in use, and the other pages of the route table. On a phone it folds away
 * behind a "Menu" button.
 */
import { useState } from "preact/hooks";
import { ITEM_TYPES, managesOrg, type VaultClient } from "../../../sdk";
import { allItems, isArchived, tagCounts, useLibrary } from "../library";
import { mayView, ROUTES } from "../routes";
import { refreshNow, useRefresh } from "../session";
import { NameFlag } from "./name-flag";

/** The sidebar's name for each type's list. */
export const TYPE_LISTS: Record<(typeof ITEM_TYPES)[number], string> = {
  login: "Logins",
  note: "Secure notes",
  card: "Cards",
  identity: "Identities",
  ssh: "SSH keys",
};

export function Sidebar({ client, current }: { client: VaultClient; current: string }) {
  const lib = useLibrary(client, useRefresh());
  const [open, setOpen] = useState(false);
  const items = allItems(lib);
  const admin = managesOrg(client.account.role);
  const link = (href: string, label: string, extra?: preact.ComponentChildren) => (
    <li key={href}>
      <a href={href} aria-current={current === href ? "page" : undefined} onClick={() => setOpen(false)}>
        {label}
      </a>
      {extra}
    </li>
  );
  return (
    <div class={`sidebar${open ? " open" : ""}`}>
      <button type="button" class="secondary menu-button" aria-expanded={open} aria-controls="sidebar-nav" onClick={() => setOpen(!open)}>
        Menu
      </button>
      {/* A link to the page already shown reads it again (the hash does not change, so nothing else would). */}
      <nav id="sidebar-nav" aria-label="Main" onClick={(e) => sameRoute(e) && refreshNow()}>
        <ul class="nav-list" aria-label="Item lists">
          {link("#/items", "All items")}
          {link("#/items/favourites", "Favourites")}
          {ITEM_TYPES.filter((t) => items.some((i) => i.type === t)).map((t) => link(`#/items/type/${t}`, TYPE_LISTS[t]))}
          {items.some(isArchived) && link("#/items/archived", "Archived")}
        </ul>
        <h2 id="nav-vaults">
          <a href="#/vaults" aria-current={current === "#/vaults" ? "page" : undefined} onClick={() => setOpen(false)}>
            Vaults
          </a>
        </h2>
        <ul class="nav-list" aria-labelledby="nav-vaults">
          {(lib.vaults ?? []).map((v) => link(`#/vault/${v.vaultId}`, v.nameCheck.name, <NameFlag check={v.nameCheck} />))}
        </ul>
        {tagCounts(items).length > 0 && (
          <>
            <h2 id="nav-tags">Tags</h2>
            <ul class="nav-list" aria-labelledby="nav-tags">
              {tagCounts(items).map(([tag, n]) => link(`#/items/tag/${encodeURIComponent(tag)}`, tag, <span class="meta count">{n}</span>))}
            </ul>
          </>
        )}
        <h2 id="nav-more">Account</h2>
        <ul class="nav-list" aria-labelledby="nav-more">
          {ROUTES.filter((r) => r.label && mayView(r, admin)).map((r) => link(`#/${r.path}`, r.label!))}
        </ul>
      </nav>
    </div>
  );
}

/** A click on a link to the route already shown. */
function sameRoute(e: MouseEvent): boolean {
  const link = (e.target as Element | null)?.closest?.("a");
  return link?.getAttribute("href") === location.hash;
}
