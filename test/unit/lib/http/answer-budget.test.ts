/**
 * Answers held in bytes until they have gone out (lib/http/answer-budget.ts): charged to their
 * caller, refused past a share, given back when their connection closes, and a large one not taken
 * in time has its connection closed.
 */
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { AnswerBudget, chargingAnswers } from "../../../../lib/http/answer-budget";

const KIB = 1024;

/** An answer's response, as far as the budget sees it: it closes, and it can be destroyed. */
function response(): ServerResponse & { cut: boolean } {
  const res = Object.assign(new EventEmitter(), {
    destroyed: false,
    closed: false,
    cut: false,
    destroy() {
      res.cut = res.destroyed = res.closed = true;
      res.emit("close");
    },
  });
  return res as unknown as ServerResponse & { cut: boolean };
}

const alice = { group: "acme", member: "alice" };
const bob = { group: "acme", member: "bob" };
const carol = { group: "globex", member: "carol" };

test("answers are charged until their connection closes; past a share they are refused by name", () => {
  const budget = new AnswerBudget(1024 * KIB, 30_000); // a quarter: 256 KiB, a half: 512 KiB
  const first = response();
  budget.charge(alice, first, 200 * KIB);
  expect(() => budget.charge(alice, response(), 100 * KIB)).toThrow(expect.objectContaining({ type: "RATE_LIMITED" }));
  budget.charge(bob, response(), 250 * KIB);
  expect(() => budget.charge({ group: "acme", member: "dave" }, response(), 100 * KIB)).toThrow(
    "Too many answers of your organization waiting to be read",
  );
  budget.charge(carol, response(), 500 * KIB);
  expect(() => budget.charge({ group: "initech", member: "erin" }, response(), 200 * KIB)).toThrow(
    expect.objectContaining({ type: "UNAVAILABLE", data: { retryAfterSec: 1 } }),
  );
  expect(budget.held).toBe(950 * KIB);
  first.emit("close");
  expect(budget.held).toBe(750 * KIB);
  budget.charge(alice, response(), 100 * KIB);
});

test("a large answer not taken within its deadline has its connection closed, and its room comes back", () => {
  jest.useFakeTimers();
  try {
    const budget = new AnswerBudget(64 * 1024 * KIB, 300);
    const large = response();
    const small = response();
    budget.charge(alice, large, 256 * KIB); // at 32 KiB/s: 8 s, more than REQUEST_TIMEOUT here
    budget.charge(bob, small, 10 * KIB);
    jest.advanceTimersByTime(7_900);
    expect(large.cut).toBe(false);
    jest.advanceTimersByTime(200);
    // The small one is left to the server's own timeout, which closes a connection nothing moves on.
    expect([large.cut, small.cut, budget.held]).toEqual([true, false, 10 * KIB]);
  } finally {
    jest.useRealTimers();
  }
});

test("at the process's limit, large answers held past their quantum by a group holding more are closed to make room", () => {
  jest.useFakeTimers();
  try {
    const budget = new AnswerBudget(1024 * KIB, 30_000); // quantum: 10 s
    // Two organizations read large answers a trickle at a time and fill the room.
    const trickles = [response(), response(), response(), response()];
    budget.charge({ group: "slow1", member: "s1" }, trickles[0]!, 256 * KIB);
    budget.charge({ group: "slow1", member: "s2" }, trickles[1]!, 256 * KIB);
    budget.charge({ group: "slow2", member: "s3" }, trickles[2]!, 256 * KIB);
    jest.advanceTimersByTime(5_000);
    budget.charge({ group: "slow2", member: "s4" }, trickles[3]!, 256 * KIB);
    // Before their quantum, another's answer finds no room.
    expect(() => budget.charge(carol, response(), 300 * KIB)).toThrow(expect.objectContaining({ type: "UNAVAILABLE" }));
    jest.advanceTimersByTime(5_000);
    // Past it (for the first three): two are closed, of the groups holding most, the longest held first.
    budget.charge(carol, response(), 300 * KIB);
    expect(trickles.map((t) => t.cut)).toEqual([true, false, true, false]);
    expect(budget.held).toBe(2 * 256 * KIB + 300 * KIB);
  } finally {
    jest.useRealTimers();
  }
});

test("a caller refused is held to the wait it was given: asked again sooner, it is refused before any answer is made", () => {
  jest.useFakeTimers();
  try {
    const budget = new AnswerBudget(1024 * KIB, 30_000);
    budget.charge(alice, response(), 200 * KIB);
    expect(() => budget.charge(alice, response(), 100 * KIB)).toThrow(expect.objectContaining({ type: "RATE_LIMITED" }));
    expect(() => budget.ask(alice, "/vaults")).toThrow(expect.objectContaining({ type: "RATE_LIMITED", data: { retryAfterSec: 1 } }));
    // Another caller is not held up.
    budget.ask(bob, "/vaults");
    jest.advanceTimersByTime(1_000);
    budget.ask(alice, "/vaults");
  } finally {
    jest.useRealTimers();
  }
});

test("a path whose last answer to the caller is more than its share has room for is refused before it is made, until room comes back", () => {
  jest.useFakeTimers();
  try {
    const budget = new AnswerBudget(1024 * KIB, 30_000); // a quarter: 256 KiB
    const first = response();
    budget.charge(alice, first, 200 * KIB, "/vaults/v1/items");
    expect(() => budget.charge(alice, response(), 100 * KIB, "/vaults/v2/items")).toThrow(
      expect.objectContaining({ type: "RATE_LIMITED" }),
    );
    jest.advanceTimersByTime(1_000);
    // Its wait is over, but the list it asks for again would not fit: refused before it is read.
    expect(() => budget.ask(alice, "/vaults/v2/items")).toThrow("Too many answers of yours waiting to be read");
    jest.advanceTimersByTime(1_000);
    // A path it has not been answered at, or whose last answer fits, is made.
    budget.ask(alice, "/vaults");
    first.emit("close");
    jest.advanceTimersByTime(1_000);
    budget.ask(alice, "/vaults/v2/items");
  } finally {
    jest.useRealTimers();
  }
});

test("an answer whose client has gone already is not held", () => {
  const budget = new AnswerBudget(1024 * KIB, 30_000);
  const gone = response();
  gone.destroy();
  budget.charge(alice, gone, 100 * KIB);
  expect(budget.held).toBe(0);
});

describe("a large result from another node, as the gateway sends it", () => {
  const charge = chargingAnswers(new AnswerBudget(1024 * KIB, 30_000), [{ action: "items.list" }]).after;
  const ctx = () => ({ meta: { user: { orgId: "acme", userId: "alice" } } as Record<string, unknown> });
  const req = { $alias: { action: "items.list" } };

  test("is gathered whole, a character split across two chunks included, and charged", async () => {
    const text = JSON.stringify({ items: [{ name: "café ☕" }] });
    const bytes = Buffer.from(text);
    const at = bytes.indexOf(Buffer.from("☕")) + 1; // inside the character's three bytes
    const c = ctx();
    const answer = await charge(c, null, req, response(), Readable.from([bytes.subarray(0, at), bytes.subarray(at)]));
    expect([answer, c.meta.$responseType]).toEqual([text, "application/json; charset=utf-8"]);
  });

  test("cut off on its way (its node gone) is a 503 the client asks again after, not a 500", async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error("node went away"));
      },
    });
    await expect(charge(ctx(), null, req, response(), broken)).rejects.toMatchObject({ type: "UNAVAILABLE", code: 503 });
  });
});
