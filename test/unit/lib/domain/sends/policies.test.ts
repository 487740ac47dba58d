/**
 * What an organization's policies say of sends (lib/domain/orgs/policies.ts): the policy the rules
 * of sends are given, the policies an owner's change leaves, and the bounds a sendMaxLifetime keeps.
 */
import {
  DEFAULT_POLICIES,
  decidePolicies,
  nextSendPolicies,
  sendPolicyOf,
  type OrgPolicies,
} from "../../../../../lib/domain/orgs/policies";
import { badPolicy } from "../../../../../lib/domain/orgs/refusals";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const with_ = (p: Partial<OrgPolicies>): OrgPolicies => ({ ...DEFAULT_POLICIES, ...p });

test("an organization with no policies, or none on sends, allows them for as long as the server does", () => {
  expect(sendPolicyOf(null)).toEqual({ forbidden: false, maxLifetimeMs: null });
  expect(sendPolicyOf(DEFAULT_POLICIES)).toEqual({ forbidden: false, maxLifetimeMs: null });
  expect(sendPolicyOf(with_({ sendsForbidden: false }))).toEqual({ forbidden: false, maxLifetimeMs: null });
});

test("a policy forbids sends, or caps their lifetime at its duration", () => {
  expect(sendPolicyOf(with_({ sendsForbidden: true }))).toEqual({ forbidden: true, maxLifetimeMs: null });
  expect(sendPolicyOf(with_({ sendMaxLifetime: "3d" }))).toEqual({ forbidden: false, maxLifetimeMs: 3 * 86_400_000 });
  expect(sendPolicyOf(with_({ sendsForbidden: true, sendMaxLifetime: "90m" }))).toEqual({ forbidden: true, maxLifetimeMs: 90 * 60_000 });
});

describe("an owner's change of the send policies", () => {
  const current = with_({ sendsForbidden: true, sendMaxLifetime: "3d" });

  test("keeps each one left out as it is: a client from before them relaxes nothing by changing another policy", () => {
    expect(nextSendPolicies({}, current)).toEqual({ sendsForbidden: true, sendMaxLifetime: "3d" });
    expect(nextSendPolicies({ sendMaxLifetime: "1d" }, current)).toEqual({ sendsForbidden: true, sendMaxLifetime: "1d" });
    expect(nextSendPolicies({ sendsForbidden: true }, with_({ sendMaxLifetime: "2h" }))).toEqual({
      sendsForbidden: true,
      sendMaxLifetime: "2h",
    });
    expect(nextSendPolicies({}, null)).toEqual({});
    expect(nextSendPolicies({}, DEFAULT_POLICIES)).toEqual({});
  });

  test("false allows sends again and null clears the lifetime's cap, each leaving the other as it is", () => {
    expect(nextSendPolicies({ sendsForbidden: false }, current)).toEqual({ sendMaxLifetime: "3d" });
    expect(nextSendPolicies({ sendMaxLifetime: null }, current)).toEqual({ sendsForbidden: true });
    expect(nextSendPolicies({ sendsForbidden: false, sendMaxLifetime: null }, current)).toEqual({});
    expect(nextSendPolicies({ sendMaxLifetime: null }, null)).toEqual({});
  });
});

test.each([
  ["a minute", "1m", "ok"],
  ["sixty seconds", "60s", "ok"],
  ["a week", "7d", "ok"],
  ["a year", "365d", "ok"],
  ["59 seconds", "59s", badPolicy("sendMaxLifetime")],
  ["1 second", "1s", badPolicy("sendMaxLifetime")],
  ["no unit", "3600", badPolicy("sendMaxLifetime")],
  ["two units", "1d12h", badPolicy("sendMaxLifetime")],
  ["zero", "0d", badPolicy("sendMaxLifetime")],
  ["a negative duration", "-1d", badPolicy("sendMaxLifetime")],
  ["empty", "", badPolicy("sendMaxLifetime")],
  ["an unknown unit", "2w", badPolicy("sendMaxLifetime")],
] as const)("a sendMaxLifetime of %s (%s)", (_name, sendMaxLifetime, expected) => {
  const outcome = outcomeOf(() => decidePolicies(with_({ sendMaxLifetime })));
  expect(outcome).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test("sends forbidden, or not, is always within bounds", () => {
  expect(decidePolicies(with_({ sendsForbidden: true }))).toEqual(with_({ sendsForbidden: true }));
  expect(decidePolicies(with_({ sendsForbidden: false }))).toEqual(with_({ sendsForbidden: false }));
});
