/**
 * Named refusals: each constructor is the one place a refusal's code, message and field are
 * written, and each is thrown by one rule (a `decide*` in lib/domain/). Grep a name to find its
 * rule and the rule's test; the error body keeps the contract's shape (`{ error: { code,
 * message, field? } }`).
 */
import { conflict, notFound } from "../errors";

// ---- Items (lib/domain/items.ts) ----------------------------------------------------------------

/** The vault does not exist, or the caller is not its member (the contract does not tell them apart). */
export const vaultNotFound = () => notFound("Vault");
/** The item is not in the vault. */
export const itemNotFound = () => notFound("Item");
/** A create names an itemId the vault already holds. */
export const itemIdTaken = () => conflict("An item with this itemId already exists", "itemId");
/** An update states a revision other than the stored one: it was made on an older read. */
export const staleRevision = (stored: number, stated: number) => conflict(`The item's revision is ${stored}, not ${stated}`, "revision");
/** The item changed between the read under the lock and the conditional write (the store's own race). */
export const itemChangedMeanwhile = () => conflict("The item changed meanwhile", "revision");
