/** Password health (sdk/health.ts), as tables over opened items: which logins are weak, reused or old, and the counts per vault and overall. */
import { passwordHealth, type HealthProblem, type ItemType } from "../../../sdk";
import type { HealthInput } from "../../../sdk/health";

const NOW = Date.parse("2026-06-01T00:00:00.000Z");
const daysAgo = (days: number) => new Date(NOW - days * 24 * 60 * 60 * 1000).toISOString();

const item = (
  itemId: string,
  password: string | undefined,
  more: { vaultId?: string; type?: ItemType; updatedAt?: string } = {},
): HealthInput => ({
  vaultId: more.vaultId ?? "v1",
  itemId,
  name: `Item ${itemId}`,
  ...(more.type && { type: more.type }),
  fields: password === undefined ? { username: "ada" } : { username: "ada", password },
  updatedAt: more.updatedAt ?? daysAgo(1),
});

/** A stand-in for zxcvbn: a password's score is its length over 4, so "abc" scores 0 and a 12-character one 3. */
const byLength = (password: string) => Math.min(4, Math.floor(password.length / 4));

/** Each item's problems, by kind only (the reused ones with the other items' ids). */
const problemsOf = (items: HealthInput[], opts: Parameters<typeof passwordHealth>[1] = { now: NOW, strength: byLength }) =>
  Object.fromEntries(
    passwordHealth(items, opts).items.map((i) => [
      i.itemId,
      i.problems.map((p: HealthProblem) => (p.kind === "reused" ? `reused:${p.with.map((w) => w.itemId).join(",")}` : p.kind)),
    ]),
  );

test.each([
  ["a strong, unique, recent password: no problem", [item("a", "correct horse battery")], {}],
  ["a weak one (score below 3)", [item("a", "abcdefgh")], { a: ["weak"] }],
  ["a score of exactly 3 is not weak", [item("a", "abcdefghijkl")], {}],
  [
    "the same password in two logins: each names the other",
    [item("a", "correct horse battery"), item("b", "correct horse battery"), item("c", "another strong one")],
    { a: ["reused:b"], b: ["reused:a"] },
  ],
  [
    "across vaults too",
    [item("a", "correct horse battery"), item("b", "correct horse battery", { vaultId: "v2" })],
    { a: ["reused:b"], b: ["reused:a"] },
  ],
  ["compared exactly: a change of case is another password", [item("a", "correct horse battery"), item("b", "Correct horse battery")], {}],
  [
    "three logins sharing one: each names the two others",
    [item("a", "correct horse battery"), item("b", "correct horse battery"), item("c", "correct horse battery")],
    { a: ["reused:b,c"], b: ["reused:a,c"], c: ["reused:a,b"] },
  ],
  ["not changed for more than 365 days: old", [item("a", "correct horse battery", { updatedAt: daysAgo(366) })], { a: ["old"] }],
  ["365 days exactly is not yet old", [item("a", "correct horse battery", { updatedAt: daysAgo(365) })], {}],
  [
    "every problem at once, in the order weak, reused, old",
    [item("a", "abc", { updatedAt: daysAgo(400) }), item("b", "abc")],
    { a: ["weak", "reused:b", "old"], b: ["weak", "reused:a"] },
  ],
  [
    "only logins with a password count",
    [item("a", "abc", { type: "note" }), item("b", "abc", { type: "card" }), item("c", undefined), item("d", ""), item("e", "abc")],
    { e: ["weak"] },
  ],
  ["an item of an earlier release (no type) is a login", [{ ...item("a", "abc"), type: undefined }], { a: ["weak"] }],
])("%s", (_, items, expected) => {
  expect(problemsOf(items)).toEqual(expected);
});

test("the age limit is the caller's: 0 days makes every password written before now old; none is weak without a strength function", () => {
  const items = [item("a", "abc", { updatedAt: daysAgo(0.01) }), item("b", "def", { updatedAt: new Date(NOW).toISOString() })];
  expect(problemsOf(items, { now: NOW, oldAfterDays: 0 })).toEqual({ a: ["old"] });
  expect(problemsOf(items, { now: NOW, oldAfterDays: 30 })).toEqual({});
});

test("a report names the other items and the date, never a password", () => {
  const report = passwordHealth(
    [
      item("a", "s3cret-shared-password", { updatedAt: daysAgo(500) }),
      item("b", "s3cret-shared-password", { vaultId: "v2", updatedAt: daysAgo(2) }),
    ],
    { now: NOW, strength: () => 4 },
  );
  expect(report.items).toEqual([
    {
      vaultId: "v1",
      itemId: "a",
      name: "Item a",
      problems: [
        { kind: "reused", with: [{ vaultId: "v2", itemId: "b", name: "Item b" }] },
        { kind: "old", since: daysAgo(500) },
      ],
    },
    { vaultId: "v2", itemId: "b", name: "Item b", problems: [{ kind: "reused", with: [{ vaultId: "v1", itemId: "a", name: "Item a" }] }] },
  ]);
  expect(JSON.stringify(report)).not.toContain("s3cret");
});

test("counts per vault, in the order vaults first appear, and overall; an item with several problems is affected once", () => {
  const report = passwordHealth(
    [
      item("a", "abc", { vaultId: "v2", updatedAt: daysAgo(400) }),
      item("b", "correct horse battery", { vaultId: "v1" }),
      item("c", "correct horse battery", { vaultId: "v2" }),
      item("d", "a strong unique one", { vaultId: "v1" }),
      item("e", "abc", { vaultId: "v3", type: "note" }),
    ],
    { now: NOW, strength: byLength },
  );
  expect(report.vaults).toEqual([
    { vaultId: "v2", checked: 2, weak: 1, reused: 1, old: 1, affected: 2 },
    { vaultId: "v1", checked: 2, weak: 0, reused: 1, old: 0, affected: 1 },
  ]);
  expect(report.overall).toEqual({ checked: 4, weak: 1, reused: 2, old: 1, affected: 3 });
});

test("no items: an empty report", () => {
  expect(passwordHealth([])).toEqual({ items: [], vaults: [], overall: { checked: 0, weak: 0, reused: 0, old: 0, affected: 0 } });
});
