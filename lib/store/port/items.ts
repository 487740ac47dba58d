/** Items: ciphertext in a vault, written under the vault's current key version. */
import type { OnVault } from "./vaults";

export interface ItemRecord {
  itemId: string;
  vaultId: string;
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
export type OnItem = OnVault & { itemId: string };

export interface ItemStore {
  /** null when the caller is not a member of the vault. */
  listItems(args: OnVault): Promise<ItemRecord[] | null>;
  getItem(args: OnItem): Promise<ItemRecord>;
  createItem(args: OnItem & { write: ItemWrite; now: string }): Promise<ItemRecord>;
  /** With `revision`, 409 unless it is the item's current one. */
  updateItem(args: OnItem & { write: ItemWrite & { revision?: number }; now: string }): Promise<ItemRecord>;
  deleteItem(args: OnItem): Promise<void>;
}
