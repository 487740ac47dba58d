/**
 * History and trash rules (lib/domain/items/history.ts), as tables: the state under the vault's
 * lock in, what to store or drop (or the named refusal, with its code and field) out.
 */
import {
  decideItemRestore,
  decideRekeyExtras,
  decideTrashPurge,
  historyToDrop,
  revisionsBeyond,
} from "../../../../../lib/domain/items/history";
import { decideItemCreate } from "../../../../../lib/domain/items/decisions";
import { itemDigestOf } from "../../../../../lib/domain/items/log";
import { itemIdInTrash, notInTrash, vaultNotFound } from "../../../../../lib/domain/items/refusals";
import { notInVault, revisionOfDroppedItem, twiceInSet } from "../../../../../lib/domain/vaults/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal } from "../../../../helpers/refusal";

const trashed = { revision: 4, encryptedName: "bmFtZQ==", encryptedData: "ZGF0YQ==" };

function outcome(decide: () => unknown): unknown {
  try {
    return decide() ?? "ok";
  } catch (err) {
    return asRefusal(err as AppError);
  }
}

test.each<[string, Parameters<typeof decideItemRestore>[0], unknown]>([
  ["not a member", { role: null, trashed }, asRefusal(vaultNotFound())],
  ["nothing of that id in the trash", { role: "member", trashed: undefined }, asRefusal(notInTrash())],
  [
    "back at the next revision, with the ciphertexts it was deleted with",
    { role: "member", trashed },
    { revision: 5, change: { op: "restore", itemId: "i", after: { revision: 5, sha256: itemDigestOf(trashed) } } },
  ],
])("decideItemRestore: %s", (_what, state, expected) => {
  expect(outcome(() => decideItemRestore(state, "i"))).toEqual(expected);
});

test.each<[string, Parameters<typeof decideTrashPurge>[0], unknown]>([
  ["not a member", { role: null, trashed: true }, asRefusal(vaultNotFound())],
  ["not in the trash", { role: "admin", trashed: false }, asRefusal(notInTrash())],
  ["any member, an item in the trash", { role: "member", trashed: true }, "ok"],
])("decideTrashPurge: %s", (_what, state, expected) => {
  expect(outcome(() => decideTrashPurge(state))).toEqual(expected);
});

test("a create naming an id in the trash is refused, naming itemId", () => {
  expect(outcome(() => decideItemCreate({ role: "member", keyVersion: 1, taken: false, inTrash: true }, "i", trashed))).toEqual(
    asRefusal(itemIdInTrash()),
  );
});

test.each<[number[], number, number[]]>([
  [[1, 2, 3], 3, []],
  [[3, 1, 4, 2], 3, [1]],
  [[5, 6, 7], 0, [5, 6, 7]],
  [[], 10, []],
])("revisionsBeyond(%j, keep %i) drops %j, oldest first", (stored, keep, drop) => {
  expect(revisionsBeyond(stored, keep)).toEqual(drop);
});

const oldest = [
  { itemId: "a", revision: 1, bytes: 100 },
  { itemId: "b", revision: 1, bytes: 50 },
  { itemId: "a", revision: 2, bytes: 100 },
];
test.each<[string, { bytes: number; items: number }, string[]]>([
  ["within the limits: nothing", { bytes: 0, items: 0 }, []],
  ["bytes over: the oldest until they fit", { bytes: 120, items: -5 }, ["a/1", "b/1"]],
  ["entries over: as many of the oldest", { bytes: -1000, items: 1 }, ["a/1"]],
  ["more than all of it: all of it", { bytes: 10_000, items: 0 }, ["a/1", "b/1", "a/2"]],
])("historyToDrop: %s", (_what, over, drop) => {
  expect(historyToDrop(over, oldest).map((r) => `${r.itemId}/${r.revision}`)).toEqual(drop);
});

const stored = {
  history: [
    { itemId: "a", revision: 1 },
    { itemId: "a", revision: 2 },
    { itemId: "t", revision: 1 },
  ],
  trash: ["t", "u"],
};
test.each<[string, Parameters<typeof decideRekeyExtras>[1], unknown]>([
  [
    "a revision the vault does not keep",
    { history: [{ itemId: "a", revision: 3 }], trash: [] },
    asRefusal(notInVault("revision", "a/3", "history")),
  ],
  [
    "a revision twice",
    {
      history: [
        { itemId: "a", revision: 1 },
        { itemId: "a", revision: 1 },
      ],
      trash: [],
    },
    asRefusal(twiceInSet("revision", "a/1", "history")),
  ],
  ["an item not in the trash", { history: [], trash: [{ itemId: "a" }] }, asRefusal(notInVault("trashed item", "a", "trash"))],
  [
    "a revision of a trashed item the rekey drops",
    { history: [{ itemId: "t", revision: 1 }], trash: [{ itemId: "u" }] },
    asRefusal(revisionOfDroppedItem("t/1")),
  ],
  ["a trashed item twice", { history: [], trash: [{ itemId: "t" }, { itemId: "t" }] }, asRefusal(twiceInSet("trashed item", "t", "trash"))],
  [
    "what it leaves out is dropped",
    { history: [{ itemId: "a", revision: 2 }], trash: [{ itemId: "u" }] },
    {
      dropHistory: [
        { itemId: "a", revision: 1 },
        { itemId: "t", revision: 1 },
      ],
      dropTrash: ["t"],
    },
  ],
  [
    "a client that knows nothing of history: all of it dropped",
    { history: [], trash: [] },
    { dropHistory: stored.history, dropTrash: ["t", "u"] },
  ],
])("decideRekeyExtras: %s", (_what, given, expected) => {
  expect(outcome(() => decideRekeyExtras(stored, given))).toEqual(expected);
});
