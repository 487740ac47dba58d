/**
 * Pages of a vault's item list. `GET /vaults/:vaultId/items` answers every item, as
 * the contract says (the vault limits keep that list buildable); with `limit` (1 to
 * MAX_ITEM_PAGE), or `after`, it answers a page in the same order (`createdAt`, then `itemId`) and
 * `next`: the cursor to pass as `after` for the page after it, or null after the last.
 *
 * A cursor is base64url of `<createdAt> <itemId>` of the last item of its page: the next page
 * starts strictly after that position, so an item added or deleted meanwhile never makes a page
 * repeat or skip one that was there all along.
 */
import { badCursor } from "./refusals";
import { isUuid } from "../ids";

export const DEFAULT_ITEM_PAGE = 500;
export const MAX_ITEM_PAGE = 1_000;

/** Where a page starts: strictly after this item's place in the order. */
export interface ItemPosition {
  createdAt: string;
  itemId: string;
}

export interface ItemPageRequest {
  limit: number;
  after?: ItemPosition;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function itemCursor(p: ItemPosition): string {
  return Buffer.from(`${p.createdAt} ${p.itemId}`, "utf8").toString("base64url");
}

/** The page asked for, or undefined for the whole list; a cursor that is not one of ours is `400` (field `after`). */
export function decideItemPage(query: { limit?: number; after?: string }): ItemPageRequest | undefined {
  if (query.limit === undefined && query.after === undefined) return undefined;
  const limit = query.limit ?? DEFAULT_ITEM_PAGE;
  if (query.after === undefined) return { limit };
  const [createdAt, itemId, ...rest] = Buffer.from(query.after, "base64url").toString("utf8").split(" ");
  if (rest.length > 0 || !createdAt || !TIMESTAMP.test(createdAt) || !isUuid(itemId)) throw badCursor();
  return { limit, after: { createdAt, itemId: itemId.toLowerCase() } };
}

/** The answer for a page read with one row more than asked: the items, and the cursor after them (null after the last). */
export function itemPage<T extends ItemPosition>(rows: T[], page: ItemPageRequest): { items: T[]; next: string | null } {
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return { items, next: rows.length > page.limit && last ? itemCursor(last) : null };
}
