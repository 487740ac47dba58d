/**
 * `client.items`: a vault's items, opened and checked against the signed item log (the part:
 * items.ts), their kept revisions and the trash (history.ts), and the import (transfer.ts; the
 * formats: sdk/transfer/).
 */
import type { ItemContent } from "../../items";
import type { Parts } from "../parts";
import type { ImportItem } from "../../transfer/types";
import type { ImportResult, TransferProgress, VaultPerFolderResult } from "../transfer";
import type { Item, ItemRevision, TrashedItem } from "../types";
import { lc } from "./ids";

export interface ItemsApi {
  /** Every item of the vault, opened (each checked against this vault and its own id, each id once, and the signed item log). */
  list(vaultId: string): Promise<Item[]>;
  /** One item, opened; a revision or ciphertext other than the signed item log's is refused (`TAMPERED`). */
  get(vaultId: string, itemId: string): Promise<Item>;
  /** Seals a new item under the current key; a rekey in between seals it again under the new one. */
  add(vaultId: string, content: ItemContent): Promise<Item>;
  /** Replaces an item's content; with `revision`, only if nobody changed it since (else 409). */
  edit(vaultId: string, itemId: string, content: ItemContent, opts?: { revision?: number }): Promise<Item>;
  /** Moves an item to the vault's trash (`trash`, `restore`, `purge`). */
  delete(vaultId: string, itemId: string): Promise<void>;
  /** An item's kept revisions, newest first, opened and checked against the signed item log. */
  history(vaultId: string, itemId: string): Promise<ItemRevision[]>;
  /** Makes a kept revision the item's content again (a new revision); with `seen`, refused (409) when the server's revision now holds anything else. */
  /** A kept revision made current again; `unverified: true` once the person confirmed one the signed history cannot vouch for (REVISION_UNVERIFIED). */
  restoreRevision(vaultId: string, itemId: string, revision: number, seen?: ItemContent, opts?: { unverified?: boolean }): Promise<Item>;
  /** The vault's trash, most recently deleted first, each item opened and checked against its verified `delete` link. */
  trash(vaultId: string): Promise<TrashedItem[]>;
  /** Out of the trash; `unverified: true` once the person confirmed an entry the signed history cannot vouch for (TRASH_UNVERIFIED). */
  restore(vaultId: string, itemId: string, opts?: { unverified?: boolean }): Promise<Item>;
  /** Deletes a trashed item, with its history, for good. */
  purge(vaultId: string, itemId: string): Promise<void>;
  /** Seals the items here and adds them in one bulk request per 5,000 (each all or none). */
  import(vaultId: string, contents: readonly ItemContent[], onProgress?: (p: TransferProgress) => void): Promise<ImportResult>;
  /**
   * A new vault for each 1Password vault, top-level folder or KeePass group of the file (`ImportItem.place`), named
   * after it and holding its items; the items kept at none go into `vaultId`. The result names each vault filled.
   */
  importVaultPerFolder(
    vaultId: string,
    contents: readonly ImportItem[],
    onProgress?: (p: TransferProgress & { vaultId: string; place?: string }) => void,
  ): Promise<VaultPerFolderResult>;
}

export function itemsApi({ items, history, transfers }: Pick<Parts, "items" | "history" | "transfers">): ItemsApi {
  return {
    list: (vaultId) => items.listItems(lc(vaultId)),
    get: (vaultId, itemId) => items.getItem(lc(vaultId), lc(itemId)),
    add: (vaultId, content) => items.addItem(lc(vaultId), content),
    edit: (vaultId, itemId, content, opts = {}) => items.editItem(lc(vaultId), lc(itemId), content, opts),
    delete: (vaultId, itemId) => items.deleteItem(lc(vaultId), lc(itemId)),
    history: (vaultId, itemId) => history.itemHistory(lc(vaultId), lc(itemId)),
    restoreRevision: (vaultId, itemId, revision, seen, opts = {}) => history.restoreRevision(lc(vaultId), lc(itemId), revision, seen, opts),
    trash: (vaultId) => history.trash(lc(vaultId)),
    restore: (vaultId, itemId, opts = {}) => history.restoreItem(lc(vaultId), lc(itemId), opts),
    purge: (vaultId, itemId) => history.purgeItem(lc(vaultId), lc(itemId)),
    import: (vaultId, contents, onProgress) => transfers.importItems(lc(vaultId), contents, onProgress),
    importVaultPerFolder: (vaultId, contents, onProgress) => transfers.importVaultPerFolder(lc(vaultId), contents, onProgress),
  };
}
