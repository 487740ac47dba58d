/** The exposure report's rules (sdk/exposure.ts), as tables over a roster and an item log: who was a member when, and which items a removed member could read. */
import { exposureOf, membershipsOf } from "../../../sdk";
import type { ItemLink } from "../../../protocol/formats/item-log";
import type { RosterLink } from "../../../protocol/formats/roster";

const link = (seq: number, op: RosterLink["op"], more: Partial<RosterLink> = {}): RosterLink =>
  ({
    vaultId: "v",
    seq,
    prev: "0",
    op,
    actorId: "ada",
    at: `2026-01-0${seq + 1}T00:00:00.000Z`,
    keyVersion: 1,
    wraps: [],
    sig: "",
    ...more,
  }) as RosterLink;
const roster = [
  link(0, "create", { subjectId: "ada" }),
  link(1, "add", { subjectId: "bob" }),
  link(2, "rekey", { keyVersion: 2 }),
  link(3, "remove", { subjectId: "bob", keyVersion: 2 }),
  link(4, "rekey", { keyVersion: 3 }),
];
const item = (seq: number, op: ItemLink["op"], itemId: string, rosterSeq: number, revision = 1): ItemLink =>
  ({
    vaultId: "v",
    seq,
    prev: "0",
    op,
    actorId: "ada",
    at: "",
    keyVersion: 1,
    rosterSeq,
    rosterHead: "",
    itemId,
    revision,
    sha256: "x",
    sig: "",
  }) as ItemLink;

test("memberships: from the link that added them to the one that removed them, with the key versions they held", () => {
  expect(membershipsOf(roster, "bob")).toEqual([
    { from: { seq: 1, at: "2026-01-02T00:00:00.000Z", keyVersion: 1 }, until: { seq: 3, at: "2026-01-04T00:00:00.000Z", keyVersion: 2 } },
  ]);
  expect(membershipsOf(roster, "ada")).toEqual([{ from: { seq: 0, at: "2026-01-01T00:00:00.000Z", keyVersion: 1 }, until: null }]);
  expect(membershipsOf(roster, "cy")).toEqual([]);
});

test("items: exposed unless written again after the removal (by a signed link); created after it, not listed; unknown since the base, exposed", () => {
  const report = exposureOf({
    vaultId: "v",
    userId: "bob",
    roster,
    items: [
      { itemId: "a", name: "changed after" },
      { itemId: "b", name: "changed before" },
      { itemId: "c", name: "created after" },
      { itemId: "d", name: "untouched since the base" },
      { itemId: "e", name: "restored after" },
    ],
    sinceBase: [
      item(1, "create", "a", 1),
      item(2, "update", "a", 4, 2),
      item(3, "update", "b", 2, 2),
      item(4, "create", "c", 4),
      item(5, "restore", "e", 4, 3),
    ],
    history: [
      { itemId: "a", createdAt: "2026-01-02T12:00:00.000Z" },
      { itemId: "a", createdAt: "2026-01-06T00:00:00.000Z" },
    ],
    trash: [
      { itemId: "t", name: "old", updatedAt: "2026-01-02T00:00:00.000Z", deletedAt: "2026-01-07T00:00:00.000Z" },
      { itemId: "u", name: "new", updatedAt: "2026-01-08T00:00:00.000Z", deletedAt: "2026-01-09T00:00:00.000Z" },
    ],
    lastActivity: null,
  });
  expect(report.keyVersions).toEqual({ from: 1, to: 2 });
  expect(report.items.map((i) => [i.name, i.status, i.basis, i.revisions])).toEqual([
    ["changed before", "exposed", "signed log", 0],
    ["restored after", "exposed", "signed log", 0],
    ["untouched since the base", "exposed", "unchanged since the log's base", 0],
    ["changed after", "changed", "signed log", 1],
  ]);
  expect(report.trash.map((t) => t.name)).toEqual(["old"]);
});
