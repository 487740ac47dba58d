/**
 * Named refusals of items: each constructor is the one place a refusal's code, message and field
 * are written, and each is thrown by one rule of this folder. Grep a name to find its rule and its
 * test; the error body keeps the contract's shape (`{ error: { code, message, field? } }`).
 */
import { conflict, invalid, notFound } from "../../errors";

// ---- Items ----------------------------------------------------------------------------------

/** The vault does not exist, or the caller is not its member (the contract does not tell them apart). */
export const vaultNotFound = () => notFound("Vault");

/** The item is not in the vault. */
export const itemNotFound = () => notFound("Item");

/** A create names an itemId the vault already holds. */
export const itemIdTaken = () => conflict("An item with this itemId already exists", "itemId");

/** A create names an itemId that is in the vault's trash (restore or purge it first). */
export const itemIdInTrash = () => conflict("An item with this itemId is in the vault's trash: restore or purge it", "itemId");

/** An import with no items. */
export const importEmpty = () => invalid("An import holds at least one item", "items");

/** An import of more items than one request may add. */
export const importTooLarge = (max: number) => invalid(`An import adds at most ${max} items: send the rest in another`, "items");

/** An import names an itemId twice. */
export const importIdTwice = (itemId: string) => invalid(`item ${itemId} appears twice`, "items");

/** An import names an itemId the vault holds (in its items or its trash). */
export const importIdTaken = (itemId: string) =>
  conflict(`An item with itemId ${itemId} already exists in the vault or its trash`, "items");

/** A restore or purge names an item that is not in the vault's trash. */
export const notInTrash = () => notFound("Trashed item");

/** An update states a revision other than the stored one: it was made on an older read. */
export const staleRevision = (stored: number, stated: number) => conflict(`The item's revision is ${stored}, not ${stated}`, "revision");

/** The item changed between the read under the lock and the conditional write (the store's own race). */
export const itemChangedMeanwhile = () => conflict("The item changed meanwhile", "revision");

// ---- The signed roster ----------------------------------------------------------------------

/** A write without its next item link on a vault that keeps an item log. */
export const itemLinkMissing = (field: string) => invalid("This vault keeps a signed item log: the write must carry its next link", field);

/** An item link on a vault without a signed roster (which keeps no item log). */
export const itemLogWithoutRoster = (field: string) => invalid("A vault without a signed roster keeps no item log", field);

/**
 * An item link that breaks the log's form or rules (protocol/formats/item-log.ts), or describes
 * another write than the request makes: `why` is the rule's own sentence, `field` the link's field
 * it names (`itemLink.sha256`).
 */
export const itemLinkRefused = (field: string, why: string) => invalid(`Item link: ${why}`, field);

/** An item link that was right when signed, but the log, the item or the roster moved on since: the client signs again on the new head. */
export const itemLinkRaced = (field: string, why: string) =>
  conflict(`Item link: ${why}; read the item log again and sign on its head`, field);

// ---- Names and sizes ------------------------------------------------------------------------

/** An item's ciphertext past its size. */
export const itemTooLarge = (field: "encryptedData" | "encryptedName", limit: string) => invalid(`${field} is larger than ${limit}`, field);

// ---- Keys, statements and formats -----------------------------------------------------------

/** An `after` that is not a cursor this server gave. */
export const badCursor = () => invalid("after is not a cursor this server gave (pass the `next` of the page before)", "after");

/** A delta read asked with pages (lib/domain/items/changes.ts). */
export const deltaWithPage = () => invalid("since reads the changes in one answer: it cannot be combined with limit or after", "since");

// ---- Who sees what --------------------------------------------------------------------------

/** A checkpoint request without its link. */
export const checkpointWithoutLink = () => invalid("A checkpoint is an itemLink", "itemLink");
