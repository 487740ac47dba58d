/** A gateway's readiness (lib/domain/readiness.ts), as a table: ok, or the named refusal. */
import { decideReady } from "../../../../lib/domain/readiness";
import { notEveryServiceReachable } from "../../../../lib/domain/refusals";
import { asRefusal, outcomeOf } from "../../../helpers/refusal";

test.each<[string, string[], unknown]>([
  ["every routed action reachable", [], "ok"],
  ["one action unreachable", ["items.list"], asRefusal(notEveryServiceReachable(["items"]))],
  ["actions of two services", ["items.list", "vaults.create", "items.create"], asRefusal(notEveryServiceReachable(["items", "vaults"]))],
])("%s", (_what, unreachable, expected) => {
  expect(outcomeOf(() => decideReady(unreachable))).toEqual(expected);
});

test("the refusal names the services, and says when to ask again", () => {
  expect(outcomeOf(() => decideReady(["items.list", "items.create", "vaults.create"]))).toEqual({
    code: "UNAVAILABLE",
    message: "Not every service is reachable: items, vaults",
    field: undefined,
  });
  expect(notEveryServiceReachable(["items"]).data).toMatchObject({ retryAfterSec: 1 });
});

test("ready: the health answer", () => {
  expect(decideReady([])).toEqual({ status: "ok" });
});
