/**
 * Pages of a vault's item list (lib/domain/items/pages.ts): the query in, the page asked for (or the
 * whole list) out, or the named refusal of a cursor this server did not give.
 */
import { DEFAULT_ITEM_PAGE, decideItemPage, itemCursor, itemPage } from "../../../../../lib/domain/items/pages";
import { badCursor } from "../../../../../lib/domain/items/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal } from "../../../../helpers/refusal";

const itemId = "0e3f4a1c-2b5d-4c6e-8f70-123456789abc";
const createdAt = "2024-05-01T10:00:00.000Z";
const raw = (text: string) => Buffer.from(text, "utf8").toString("base64url");

function outcome(decide: () => unknown): unknown {
  try {
    return decide() ?? "the whole list";
  } catch (err) {
    return asRefusal(err as AppError);
  }
}

test.each<[string, Parameters<typeof decideItemPage>[0], unknown]>([
  ["neither limit nor after: the whole list", {}, "the whole list"],
  ["a limit: the first page", { limit: 10 }, { limit: 10 }],
  [
    "a cursor without a limit: the default page size",
    { after: itemCursor({ createdAt, itemId }) },
    { limit: DEFAULT_ITEM_PAGE, after: { createdAt, itemId } },
  ],
  [
    "a cursor's id in upper case: read lower-case",
    { limit: 5, after: raw(`${createdAt} ${itemId.toUpperCase()}`) },
    { limit: 5, after: { createdAt, itemId } },
  ],
  ["a cursor that is not base64url of a position", { after: "not a cursor" }, asRefusal(badCursor())],
  ["a cursor with a third part", { after: raw(`${createdAt} ${itemId} more`) }, asRefusal(badCursor())],
  ["a cursor whose time is not a timestamp", { after: raw(`yesterday ${itemId}`) }, asRefusal(badCursor())],
  ["a cursor whose id is not a UUID", { after: raw(`${createdAt} ../etc`) }, asRefusal(badCursor())],
  ["a cursor without an id", { after: raw(createdAt) }, asRefusal(badCursor())],
])("decideItemPage: %s", (_what, query, expected) => {
  expect(outcome(() => decideItemPage(query))).toEqual(expected);
});

test("itemPage: the rows asked for, and the cursor after the last when there are more", () => {
  const rows = ["a", "b", "c"].map((id, i) => ({ createdAt, itemId: `${itemId.slice(0, -1)}${i}`, id }));
  expect(itemPage(rows, { limit: 2 })).toEqual({ items: rows.slice(0, 2), next: itemCursor(rows[1]!) });
  expect(itemPage(rows, { limit: 3 })).toEqual({ items: rows, next: null });
});
