/**
 * Fair slots for large bodies (lib/domain/vaults/fair-share.ts): the slots held in, a slot or the
 * named refusal out (decideSlot); which body gives way to a waiter (planGiveWay); who is served first
 * (byTurn, decayedUse); whether an answer may be held while it goes out (decideAnswerRoom), and for how long.
 */
import {
  answerDeadlineMs,
  byTurn,
  decayedUse,
  decideAnswerRoom,
  decideSlot,
  planAnswerRoom,
  planGiveWay,
  slotRefusalStatus,
  slotShares,
  type SlotHolding,
} from "../../../../../lib/domain/vaults/fair-share";

describe("fair slots for large bodies", () => {
  test.each([
    // total, held {total, org, user}, verdict
    [4, { total: 0, org: 0, user: 0 }, "ok"],
    [4, { total: 1, org: 1, user: 1 }, "user-share"],
    [4, { total: 2, org: 2, user: 0 }, "organization-share"],
    [4, { total: 3, org: 1, user: 0 }, "ok"],
    [4, { total: 4, org: 0, user: 0 }, "process-full"],
    [1, { total: 0, org: 0, user: 0 }, "ok"],
    [1, { total: 1, org: 0, user: 0 }, "process-full"],
    [16, { total: 8, org: 7, user: 3 }, "ok"],
    [16, { total: 8, org: 8, user: 3 }, "organization-share"],
    [16, { total: 8, org: 7, user: 4 }, "user-share"],
  ] as const)("of %i, holding %j: %s", (total, held, verdict) => {
    const d = decideSlot(held, slotShares(total));
    expect(d.ok ? "ok" : d.refusal).toBe(verdict);
  });

  test.each([
    ["user-share", "RATE_LIMITED"],
    ["organization-share", "RATE_LIMITED"],
    ["process-full", "UNAVAILABLE"],
  ] as const)("after its turn, a refusal for %s is answered %s", (refusal, status) => {
    expect(slotRefusalStatus(refusal)).toBe(status);
  });

  // A holder whose organization's use of late is, unless given, what its bodies held so far.
  const held = (groupHeld: number, heldMs: number, inTransfer = true, groupUse = groupHeld * heldMs): SlotHolding => ({
    groupHeld,
    heldMs,
    inTransfer,
    groupUse,
  });
  test.each([
    // the slots the waiter's organization holds, the holders, the quantum: the one that gives way, or why none does
    ["nobody holds a body still arriving", 0, [held(2, 60_000, false), held(2, 60_000, false)], 10_000, "none-in-transfer"],
    ["no organization holds more than the waiter's", 1, [held(1, 60_000), held(1, 60_000)], 10_000, "no-organization-holds-more"],
    ["the richer ones have not had their quantum", 0, [held(2, 9_999), held(2, 5_000)], 10_000, "none-past-quantum"],
    ["a body past its quantum, of an organization holding one more", 0, [held(1, 10_000)], 10_000, 0],
    ["of two due, the organization holding most gives way", 0, [held(1, 50_000), held(3, 11_000), held(2, 40_000)], 10_000, 1],
    ["within the organization holding most, the longest held", 1, [held(3, 12_000), held(3, 30_000), held(3, 20_000)], 10_000, 1],
    ["a body already whole does not give way, however long held", 0, [held(3, 90_000, false), held(2, 10_000)], 10_000, 1],
    [
      "an equal organization's body does not give way to a waiter already holding as many",
      2,
      [held(2, 90_000), held(3, 10_500)],
      10_000,
      1,
    ],
    ["with no quantum (a pool of answers), nothing ever gives way", 0, [held(4, 600_000)], Infinity, "none-past-quantum"],
  ] as const)("%s", (_why, waiterHeld, holders, quantumMs, outcome) => {
    const plan = planGiveWay({ groupHeld: waiterHeld, groupUse: 0 }, holders, quantumMs);
    expect(plan.ok ? plan.holder : plan.refusal).toBe(outcome);
  });

  test.each([
    // the waiter organization's use of late, the holders: the one that gives way, or why none does
    [
      "a slow upload past its quantum keeps its slot from a ring of organizations that used more of late",
      60_000,
      [held(1, 12_000, true, 12_000)],
      "no-organization-used-more",
    ],
    [
      "of two past their quantum, the one of an organization that used more than the waiter's",
      30_000,
      [held(1, 12_000), held(1, 40_000)],
      1,
    ],
    ["an organization that used exactly as much does not give way", 20_000, [held(1, 20_000)], "no-organization-used-more"],
  ] as const)("%s", (_why, waiterUse, holders, outcome) => {
    const plan = planGiveWay({ groupHeld: 0, groupUse: waiterUse }, holders, 10_000);
    expect(plan.ok ? plan.holder : plan.refusal).toBe(outcome);
  });

  test("waiters are served fewest-held organization first, then the one that held least of late, then the longest waiting", () => {
    const waiters = [
      { name: "rich, early", groupHeld: 3, groupUse: 0, groupSince: 1, since: 1 },
      { name: "empty, busy of late, early", groupHeld: 0, groupUse: 9_000, groupSince: 2, since: 2 },
      { name: "empty, late", groupHeld: 0, groupUse: 0, groupSince: 9, since: 9 },
      { name: "one, early", groupHeld: 1, groupUse: 0, groupSince: 2, since: 2 },
      { name: "empty, early", groupHeld: 0, groupUse: 0, groupSince: 5, since: 5 },
      // A request made a moment ago by a client whose organization has been asking again since 3: before one made at 4.
      { name: "empty, asking again since 3", groupHeld: 0, groupUse: 0, groupSince: 3, since: 8 },
      { name: "empty, asked once at 4", groupHeld: 0, groupUse: 0, groupSince: 4, since: 4 },
    ];
    expect(waiters.sort(byTurn).map((w) => w.name)).toEqual([
      "empty, asking again since 3",
      "empty, asked once at 4",
      "empty, early",
      "empty, late",
      "empty, busy of late, early",
      "one, early",
      "rich, early",
    ]);
  });

  test.each([
    [8_000, 0, 8_000],
    [8_000, 30_000, 4_000],
    [8_000, 90_000, 1_000],
  ])("a use of %i ms counts %i ms later as %i ms", (use, elapsed, counts) => {
    expect(decayedUse(use, elapsed)).toBeCloseTo(counts);
  });

  test.each([
    // held {total, org, user} in MiB of a 100 MiB limit, the answer's MiB: the verdict
    [{ total: 0, org: 0, user: 0 }, 150, "ok"], // an idle process sends any answer
    [{ total: 10, org: 0, user: 0 }, 40, "ok"], // a caller holding none: past a quarter, within the room
    [{ total: 70, org: 0, user: 0 }, 40, "process-full"],
    [{ total: 30, org: 30, user: 0 }, 20, "ok"],
    [{ total: 30, org: 30, user: 0 }, 21, "organization-share"],
    [{ total: 10, org: 10, user: 10 }, 15, "ok"],
    [{ total: 10, org: 10, user: 10 }, 16, "user-share"],
    [{ total: 99, org: 1, user: 1 }, 1, "ok"],
    [{ total: 99, org: 1, user: 1 }, 2, "process-full"],
  ] as const)("answers: holding %j, one of %i MiB: %s", (held, mib, verdict) => {
    const d = decideAnswerRoom(held, mib, 100);
    expect(d.ok ? "ok" : d.refusal).toBe(verdict);
  });

  test.each([
    [1_000, 30_000, 30_000],
    [43_000_000, 30_000, 1_312_256], // at 32 KiB/s
    [43_000_000, 2_000_000, 2_000_000],
  ])("an answer of %i bytes must be taken within %i ms or %i ms", (bytes, timeoutMs, deadline) => {
    expect(answerDeadlineMs(bytes, timeoutMs)).toBe(deadline);
  });

  const answer = (group: string, bytes: number, heldMs: number) => ({ group, bytes, heldMs });
  test.each([
    // need, the asker's group holds, the answers held: the ones closed, or why none is
    ["nothing held past its quantum", 10, 0, [answer("a", 50, 9_999)], "none-to-close"],
    ["nothing of a group holding more than the asker's", 10, 50, [answer("a", 50, 60_000)], "none-to-close"],
    ["one of a group holding more, past its quantum", 10, 0, [answer("a", 50, 10_000)], [0]],
    [
      "the group holding most first, its longest held",
      10,
      0,
      [answer("a", 30, 20_000), answer("b", 40, 15_000), answer("b", 40, 30_000)],
      [2],
    ],
    [
      "one at a time from whichever group holds most as they are closed",
      100,
      0,
      [answer("a", 60, 20_000), answer("a", 60, 30_000), answer("b", 90, 10_000)],
      [1, 2],
    ],
    [
      "a group holding no more than the asker's gives up nothing more",
      50,
      40,
      [answer("a", 30, 20_000), answer("a", 30, 30_000)],
      "too-little",
    ],
    ["too little past its quantum: nothing is closed", 100, 0, [answer("a", 60, 20_000), answer("b", 60, 1_000)], "too-little"],
  ] as const)("%s", (_why, need, groupBytes, held, outcome) => {
    const plan = planAnswerRoom(need, groupBytes, held, 10_000);
    expect(plan.ok ? plan.close : plan.refusal).toEqual(outcome);
  });
});
