/** Items: ciphertext in a vault, written under the vault's current key version. */
import type { ItemId, VaultId } from "../../domain/ids";
import type { OnVault } from "./vaults";

export interface ItemRecord {
  itemId: ItemId;
  vaultId: VaultId;
  encryptedData: string;
  encryptedName: string;
  revision: number;
  /** The vault key version the item was last written under. */
  keyVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface ItemWrite {
  encryptedData: string;
  encryptedName: string;
  /** The key version the client encrypted under; refused with 409 when it is not the current one. */
  keyVersion?: number;
}

/** One item of a vault, and the member acting on it. */
export type OnItem = OnVault & { itemId: ItemId };

export interface ItemStore {
  listItems(args: OnVault): Promise<ItemRecord[]>;
  getItem(args: OnItem): Promise<ItemRecord>;
  createItem(args: OnItem & { write: ItemWrite; now: string }): Promise<ItemRecord>;
  /** With `revision`, 409 unless it is the item's current one. */
  updateItem(args: OnItem & { write: ItemWrite & { revision?: number }; now: string }): Promise<ItemRecord>;
  deleteItem(args: OnItem): Promise<void>;
}
