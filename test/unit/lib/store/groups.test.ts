/** KeyedGroups (lib/store/sql/groups.ts): what a vault's creates wait for, and with whom they run. */
import { KeyedGroups } from "../../../../lib/store/sql/groups";

/** A run that answers each call with its argument doubled (an odd one refused), and records its groups; each waits for `release`. */
function recorder() {
  const groups: Array<[string, number[]]> = [];
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  const run = async (key: string, group: readonly number[]): Promise<Array<PromiseSettledResult<number>>> => {
    groups.push([key, [...group]]);
    await gate;
    return group.map((n) => (n % 2 === 0 ? { status: "fulfilled", value: n * 2 } : { status: "rejected", reason: new Error(`odd ${n}`) }));
  };
  return {
    groups,
    run,
    open() {
      release();
      gate = new Promise<void>((r) => (release = r));
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test("the first call runs alone at once; calls arriving meanwhile run together next, at most `max` a group, in order; other keys do not wait", async () => {
  const r = recorder();
  const groups = new KeyedGroups(r.run, 3);
  const answers = [2, 4, 5, 6, 8, 10].map((n) =>
    groups.submit("v1", n).then(
      (v) => `ok ${v}`,
      (e: Error) => e.message,
    ),
  );
  const other = groups.submit("v2", 12);
  await tick();
  expect(r.groups).toEqual([
    ["v1", [2]],
    ["v2", [12]],
  ]);
  r.open();
  expect(await other).toBe(24);
  await tick();
  expect(r.groups.slice(2)).toEqual([["v1", [4, 5, 6]]]);
  r.open();
  await tick();
  r.open();
  expect(await Promise.all(answers)).toEqual(["ok 4", "ok 8", "odd 5", "ok 12", "ok 16", "ok 20"]);
  expect(r.groups.slice(3)).toEqual([["v1", [8, 10]]]);
  // Quiet again: the next call runs alone, at once.
  const again = groups.submit("v1", 14);
  await tick();
  expect(r.groups.at(-1)).toEqual(["v1", [14]]);
  r.open();
  expect(await again).toBe(28);
});

test("a run that throws fails each call of its group with its error; the next group still runs", async () => {
  let calls = 0;
  const groups = new KeyedGroups<number, number>(async (_key, group) => {
    calls++;
    await new Promise((r) => setImmediate(r));
    if (calls === 2) throw new Error("the group's transaction failed");
    return group.map((n) => ({ status: "fulfilled", value: n }));
  }, 10);
  const outcomes = await Promise.allSettled([1, 2, 3].map((n) => groups.submit("v", n)));
  expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual([
    1,
    "the group's transaction failed",
    "the group's transaction failed",
  ]);
  expect(await groups.submit("v", 4)).toBe(4);
});
