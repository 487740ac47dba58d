/** Account recovery's rules (lib/domain/account-recovery.ts), as tables. */
import {
  decideRecoveryApproval,
  decideRecoveryCompletion,
  decideRecoveryEnrolment,
  decideRecoveryRequest,
  MAX_PENDING_RECOVERIES,
  type TrusteeState,
} from "../../../../lib/domain/account-recovery";
import type { OrgId, UserId } from "../../../../lib/domain/ids";
import { code } from "../../../helpers/refusal";

const org = "o-1" as OrgId;
const user = "u-bob" as UserId;
const t = (id: string, p: Partial<TrusteeState> = {}): TrusteeState => ({ userId: id as UserId, orgId: org, role: "admin", ...p });
const people = new Map<UserId, TrusteeState>(
  [
    t("a"),
    t("b"),
    t("c", { role: "owner" }),
    t("m", { role: "member" }),
    t("x", { orgId: "o-2" as OrgId }),
    t("gone", { removedAt: "2026-01-01T00:00:00.000Z" }),
    t("u-bob"),
  ].map((s) => [s.userId, s]),
);
const enrol = (ids: string[], threshold: number, policyMinThreshold = 2) =>
  code(() =>
    decideRecoveryEnrolment({ userId: user, orgId: org, threshold, trusteeIds: ids as UserId[], trustees: people, policyMinThreshold }),
  );

test.each<[string, string[], number, number, string]>([
  ["2 of 3 admins and owners", ["a", "b", "c"], 2, 2, "ok"],
  ["3 of 3", ["a", "b", "c"], 3, 2, "ok"],
  ["1 of 3", ["a", "b", "c"], 1, 2, "INVALID"],
  ["4 of 3", ["a", "b", "c"], 4, 2, "INVALID"],
  ["one trustee", ["a"], 1, 2, "INVALID"],
  ["2 of 3 where the organization asks 3", ["a", "b", "c"], 2, 3, "INVALID"],
  ["a trustee twice", ["a", "a", "b"], 2, 2, "INVALID"],
  ["a member", ["a", "m"], 2, 2, "INVALID"],
  ["someone of another organization", ["a", "x"], 2, 2, "INVALID"],
  ["someone removed", ["a", "gone"], 2, 2, "INVALID"],
  ["nobody known", ["a", "nobody"], 2, 2, "INVALID"],
  ["the user themself", ["a", "u-bob"], 2, 2, "INVALID"],
])("enrolment: %s", (_what, ids, k, min, expected) => {
  expect(enrol(ids, k, min)).toBe(expected);
});

const now = "2026-11-24T12:00:00.000Z";
const pending = { status: "pending" as const, expiresAt: "2026-12-01T00:00:00.000Z", enrolmentId: "e-1", tokenHash: "h" };

test.each<[string, Partial<typeof pending>, string | undefined, string[], string]>([
  ["a trustee of the request's enrolment", {}, "e-1", ["a", "b"], "ok"],
  ["not a trustee", {}, "e-1", ["b", "c"], "FORBIDDEN"],
  ["a trustee of a newer enrolment", {}, "e-2", ["a", "b"], "FORBIDDEN"],
  ["a completed request", { status: "completed" as never }, "e-1", ["a"], "CONFLICT"],
  ["an expired request", { expiresAt: "2026-11-24T11:00:00.000Z" }, "e-1", ["a"], "CONFLICT"],
])("approval: %s", (_what, r, enrolmentId, trusteeIds, expected) => {
  expect(
    code(() =>
      decideRecoveryApproval({
        request: { ...pending, ...r },
        enrolmentId,
        trusteeIds: trusteeIds as UserId[],
        trusteeId: "a" as UserId,
        now,
      }),
    ),
  ).toBe(expected);
});

test.each<[string, string, { enrolmentId: string; threshold: number } | null, number, string]>([
  ["k approvals", "h", { enrolmentId: "e-1", threshold: 2 }, 2, "ok"],
  ["too few", "h", { enrolmentId: "e-1", threshold: 2 }, 1, "CONFLICT"],
  ["another request's secret", "other", { enrolmentId: "e-1", threshold: 2 }, 2, "NOT_FOUND"],
  ["an enrolment replaced since", "h", { enrolmentId: "e-2", threshold: 2 }, 2, "CONFLICT"],
  ["no enrolment", "h", null, 2, "CONFLICT"],
])("completion: %s", (_what, tokenHash, enrolment, approvals, expected) => {
  expect(code(() => decideRecoveryCompletion({ request: pending, tokenHash, enrolment, approvals, now }))).toBe(expected);
});

test("pending requests per account: never refused; past the cap, the oldest give way", () => {
  expect(decideRecoveryRequest(0)).toBe(0);
  expect(decideRecoveryRequest(MAX_PENDING_RECOVERIES - 1)).toBe(0);
  expect(decideRecoveryRequest(MAX_PENDING_RECOVERIES)).toBe(1);
  expect(decideRecoveryRequest(MAX_PENDING_RECOVERIES + 2)).toBe(3);
});
