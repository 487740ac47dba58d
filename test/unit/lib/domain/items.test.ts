/**
 * The item rules (lib/domain/items.ts), a table per decision: the state a write finds under the
 * vault's lock in, the outcome out (what to store, or the named refusal with its code and field).
 */
import { decideItemCreate, decideItemDelete, decideItemRead, decideItemUpdate, type ItemSnapshot } from "../../../../lib/domain/items";
import { itemDigestOf } from "../../../../lib/domain/item-log";
import { itemBytes } from "../../../../lib/domain/vault-limits";

const stored = { revision: 3, encryptedName: "bmFtZQ==", encryptedData: "ZGF0YQ==" };
const write = { encryptedName: "bmV3", encryptedData: "bmV3IGRhdGEgdGhhdCBpcyBsb25nZXI=" };
const member = (over: Partial<ItemSnapshot> = {}): ItemSnapshot => ({ role: "member", keyVersion: 2, item: undefined, ...over });

/** The outcome as a line: the refusal's code and field, or what the decision returned. */
function outcome(decide: () => unknown): unknown {
  try {
    return decide();
  } catch (err) {
    const e = err as { type?: string; data?: { field?: string } };
    return `${e.type}${e.data?.field ? ` ${e.data.field}` : ""}`;
  }
}

describe("decideItemCreate", () => {
  test.each<[string, ItemSnapshot, Partial<typeof write & { keyVersion: number }>, unknown]>([
    ["not a member, or no such vault", member({ role: null }), {}, "NOT_FOUND"],
    ["a key version other than the vault's", member(), { keyVersion: 1 }, "CONFLICT keyVersion"],
    ["an itemId the vault holds", member({ item: stored }), {}, "CONFLICT itemId"],
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
});

describe("decideItemUpdate", () => {
  test.each<[string, ItemSnapshot, { revision?: number; keyVersion?: number }, unknown]>([
    ["not a member", member({ role: null, item: stored }), {}, "NOT_FOUND"],
    ["no such item", member(), {}, "NOT_FOUND"],
    ["made on an older revision", member({ item: stored }), { revision: 2 }, "CONFLICT revision"],
    ["a key version other than the vault's", member({ item: stored }), { revision: 3, keyVersion: 1 }, "CONFLICT keyVersion"],
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
    ["not a member", member({ role: null, item: stored }), "NOT_FOUND"],
    ["no such item", member(), "NOT_FOUND"],
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
    [null, "NOT_FOUND"],
  ] as const)("read by %s: %s", (role, expected) => {
    expect(outcome(() => (decideItemRead(role), "ok"))).toBe(expected);
  });
});
