/**
 * The item rules (lib/domain/items/decisions.ts), a table per decision: the state a write finds under the
 * vault's lock in, the outcome out (what to store, or the named refusal with its code and field).
 */
import {
  assertItemSizes,
  decideItemCreate,
  decideItemDelete,
  decideItemImport,
  decideItemRead,
  decideItemUpdate,
  MAX_IMPORT_ITEMS,
  type ItemSnapshot,
} from "../../../../../lib/domain/items/decisions";
import {
  importEmpty,
  importIdTaken,
  importIdTwice,
  importTooLarge,
  itemIdInTrash,
  itemIdTaken,
  itemNotFound,
  itemTooLarge,
  staleRevision,
  vaultNotFound,
} from "../../../../../lib/domain/items/refusals";
import { keyVersionMismatch } from "../../../../../lib/domain/vaults/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { itemDigestOf } from "../../../../../lib/domain/items/log";
import { itemBytes } from "../../../../../lib/domain/vaults/limits";

const stored = { revision: 3, encryptedName: "bmFtZQ==", encryptedData: "ZGF0YQ==" };
const write = { encryptedName: "bmV3", encryptedData: "bmV3IGRhdGEgdGhhdCBpcyBsb25nZXI=" };
const member = (over: Partial<ItemSnapshot> = {}): ItemSnapshot => ({ role: "member", keyVersion: 2, item: undefined, ...over });

/** What the decision returned, or the refusal it threw as `asRefusal` gives it (code, message and field). */
function outcome(decide: () => unknown): unknown {
  try {
    return decide();
  } catch (err) {
    return asRefusal(err as AppError);
  }
}

describe("decideItemCreate", () => {
  test.each<[string, ItemSnapshot, Partial<typeof write & { keyVersion: number }>, unknown]>([
    ["not a member, or no such vault", member({ role: null }), {}, asRefusal(vaultNotFound())],
    ["a key version other than the vault's", member(), { keyVersion: 1 }, asRefusal(keyVersionMismatch(2, 1))],
    ["an itemId the vault holds", member({ item: stored }), {}, asRefusal(itemIdTaken())],
    [
      "a new item, by any role",
      member(),
      { keyVersion: 2 },
      {
        revision: 1,
        growth: { items: 1, bytes: itemBytes(write) },
        change: { op: "create", itemId: "i", after: { revision: 1, sha256: itemDigestOf(write) } },
      },
    ],
  ])("%s", (_what, snapshot, extra, expected) => {
    const { item, ...rest } = snapshot;
    expect(outcome(() => decideItemCreate({ ...rest, taken: item !== undefined }, "i", { ...write, ...extra }))).toEqual(expected);
  });

  test("an itemId in the vault's trash", () => {
    expect(outcomeOf(() => decideItemCreate({ role: "member", keyVersion: 2, taken: false, inTrash: true }, "i", write))).toEqual(
      asRefusal(itemIdInTrash()),
    );
  });
});

describe("decideItemUpdate", () => {
  test.each<[string, ItemSnapshot, { revision?: number; keyVersion?: number }, unknown]>([
    ["not a member", member({ role: null, item: stored }), {}, asRefusal(vaultNotFound())],
    ["no such item", member(), {}, asRefusal(itemNotFound())],
    ["made on an older revision", member({ item: stored }), { revision: 2 }, asRefusal(staleRevision(3, 2))],
    ["a key version other than the vault's", member({ item: stored }), { revision: 3, keyVersion: 1 }, asRefusal(keyVersionMismatch(2, 1))],
    [
      "on the stored revision: the next one, growing by what it adds",
      member({ item: stored }),
      { revision: 3 },
      {
        revision: 4,
        growth: { items: 0, bytes: itemBytes(write) - itemBytes(stored) },
        change: {
          op: "update",
          itemId: "i",
          before: { revision: 3, sha256: itemDigestOf(stored) },
          after: { revision: 4, sha256: itemDigestOf(write) },
        },
      },
    ],
  ])("%s", (_what, snapshot, extra, expected) => {
    expect(outcome(() => decideItemUpdate(snapshot, "i", { ...write, ...extra }))).toEqual(expected);
  });

  test("a smaller item does not grow the vault", () => {
    expect(decideItemUpdate(member({ item: { ...stored, encryptedData: write.encryptedData } }), "i", stored).growth).toBeNull();
  });
});

describe("decideItemDelete and decideItemRead", () => {
  test.each<[string, ItemSnapshot, unknown]>([
    ["not a member", member({ role: null, item: stored }), asRefusal(vaultNotFound())],
    ["no such item", member(), asRefusal(itemNotFound())],
    [
      "the item: its tombstone names what it held",
      member({ item: stored }),
      { op: "delete", itemId: "i", before: { revision: 3, sha256: itemDigestOf(stored) } },
    ],
  ])("delete, %s", (_what, snapshot, expected) => {
    expect(outcome(() => decideItemDelete(snapshot, "i"))).toEqual(expected);
  });

  test.each([
    ["owner", "ok"],
    ["admin", "ok"],
    ["member", "ok"],
    [null, asRefusal(vaultNotFound())],
  ] as const)("read by %s: %s", (role, expected) => {
    expect(outcome(() => (decideItemRead(role), "ok"))).toEqual(expected);
  });
});

describe("decideItemImport", () => {
  const item = (itemId: string) => ({ itemId, ...write });
  const taken = new Set(["t"]);
  test.each<[string, ItemSnapshot["role"], Array<ReturnType<typeof item>>, number | undefined, unknown]>([
    [
      "items by any member: the vault grows by all of them",
      "member",
      [item("a"), item("b")],
      2,
      { growth: { items: 2, bytes: 2 * itemBytes(write) } },
    ],
    ["not a member", null, [item("a")], 2, asRefusal(vaultNotFound())],
    ["a key version other than the vault's", "owner", [item("a")], 1, asRefusal(keyVersionMismatch(2, 1))],
    ["no items", "owner", [], 2, asRefusal(importEmpty())],
    [
      "more than one request may add",
      "owner",
      Array.from({ length: MAX_IMPORT_ITEMS + 1 }, (_, i) => item(`n${i}`)),
      2,
      asRefusal(importTooLarge(MAX_IMPORT_ITEMS)),
    ],
    ["an itemId twice", "owner", [item("a"), item("b"), item("a")], 2, asRefusal(importIdTwice("a"))],
    ["an itemId the vault holds, in its items or trash", "owner", [item("a"), item("t")], undefined, asRefusal(importIdTaken("t"))],
  ])("%s", (_what, role, items, keyVersion, expected) => {
    expect(outcome(() => decideItemImport({ role, keyVersion: 2, taken }, items, keyVersion))).toEqual(expected);
  });
});

describe("assertItemSizes", () => {
  const b64Of = (bytes: number) => Buffer.alloc(bytes).toString("base64");
  test.each([
    ["at the limits", { encryptedData: b64Of(256 * 1024), encryptedName: b64Of(4 * 1024) }, "ok"],
    [
      "data past 256 KiB",
      { encryptedData: b64Of(256 * 1024 + 1), encryptedName: "bmFtZQ==" },
      asRefusal(itemTooLarge("encryptedData", "256 KiB")),
    ],
    [
      "a name past 4 KiB",
      { encryptedData: "ZGF0YQ==", encryptedName: b64Of(4 * 1024 + 1) },
      asRefusal(itemTooLarge("encryptedName", "4 KiB")),
    ],
  ])("%s", (_what, item, expected) => {
    expect(outcomeOf(() => assertItemSizes(item))).toEqual(expected);
  });
});
