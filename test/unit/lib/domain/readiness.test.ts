/** A gateway's readiness (lib/domain/readiness.ts), as a table: ok, or the named refusal. */
import { decideReady } from "../../../../lib/domain/readiness";
import { notEveryServiceReachable } from "../../../../lib/domain/refusals";
import { asRefusal, outcomeOf } from "../../../helpers/refusal";

test.each<[string, string[], unknown]>([
  ["every routed action reachable", [], "ok"],
  ["one not yet", ["items.list"], asRefusal(notEveryServiceReachable())],
  ["several not yet", ["items.list", "vaults.create"], asRefusal(notEveryServiceReachable())],
])("%s", (_what, unreachable, expected) => {
  expect(outcomeOf(() => decideReady(unreachable))).toEqual(expected);
});

test("ready: the health answer", () => {
  expect(decideReady([])).toEqual({ status: "ok" });
});
