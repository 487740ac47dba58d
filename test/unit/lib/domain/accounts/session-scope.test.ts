/** A session's scope (lib/domain/accounts/session-scope.ts), as tables: what a refresh grants, what a factor change and a policy do to sessions. */
import {
  decideRefreshScope,
  planFactorChangeSessions,
  planPolicyNarrowing,
  type FactorChange,
} from "../../../../../lib/domain/accounts/session-scope";
import type { UserId } from "../../../../../lib/domain/ids";

const whole = { sessionEnrolOnly: false, policyRequires: false, factorCount: 0, recoverySession: false };

test.each<[string, Parameters<typeof decideRefreshScope>[0], boolean]>([
  ["a whole session, no policy", whole, false],
  ["a whole session, a factor required and held", { ...whole, policyRequires: true, factorCount: 1 }, false],
  ["a whole session, a factor required and none held: narrowed", { ...whole, policyRequires: true }, true],
  [
    "the session an account recovery opened, a factor required and none held: whole",
    { ...whole, policyRequires: true, recoverySession: true },
    false,
  ],
  // A refresh keeps the session's scope: a factor enrolled since (without the session becoming whole) does not widen it.
  ["an enrol-only session, a factor held now", { ...whole, sessionEnrolOnly: true, policyRequires: true, factorCount: 1 }, true],
  ["an enrol-only session, the policy turned off since", { ...whole, sessionEnrolOnly: true }, true],
  ["an enrol-only session of a recovery", { ...whole, sessionEnrolOnly: true, recoverySession: true }, true],
])("refresh: %s", (_what, found, enrolOnly) => {
  expect(decideRefreshScope(found)).toEqual({ enrolOnly });
});

test.each<[FactorChange, string | undefined, { keep: string | undefined; widenKept: boolean }]>([
  ["enrol", "s1", { keep: "s1", widenKept: true }],
  ["remove", "s1", { keep: "s1", widenKept: false }],
  ["recovery-codes", "s1", { keep: "s1", widenKept: false }],
  // No session named (a token from before sessions is refused at the gateway): every session ends, none widens.
  ["enrol", undefined, { keep: undefined, widenKept: false }],
])("a factor change (%s) from session %s: the others end, saying why", (change, caller, expected) => {
  expect(planFactorChangeSessions(change, caller)).toEqual({ ...expected, endedWhy: "factors-changed" });
});

const ann = "u-ann" as UserId;
const bob = "u-bob" as UserId;

test.each<[string, boolean, { userId: UserId; factorCount: number }[], UserId[]]>([
  [
    "required: those without a factor narrow",
    true,
    [
      { userId: ann, factorCount: 0 },
      { userId: bob, factorCount: 2 },
    ],
    [ann],
  ],
  ["required, everyone has one: none", true, [{ userId: bob, factorCount: 1 }], []],
  ["not required: none (a policy turned off widens nothing)", false, [{ userId: ann, factorCount: 0 }], []],
])("a policy change: %s", (_what, required, accounts, expected) => {
  expect(planPolicyNarrowing(required, accounts)).toEqual(expected);
});
