/**
 * Answers held in bytes until they have gone out (lib/http/answer-budget.ts): charged to their
 * caller, refused past a share, given back when their connection closes, and a large one not taken
 * in time has its connection closed.
 */
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { AnswerBudget, chargingAnswers } from "../../../../lib/http/answer-budget";
import { sleep } from "../../../helpers/wait";

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

test("a large answer not taken within its deadline has its connection closed, and its room comes back", async () => {
  const budget = new AnswerBudget(64 * 1024 * KIB, 300);
  const large = response();
  const small = response();
  budget.charge(alice, large, 256 * KIB); // at 256 KiB/s: one second, more than REQUEST_TIMEOUT here
  budget.charge(bob, small, 10 * KIB);
  await sleep(700);
  expect(large.cut).toBe(false);
  await sleep(500);
  // The small one is left to the server's own timeout, which closes a connection nothing moves on.
  expect([large.cut, small.cut, budget.held]).toEqual([true, false, 10 * KIB]);
});

test("an answer whose client has gone already is not held", () => {
  const budget = new AnswerBudget(1024 * KIB, 30_000);
  const gone = response();
  gone.destroy();
  budget.charge(alice, gone, 100 * KIB);
  expect(budget.held).toBe(0);
});

describe("a large result from another node, as the gateway sends it", () => {
  const charge = chargingAnswers(new AnswerBudget(1024 * KIB, 30_000), [{ action: "items.list" }]);
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
