/**
 * Delta reads (lib/domain/items/changes.ts), as tables: the query and the vault's change counter
 * in, the plan or the answer (or the named refusal, with its code and field) out.
 */
import {
  cursorOf,
  decideDeltaRead,
  deltaAnswer,
  MAX_DELTA_ITEMS,
  newChangeEpoch,
  planDelta,
} from "../../../../../lib/domain/items/changes";
import { deltaWithPage } from "../../../../../lib/domain/items/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal } from "../../../../helpers/refusal";

function outcome(decide: () => unknown): unknown {
  try {
    return decide() ?? "none";
  } catch (err) {
    return asRefusal(err as AppError);
  }
}

test.each<[string, Parameters<typeof decideDeltaRead>[0], unknown]>([
  ["no since: not a delta read (the list, or a page)", { limit: 10 }, "none"],
  ["since 0: from the start", { since: 0 }, 0],
  ["since a cursor", { since: 42 }, 42],
  ["since with a page size", { since: 3, limit: 10 }, asRefusal(deltaWithPage())],
  ["since with a page cursor", { since: 3, after: "x" }, asRefusal(deltaWithPage())],
])("decideDeltaRead: %s", (_what, query, expected) => {
  expect(outcome(() => decideDeltaRead(query))).toEqual(expected);
});

const EPOCH = 77;
const at = (seq: number) => cursorOf(EPOCH, seq);

test.each<[string, number, { changeSeq: number; resetSeq: number }, unknown]>([
  ["a new vault, from the start (0: the start in any epoch)", 0, { changeSeq: 0, resetSeq: 0 }, { kind: "changes", since: 0 }],
  ["changes after the cursor", at(5), { changeSeq: 9, resetSeq: 2 }, { kind: "changes", since: 5 }],
  ["the cursor is the reset itself: changes after it", at(2), { changeSeq: 9, resetSeq: 2 }, { kind: "changes", since: 2 }],
  ["nothing new", at(9), { changeSeq: 9, resetSeq: 2 }, { kind: "changes", since: 9 }],
  ["before the last rekey", at(1), { changeSeq: 9, resetSeq: 2 }, { kind: "full" }],
  ["a vault of an earlier release, from the start", 0, { changeSeq: 1, resetSeq: 1 }, { kind: "full" }],
  ["ahead of the vault (another server's cursor)", at(10), { changeSeq: 9, resetSeq: 2 }, { kind: "full" }],
  [
    "a cursor of another epoch (from before a restore), though its number is in range",
    cursorOf(EPOCH + 1, 5),
    { changeSeq: 9, resetSeq: 2 },
    { kind: "full" },
  ],
  ["a bare change number (no epoch)", 5, { changeSeq: 9, resetSeq: 2 }, { kind: "full" }],
])("planDelta: %s", (_what, since, vault, expected) => {
  expect(planDelta(since, vault, EPOCH)).toEqual(expected);
});

test("newChangeEpoch: from 1 to 2^20 - 1, so that every cursor is a safe integer", () => {
  expect(newChangeEpoch(() => 0)).toBe(1);
  expect(newChangeEpoch(() => 0.999999999)).toBe(2 ** 20 - 1);
  expect(Number.isSafeInteger(cursorOf(2 ** 20 - 1, 2 ** 32 - 1))).toBe(true);
});

test("deltaAnswer: items as they are now, the others as tombstones; past MAX_DELTA_ITEMS, full", () => {
  const item = (itemId: string) => ({ itemId, revision: 2 });
  expect(
    deltaAnswer(7, [
      { itemId: "a", item: item("a") },
      { itemId: "b", item: null },
    ]),
  ).toEqual({ items: [item("a")], deleted: ["b"], cursor: 7, full: false });
  const many = Array.from({ length: MAX_DELTA_ITEMS + 1 }, (_, i) => ({ itemId: String(i), item: item(String(i)) }));
  expect(deltaAnswer(7, many)).toEqual({ items: [], deleted: [], cursor: 7, full: true });
  expect(deltaAnswer(7, many.slice(1)).items).toHaveLength(MAX_DELTA_ITEMS);
});
