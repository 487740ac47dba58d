/**
 * Item history and the trash (the server's rules: lib/domain/item-history.ts). What the server
 * keeps of an item's past is opened here under the vault's key and the item's own id (another
 * item's ciphertext fails as `TAMPERED`), and checked against the signed item log where this
 * client verified the link that wrote it: a revision, or a trashed item, other than the one the
 * log names is `HISTORY_MISMATCH` (a server that offers an older password as what was deleted, or
 * as a revision it was not). Times are the server's word; who wrote a revision is shown only where
 * a verified link says so.
 */
import { ApiError, SecurityError } from "../errors";
import { openItem } from "../items";
import { itemDigest, type ItemLink } from "../item-log";
import type { ClientCore } from "./core";
import { assertItem, toItem, type Items } from "./items";
import type { Item, ItemRevision, StoredItem, TrashedItem } from "./types";
import type { Vaults } from "./vaults";
import type { Bytes } from "../encoding";

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
    const { key, roster } = await this.vaults.openCurrent(vaultId);
    const links = roster ? ((await this.items.logs.follow(vaultId, roster))?.sinceBase ?? []) : [];
    const stored = await this.storedHistory(vaultId, itemId);
    const out: ItemRevision[] = [];
    for (const r of [...stored].sort((a, b) => b.revision - a.revision)) {
      const content = await openItem(key, vaultId, r);
      const link = links.find((l) => l.itemId === r.itemId && l.op !== "delete" && l.revision === r.revision);
      if (link && link.sha256 !== (await itemDigest(r)))
        throw new SecurityError(
          "HISTORY_MISMATCH",
          `the server's revision ${r.revision} of item ${itemId} is not the one link ${link.seq} of the vault's signed item log wrote`,
        );
      out.push({
        ...content,
        type: content.type ?? "login",
        itemId: r.itemId,
        vaultId: r.vaultId,
        revision: r.revision,
        createdAt: r.createdAt,
        replacedAt: r.replacedAt,
        ...(link && { signedBy: link.actorId }),
      });
    }
    return out;
  }

  /** The vault's trash, most recently deleted first, each item opened and checked against its verified `delete` link. */
  async trash(vaultId: string): Promise<TrashedItem[]> {
    const { key, roster } = await this.vaults.openCurrent(vaultId);
    const links = roster ? ((await this.items.logs.follow(vaultId, roster))?.sinceBase ?? []) : [];
    const stored = await this.storedTrash(vaultId);
    return Promise.all(stored.map((t) => this.openTrashed(key, vaultId, t, links)));
  }

  private async openTrashed(key: Bytes, vaultId: string, t: StoredTrashed, links: readonly ItemLink[]): Promise<TrashedItem> {
    const content = await openItem(key, vaultId, t);
    const deleted = links.findLast((l) => l.itemId === t.itemId && l.op === "delete");
    if (deleted && (deleted.revision !== t.revision || deleted.prevSha256 !== (await itemDigest(t))))
      throw new SecurityError(
        "HISTORY_MISMATCH",
        `the server's trashed item ${t.itemId} is not what link ${deleted.seq} of the vault's signed item log deleted (revision ${deleted.revision})`,
      );
    return { ...toItem(t, content), deletedAt: t.deletedAt, deletedBy: deleted?.actorId ?? t.deletedBy };
  }

  /** Brings an item back out of the trash, as it was deleted (checked as `trash` checks it), with the log's `restore` link on a signed vault. */
  async restoreItem(vaultId: string, itemId: string): Promise<Item> {
    const { vault, key, roster } = await this.vaults.openCurrent(vaultId);
    const path = `${vaultPath(vaultId)}/trash/${encodeURIComponent(itemId)}/restore`;
    const find = async (links: readonly ItemLink[]) => {
      const stored = (await this.storedTrash(vaultId)).find((t) => t.itemId === itemId);
      if (!stored) throw new ApiError(404, "NOT_FOUND", `Item ${itemId} is not in the vault's trash`);
      return { stored, item: await this.openTrashed(key, vaultId, stored, links) };
    };
    if (!roster) {
      const { item } = await find([]);
      const restored = await this.core.http.request<StoredItem>("POST", path);
      assertItem(restored, vaultId, itemId);
      return toItem(restored, item);
    }
    return this.items.logged(vaultId, vault, roster, false, async (log, signedRoster) => {
      const { stored, item } = await find(log.sinceBase);
      const itemLink = await this.items.logs.sign(
        log.head,
        { op: "restore", itemId, revision: stored.revision + 1, sha256: await itemDigest(stored) },
        signedRoster.state,
      );
      const restored = await this.core.http.request<StoredItem>("POST", path, { body: { itemLink } });
      assertItem(restored, vaultId, itemId);
      await this.items.logs.saw(itemLink);
      return toItem(restored, item);
    });
  }

  /** Deletes a trashed item, with its history, for good. */
  async purgeItem(vaultId: string, itemId: string): Promise<void> {
    await this.core.http.request("DELETE", `${vaultPath(vaultId)}/trash/${encodeURIComponent(itemId)}`);
  }

  /** Makes a kept revision the item's content again: a new revision, written as any edit (the revision replaced is kept in turn). */
  async restoreRevision(vaultId: string, itemId: string, revision: number): Promise<Item> {
    const kept = (await this.itemHistory(vaultId, itemId)).find((r) => r.revision === revision);
    if (!kept) throw new ApiError(404, "NOT_FOUND", `Revision ${revision} of item ${itemId} is not kept`);
    const { itemId: _i, vaultId: _v, revision: _r, createdAt: _c, replacedAt: _p, signedBy: _s, ...content } = kept;
    return this.items.editItem(vaultId, itemId, content);
  }
}
