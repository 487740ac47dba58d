/** Items: sealed here under the vault's current key, opened here and checked against their vault and id. */
import { openItem, sealItem, type ItemContent } from "../items";
import type { ClientCore } from "./core";
import type { Item, StoredItem } from "./types";
import type { Vaults } from "./vaults";

export class Items {
  constructor(
    private readonly core: ClientCore,
    private readonly vaults: Vaults,
  ) {}

  async listStoredItems(vaultId: string): Promise<StoredItem[]> {
    return (await this.core.http.request<{ items: StoredItem[] }>("GET", `/vaults/${encodeURIComponent(vaultId)}/items`)).items;
  }

  /** Every item of the vault, opened (each checked against its vault and item id). */
  async listItems(vaultId: string): Promise<Item[]> {
    const vaultKey = await this.vaults.openCurrentVault(vaultId);
    const stored = await this.listStoredItems(vaultId);
    return Promise.all(stored.map(async (s) => toItem(s, await openItem(vaultKey, vaultId, s))));
  }

  async getItem(vaultId: string, itemId: string): Promise<Item> {
    const vaultKey = await this.vaults.openCurrentVault(vaultId);
    const stored = await this.core.http.request<StoredItem>(
      "GET",
      `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`,
    );
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
      return toItem(stored, content);
    });
  }

  async deleteItem(vaultId: string, itemId: string): Promise<void> {
    await this.core.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`);
  }
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
