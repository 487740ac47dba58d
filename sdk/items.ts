/**
 * Items as the client sees them: a name and a set of fields, each part sealed with AES-256-GCM
 * under the vault key. The associated data names the vault, the item and the part, so a
 * ciphertext that the server moves to another item or vault, or swaps between name and data,
 * fails to open.
 */
import { fromBase64, fromUtf8, toBase64, utf8, type Bytes } from "../protocol/encoding";
import { SecurityError } from "./errors";
import { gcmDecrypt, gcmEncrypt } from "../protocol/crypto/primitives";
import { itemDataJson, parseItemData, type ItemContent } from "./item-types";

export type { ItemContent } from "./item-types";

export interface SealedItem {
  itemId: string;
  encryptedData: string;
  encryptedName: string;
}

type Part = "name" | "data";

/** `vault-item/v1/<vaultId>/<itemId>/<part>`, ids in lower case as the server stores them. */
export function itemAssociatedData(vaultId: string, itemId: string, part: Part): Bytes {
  return utf8(`vault-item/v1/${vaultId.toLowerCase()}/${itemId.toLowerCase()}/${part}`);
}

export async function sealItem(vaultKey: Bytes, vaultId: string, itemId: string, content: ItemContent): Promise<SealedItem> {
  const [encryptedName, encryptedData] = await Promise.all([
    gcmEncrypt(vaultKey, utf8(content.name), itemAssociatedData(vaultId, itemId, "name")),
    gcmEncrypt(vaultKey, utf8(itemDataJson(content)), itemAssociatedData(vaultId, itemId, "data")),
  ]);
  return { itemId, encryptedName: toBase64(encryptedName), encryptedData: toBase64(encryptedData) };
}

/** Throws `SecurityError("TAMPERED")` for a ciphertext that is not this item's under this key. */
export async function openItem(vaultKey: Bytes, vaultId: string, item: SealedItem): Promise<ItemContent> {
  try {
    const [name, data] = await Promise.all([
      gcmDecrypt(vaultKey, fromBase64(item.encryptedName), itemAssociatedData(vaultId, item.itemId, "name")),
      gcmDecrypt(vaultKey, fromBase64(item.encryptedData), itemAssociatedData(vaultId, item.itemId, "data")),
    ]);
    return parseItemData(fromUtf8(name), fromUtf8(data));
  } catch {
    throw new SecurityError(
      "TAMPERED",
      `item ${item.itemId} does not open under this vault's key: it was altered, moved or encrypted under another key`,
    );
  }
}

/**
 * A website as a person types it, made a web address: `github.com` is `https://github.com`; an
 * address with its own scheme keeps it. Undefined for blank text. What is stored is the person's
 * (completed) text: opening it is `openableUrl`'s decision.
 */
export function completeItemUrl(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  return /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
}

/**
 * The address a client may open for an item's website: only http and https, as a parsed URL (never
 * `javascript:`, `data:` or a `file:` path, which an item shared by someone else could hold);
 * undefined otherwise.
 */
export function openableUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(completeItemUrl(text) ?? "");
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}
