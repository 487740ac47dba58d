/**
 * Item history and the trash (the server's rules: lib/domain/items/history.ts). What the server
 * keeps of an item's past is opened here under the vault's key and the item's own id (another
 * item's ciphertext fails as `TAMPERED`), and checked against the signed item log where this
 * client verified the link that wrote it: a revision, or a trashed item, other than the one the
 * log names is `HISTORY_MISMATCH` (a server that offers an older password as what was deleted, or
 * as a revision it was not). Across rekeys and checkpoints, where no link since touched the item,
 * the log's whole current item set (checked against a listing) still vouches for what is live: a
 * live item is not in the trash, and a kept revision is older than the item's current one. A
 * revision or a trashed item the log cannot vouch for is restored only when the person confirms
 * it. Times are the server's word; who wrote a revision is shown only where a verified link says so.
 */
import { ApiError, SecurityError } from "../errors";
import { openItem } from "../items";
import { itemDigest, lastDeleted, pinnedRevisions, type ItemLink } from "../../protocol/formats/item-log";
import type { ItemContent } from "../item-types";
import type { ClientCore } from "./core";
import { assertItem, toItem, type Items } from "./items";
import type { Item, ItemRevision, StoredItem, TrashedItem } from "./types";
import type { Vaults } from "./vaults";
import type { Bytes } from "../../protocol/encoding";
import type { FollowedLog } from "./item-log";
import type { ItemState } from "../../protocol/formats/item-log";
import type { VerifiedRoster } from "./types";

/** A kept revision as the server stores it. */
export interface StoredRevision extends StoredItem {
  replacedAt: string;
}

/** A trashed item as the server stores it. */
export interface StoredTrashed extends StoredItem {
  deletedAt: string;
  deletedBy: string;
}

const vaultPath = (vaultId: string) => `/vaults/${encodeURIComponent(vaultId)}`;

export class History {
  constructor(
    private readonly core: ClientCore,
    private readonly vaults: Vaults,
    private readonly items: Items,
  ) {}

  /** The revisions kept of every item of the vault (or of `itemId`), as stored. */
  async storedHistory(vaultId: string, itemId?: string): Promise<StoredRevision[]> {
    const query = itemId ? `?itemId=${encodeURIComponent(itemId)}` : "";
    const { revisions } = await this.core.http.request<{ revisions: StoredRevision[] }>("GET", `${vaultPath(vaultId)}/history${query}`);
    if (!Array.isArray(revisions)) throw new SecurityError("INCONSISTENT", "the server answers a history that is not a list");
    for (const r of revisions) {
      if (itemId) assertItem(r, vaultId, itemId);
      else assertItem(r, vaultId, r.itemId);
      if (!Number.isInteger(r.revision) || r.revision < 1)
        throw new SecurityError("INCONSISTENT", `the server answers revision ${String(r.revision)} of item ${r.itemId}`);
    }
    return revisions;
  }

  /** The vault's trash, as stored. */
  async storedTrash(vaultId: string): Promise<StoredTrashed[]> {
    const { items } = await this.core.http.request<{ items: StoredTrashed[] }>("GET", `${vaultPath(vaultId)}/trash`);
    if (!Array.isArray(items)) throw new SecurityError("INCONSISTENT", "the server answers a trash that is not a list");
    const seen = new Set<string>();
    for (const t of items) {
      assertItem(t, vaultId, t.itemId);
      if (seen.has(t.itemId)) throw new SecurityError("ITEM_MISMATCH", `the server lists item ${t.itemId} twice in the trash`);
      seen.add(t.itemId);
    }
    return items;
  }

  /** An item's kept revisions, newest first, opened and checked against the links this client verified. */
  async itemHistory(vaultId: string, itemId: string): Promise<ItemRevision[]> {
    const { vault, key, roster } = await this.vaults.openCurrent(vaultId);
    const log = await this.followedWithItems(vaultId, vault, roster);
    const links = log?.sinceBase ?? [];
    const pinned = pinnedRevisions(links, itemId);
    const stored = await this.storedHistory(vaultId, itemId);
    const live = log?.items?.get(itemId);
    const out: ItemRevision[] = [];
    for (const r of [...stored].sort((a, b) => b.revision - a.revision)) {
      const content = await openItem(key, vaultId, r);
      const pin = pinned.get(r.revision);
      if (live && r.revision >= live.revision) throw keptNotOlder(vaultId, itemId, r.revision, live);
      if (pin && pin.sha256 !== (await itemDigest(r)))
        throw new SecurityError(
          "HISTORY_MISMATCH",
          `the server's revision ${r.revision} of item ${itemId} is not the one link ${pin.seq} of the vault's signed item log names`,
        );
      out.push({
        ...content,
        type: content.type ?? "login",
        itemId: r.itemId,
        vaultId: r.vaultId,
        revision: r.revision,
        createdAt: r.createdAt,
        replacedAt: r.replacedAt,
        verified: pin !== undefined,
        ...(pin?.actorId && { signedBy: pin.actorId }),
      });
    }
    return out;
  }

  /** The vault's trash, most recently deleted first, each item opened and checked against its verified `delete` link. */
  async trash(vaultId: string): Promise<TrashedItem[]> {
    const { vault, key, roster } = await this.vaults.openCurrent(vaultId);
    const log = await this.followedWithItems(vaultId, vault, roster);
    const stored = await this.storedTrash(vaultId);
    return Promise.all(stored.map((t) => this.openTrashed(key, vaultId, t, log?.sinceBase ?? [], log?.items)));
  }

  /**
   * The vault's item log as followed, with its whole current item set (checked against a listing
   * where this client did not hold it yet): what is live, whatever rekeys and checkpoints passed.
   * Null for a vault without a roster or log.
   */
  private async followedWithItems(
    vaultId: string,
    vault: { keyVersion: number },
    roster: VerifiedRoster | null,
  ): Promise<FollowedLog | null> {
    if (!roster) return null;
    const log = await this.items.logs.follow(vaultId, roster);
    if (!log || log.items) return log;
    return (await this.items.listCheckedItemsAt(vaultId, vault, roster)).log;
  }

  /**
   * A trashed item opened, and checked where the links since the base touch it: its last one must
   * be the delete, and the entry what that delete removed. Not touched since (deleted before the
   * last checkpoint or rekey), it is `verified: false`: it opens under this vault's key as this item,
   * and nothing more is known.
   */
  private async openTrashed(
    key: Bytes,
    vaultId: string,
    t: StoredTrashed,
    links: readonly ItemLink[],
    live?: ReadonlyMap<string, ItemState>,
  ): Promise<TrashedItem> {
    // The log's current item set holds it: live, whichever rekeys or checkpoints passed since it was written.
    if (live?.has(t.itemId))
      throw new SecurityError(
        "HISTORY_MISMATCH",
        `the server lists item ${t.itemId} in the trash, which the vault's signed item log holds as live (revision ${live.get(t.itemId)!.revision})`,
      );
    const content = await openItem(key, vaultId, t);
    const touched = links.some((l) => l.itemId === t.itemId);
    const deleted = lastDeleted(links, t.itemId);
    if (touched && !deleted)
      throw new SecurityError(
        "HISTORY_MISMATCH",
        `the server lists item ${t.itemId} in the trash, which the vault's signed item log holds as not deleted`,
      );
    if (deleted && (deleted.state.revision !== t.revision || deleted.state.sha256 !== (await itemDigest(t))))
      throw new SecurityError(
        "HISTORY_MISMATCH",
        `the server's trashed item ${t.itemId} is not what link ${deleted.link.seq} of the vault's signed item log deleted (revision ${deleted.state.revision})`,
      );
    return {
      ...toItem(t, content),
      deletedAt: t.deletedAt,
      deletedBy: deleted?.link.actorId ?? t.deletedBy,
      verified: deleted !== undefined,
    };
  }

  /**
   * Brings an item back out of the trash, as it was deleted (checked as `trash` checks it), with the
   * log's `restore` link, on a vault the client may write to (as an edit). An entry the signed log
   * cannot vouch for (deleted before the last checkpoint or rekey) is refused with
   * `TRASH_UNVERIFIED` unless the caller confirmed it (`unverified: true`).
   */
  restoreItem(vaultId: string, itemId: string, opts: { unverified?: boolean } = {}): Promise<Item> {
    const path = `${vaultPath(vaultId)}/trash/${encodeURIComponent(itemId)}/restore`;
    return this.vaults.withCurrentKey(vaultId, async (key, keyVersion, roster) =>
      this.items.logged(vaultId, { keyVersion }, roster, true, async (log, signedRoster) => {
        if (log.items?.has(itemId))
          throw new SecurityError(
            "HISTORY_MISMATCH",
            `the server lists item ${itemId} in the trash, which the vault's signed item log holds`,
          );
        const stored = (await this.storedTrash(vaultId)).find((t) => t.itemId === itemId);
        if (!stored) throw new ApiError(404, "NOT_FOUND", `Item ${itemId} is not in the vault's trash`);
        const item = await this.openTrashed(key, vaultId, stored, log.sinceBase, log.items);
        if (!item.verified && !opts.unverified)
          throw new SecurityError(
            "TRASH_UNVERIFIED",
            `item ${itemId} was deleted before the signed history this device checked: the server's copy opens as this item, but which version it is cannot be checked`,
          );
        const itemLink = await this.items.logs.sign(
          log.head,
          { op: "restore", itemId, revision: stored.revision + 1, sha256: await itemDigest(stored) },
          signedRoster.state,
        );
        const restored = await this.core.http.request<StoredItem>("POST", path, { body: { itemLink } });
        assertItem(restored, vaultId, itemId);
        await this.items.logs.saw(itemLink);
        return toItem(restored, item);
      }),
    );
  }

  /** Deletes a trashed item, with its history, for good. */
  async purgeItem(vaultId: string, itemId: string): Promise<void> {
    await this.core.http.request("DELETE", `${vaultPath(vaultId)}/trash/${encodeURIComponent(itemId)}`);
  }

  /**
   * Makes a kept revision the item's content again: a new revision, written as any edit (the
   * revision replaced is kept in turn). With `seen` (the revision as shown), refused (409) when the
   * server's revision now holds anything else. A revision the signed log cannot vouch for (written
   * before the last checkpoint or rekey this client followed) is refused with `REVISION_UNVERIFIED`
   * unless the caller confirmed it (`unverified: true`), as the trash does.
   */
  async restoreRevision(
    vaultId: string,
    itemId: string,
    revision: number,
    seen?: ItemContent,
    opts: { unverified?: boolean } = {},
  ): Promise<Item> {
    const kept = (await this.itemHistory(vaultId, itemId)).find((r) => r.revision === revision);
    if (!kept) throw new ApiError(404, "NOT_FOUND", `Revision ${revision} of item ${itemId} is not kept`);
    if (seen && contentKey(seen) !== contentKey(kept))
      throw new ApiError(409, "CONFLICT", `Revision ${revision} of item ${itemId} is not what was shown: read its history again`);
    if (!kept.verified && !opts.unverified)
      throw new SecurityError(
        "REVISION_UNVERIFIED",
        `revision ${revision} of item ${itemId} was written before the signed history this device checked: it opens as this item, but which version it is cannot be checked`,
      );
    const { itemId: _i, vaultId: _v, revision: _r, createdAt: _c, replacedAt: _p, signedBy: _s, verified: _f, ...content } = kept;
    return this.items.editItem(vaultId, itemId, content);
  }
}

/** A kept revision not older than the item's live one, which the log's current item set gives. */
const keptNotOlder = (vaultId: string, itemId: string, revision: number, live: ItemState) =>
  new SecurityError(
    "HISTORY_MISMATCH",
    `the server offers revision ${revision} of item ${itemId} of vault ${vaultId} as a kept one, but the vault's signed item log holds the item live at revision ${live.revision}: a kept revision is older`,
  );

/** An item's content, comparable: what a person saw and what is restored must be the same. */
const contentKey = (c: ItemContent): string =>
  JSON.stringify([c.name, c.type ?? "login", c.fields, c.urls ?? null, c.totp ?? null, c.custom ?? null, c.favorite ?? false]);
