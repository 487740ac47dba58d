/**
 * A policy change against the organization it applies to (lib/domain/orgs/policy-change.ts), as a
 * table: the current policies, the new ones, the members and what the request confirms in; the
 * policies stored, or the refusal naming who would be shut out.
 */
import { planPolicyChange, type PolicyPerson } from "../../../../../lib/domain/orgs/policy-change";
import { DEFAULT_POLICIES, type OrgPolicies } from "../../../../../lib/domain/orgs/policies";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const person = (email: string, role: PolicyPerson["role"], hasFactor = false): PolicyPerson => ({ email, role, hasFactor });
const ada = person("ada@example.test", "owner");
const bo = person("bo@example.test", "admin");
const cy = person("cy@example.test", "admin");
const members = [person("m1@example.test", "member"), person("m2@example.test", "member")];
/** An owner and two admins, none with a factor; two members. */
const team = [ada, bo, cy, ...members];

const with_ = (p: Partial<OrgPolicies>): OrgPolicies => ({ ...DEFAULT_POLICIES, ...p });

type Row = [string, OrgPolicies, OrgPolicies, readonly PolicyPerson[], string[], "ok" | { code: string; field?: string; names?: RegExp }];

test.each<Row>([
  // A second factor required.
  [
    "a factor required while an admin has one",
    DEFAULT_POLICIES,
    with_({ requireSecondFactor: true }),
    [ada, { ...bo, hasFactor: true }, cy, ...members],
    [],
    "ok",
  ],
  [
    "a factor required while no owner or admin has one",
    DEFAULT_POLICIES,
    with_({ requireSecondFactor: true }),
    team,
    [],
    { code: "CONFLICT", field: "requireSecondFactor", names: /ada@example\.test, bo@example\.test, cy@example\.test/ },
  ],
  ["the same, confirmed", DEFAULT_POLICIES, with_({ requireSecondFactor: true }), team, ["requireSecondFactor"], "ok"],
  [
    "a factor required already (another field changes)",
    with_({ requireSecondFactor: true }),
    with_({ requireSecondFactor: true, inviteMaxLifetime: "24h" }),
    team,
    [],
    "ok",
  ],
  [
    "members without a factor do not hold the change up",
    DEFAULT_POLICIES,
    with_({ requireSecondFactor: true }),
    [{ ...ada, hasFactor: true }, ...members],
    [],
    "ok",
  ],
  // The recovery threshold.
  [
    "k = 3 with three owners and admins: members have 3 trustees, managers 2",
    DEFAULT_POLICIES,
    with_({ recoveryMinThreshold: 3 }),
    team,
    [],
    { code: "CONFLICT", field: "recoveryMinThreshold", names: /ada@example\.test, bo@example\.test, cy@example\.test would have fewer/ },
  ],
  [
    "k = 4 shuts out everyone who could enrol before",
    DEFAULT_POLICIES,
    with_({ recoveryMinThreshold: 4 }),
    team,
    [],
    { code: "CONFLICT", field: "recoveryMinThreshold", names: /m1@example\.test, m2@example\.test/ },
  ],
  ["k = 3, confirmed", DEFAULT_POLICIES, with_({ recoveryMinThreshold: 3 }), team, ["recoveryMinThreshold"], "ok"],
  ["k = 2 with three owners and admins", with_({ recoveryMinThreshold: 3 }), DEFAULT_POLICIES, team, [], "ok"],
  [
    "a lone owner with k = 2 (shut out before as well): other policies change freely",
    DEFAULT_POLICIES,
    with_({ inviteMaxLifetime: "24h" }),
    [ada, ...members],
    [],
    "ok",
  ],
  ["raising k where nobody could enrol anyway", DEFAULT_POLICIES, with_({ recoveryMinThreshold: 5 }), [ada, ...members], [], "ok"],
  [
    "k above MAX_RECOVERY_TRUSTEES: out of bounds before any lock-out",
    DEFAULT_POLICIES,
    with_({ recoveryMinThreshold: 11 }),
    team,
    ["recoveryMinThreshold"],
    { code: "INVALID", field: "recoveryMinThreshold" },
  ],
  // Invite lifetimes.
  [
    "invites of one second",
    DEFAULT_POLICIES,
    with_({ inviteMaxLifetime: "1s" }),
    team,
    [],
    { code: "CONFLICT", field: "inviteMaxLifetime", names: /at most 1s/ },
  ],
  [
    "invites of 14 minutes",
    DEFAULT_POLICIES,
    with_({ inviteMaxLifetime: "14m" }),
    team,
    [],
    { code: "CONFLICT", field: "inviteMaxLifetime" },
  ],
  ["invites of 15 minutes", DEFAULT_POLICIES, with_({ inviteMaxLifetime: "15m" }), team, [], "ok"],
  ["invites of one second, confirmed", DEFAULT_POLICIES, with_({ inviteMaxLifetime: "1s" }), team, ["inviteMaxLifetime"], "ok"],
  ["invites short already, shortened further", with_({ inviteMaxLifetime: "5m" }), with_({ inviteMaxLifetime: "1m" }), team, [], "ok"],
  // Several at once: every one named, the first one's field, and each must be confirmed.
  [
    "three lock-outs, one confirmed",
    DEFAULT_POLICIES,
    with_({ requireSecondFactor: true, recoveryMinThreshold: 3, inviteMaxLifetime: "1s" }),
    team,
    ["requireSecondFactor"],
    {
      code: "CONFLICT",
      field: "recoveryMinThreshold",
      names: /recoveryMinThreshold: .*inviteMaxLifetime: .*confirmLockOut: \["recoveryMinThreshold", "inviteMaxLifetime"\]/,
    },
  ],
  [
    "three lock-outs, all confirmed",
    DEFAULT_POLICIES,
    with_({ requireSecondFactor: true, recoveryMinThreshold: 3, inviteMaxLifetime: "1s" }),
    team,
    ["requireSecondFactor", "recoveryMinThreshold", "inviteMaxLifetime"],
    "ok",
  ],
])("%s", (_what, current, next, people, confirmed, expected) => {
  const outcome = outcomeOf(() => planPolicyChange({ current, next, people, confirmed }));
  if (expected === "ok") return expect(outcome).toBe("ok");
  expect(outcome).toMatchObject({ code: expected.code, ...(expected.field && { field: expected.field }) });
  if (expected.names) expect((outcome as ReturnType<typeof asRefusal>).message).toMatch(expected.names);
});

test("more than five people are named five, and counted", () => {
  const many = Array.from({ length: 8 }, (_, i) => person(`a${i}@example.test`, "admin"));
  const outcome = outcomeOf(() =>
    planPolicyChange({ current: DEFAULT_POLICIES, next: with_({ requireSecondFactor: true }), people: many, confirmed: [] }),
  );
  expect((outcome as ReturnType<typeof asRefusal>).message).toContain(
    "a0@example.test, a1@example.test, a2@example.test, a3@example.test, a4@example.test and 3 more",
  );
});
