/**
 * Items: sealed here under the vault's current key (writes refused where the vault's roster says
 * they are unsafe: vaults.ts, `withCurrentKey`), opened here under the vault and item ids they
 * were asked for, so that the server cannot answer one item's record for another's.
 */
import { SecurityError } from "../errors";
import { isCanonicalId } from "../ids";
import { openItem, sealItem, type ItemContent } from "../items";
import type { ClientCore } from "./core";
import type { Bytes } from "../encoding";
import type { Item, StoredItem } from "./types";
import type { Vaults } from "./vaults";

/** Items asked for per page of a vault's list. */
export const ITEM_PAGE = 500;
/** More items than any vault can hold (the server's VAULT_MAX_ITEMS is 50,000 by default). */
export const MAX_LISTED_ITEMS = 1_000_000;

export class Items {
  constructor(
    private readonly core: ClientCore,
    private readonly vaults: Vaults,
  ) {}

  /**
   * Every stored item of the vault, page by page (ITEM_PAGE at a time, following `next`). The pages
   * must go forward: each item after the one before in the list's order (`createdAt`, then
   * `itemId`), so that a server cannot keep a client reading in a loop; and no vault lists more
   * than MAX_LISTED_ITEMS. A server of an earlier release answers every item at once, without `next`.
   */
  async listStoredItems(vaultId: string): Promise<StoredItem[]> {
    const all: StoredItem[] = [];
    const seen = new Set<string>();
    let after: string | null | undefined;
    do {
      const query = `limit=${ITEM_PAGE}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const page = await this.core.http.request<{ items: StoredItem[]; next?: string | null }>(
        "GET",
        `/vaults/${encodeURIComponent(vaultId)}/items?${query}`,
      );
      if (!Array.isArray(page.items)) throw new SecurityError("INCONSISTENT", "the server answers an item list that is not a list");
      // An item listed twice is named as such, whatever the order it comes in.
      for (const item of page.items) {
        if (seen.has(item.itemId)) throw new SecurityError("ITEM_MISMATCH", `the server lists item ${item.itemId} twice`);
        seen.add(item.itemId);
      }
      for (const item of page.items) {
        const last = all.at(-1);
        if (last && !(last.createdAt < item.createdAt || (last.createdAt === item.createdAt && last.itemId < item.itemId)))
          throw new SecurityError("INCONSISTENT", `the server lists item ${item.itemId} out of order`);
        all.push(item);
      }
      if (all.length > MAX_LISTED_ITEMS) throw new SecurityError("INCONSISTENT", `the server lists more than ${MAX_LISTED_ITEMS} items`);
      if (page.next && page.items.length === 0)
        throw new SecurityError("INCONSISTENT", "the server answers an empty page that is not the last");
      after = page.next;
    } while (after);
    return all;
  }

  /** Every item of the vault, opened (each checked against this vault and its own id, each id once). */
  async listItems(vaultId: string): Promise<Item[]> {
    let vaultKey: Bytes;
    let stored: StoredItem[];
    // A rekey that lands while the pages are read leaves items under a newer key than the one
    // opened: the listing starts over (twice at most) rather than report them as tampered.
    for (let attempt = 1; ; attempt++) {
      const { vault, key } = await this.vaults.openCurrent(vaultId);
      vaultKey = key;
      stored = await this.listStoredItems(vaultId);
      const newer = stored.some((s) => typeof s.keyVersion === "number" && s.keyVersion > vault.keyVersion);
      if (!newer || attempt >= 3) break;
    }
    // Each id once: listStoredItems refuses an item listed twice.
    for (const s of stored) assertItem(s, vaultId, s.itemId);
    return Promise.all(stored.map(async (s) => toItem(s, await openItem(vaultKey, vaultId, s))));
  }

  /** The item asked for, opened under its own vault and id: another item's record (`ITEM_MISMATCH`) or ciphertext (`TAMPERED`) is refused. */
  async getItem(vaultId: string, itemId: string): Promise<Item> {
    const vaultKey = await this.vaults.openCurrentVault(vaultId);
    const stored = await this.core.http.request<StoredItem>(
      "GET",
      `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`,
    );
    assertItem(stored, vaultId, itemId);
    return toItem(stored, await openItem(vaultKey, vaultId, stored));
  }

  /** Seals a new item under the current key; a rekey in between (409) seals it again under the new one. */
  addItem(vaultId: string, content: ItemContent): Promise<Item> {
    const itemId = globalThis.crypto.randomUUID();
    return this.vaults.withCurrentKey(vaultId, async (vaultKey, keyVersion) => {
      const sealed = await sealItem(vaultKey, vaultId, itemId, content);
      const stored = await this.core.http.request<StoredItem>("POST", `/vaults/${encodeURIComponent(vaultId)}/items`, {
        body: { ...sealed, keyVersion },
      });
      assertItem(stored, vaultId, itemId);
      return toItem(stored, content);
    });
  }

  /** Replaces an item's content; with `revision`, only if nobody changed it since (else 409). */
  editItem(vaultId: string, itemId: string, content: ItemContent, opts: { revision?: number } = {}): Promise<Item> {
    return this.vaults.withCurrentKey(vaultId, async (vaultKey, keyVersion) => {
      const sealed = await sealItem(vaultKey, vaultId, itemId, content);
      const stored = await this.core.http.request<StoredItem>(
        "PUT",
        `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`,
        {
          body: { encryptedData: sealed.encryptedData, encryptedName: sealed.encryptedName, revision: opts.revision, keyVersion },
        },
      );
      assertItem(stored, vaultId, itemId);
      return toItem(stored, content);
    });
  }

  async deleteItem(vaultId: string, itemId: string): Promise<void> {
    await this.core.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`);
  }
}

/** The record is the item asked for, in the vault asked for, both ids exactly as the server stores them (lower case). */
function assertItem(stored: StoredItem, vaultId: string, itemId: string): void {
  if (!isCanonicalId(stored?.itemId) || stored.itemId !== itemId.toLowerCase() || stored.vaultId !== vaultId.toLowerCase())
    throw new SecurityError(
      "ITEM_MISMATCH",
      `asked for item ${itemId} of vault ${vaultId}, the server answered item ${stored?.itemId} of vault ${stored?.vaultId}`,
    );
}

function toItem(stored: StoredItem, content: ItemContent): Item {
  return {
    itemId: stored.itemId,
    vaultId: stored.vaultId,
    name: content.name,
    fields: content.fields,
    revision: stored.revision,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  };
}
