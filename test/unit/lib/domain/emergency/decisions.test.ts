/**
 * The rules of emergency access (lib/domain/emergency/decisions.ts), as tables: a grant's status from
 * its request, wait and the parties' account state; each action's transition; each refusal by name.
 */
import {
  availableAtMs,
  grantStatus,
  planGrantRefuse,
  planGrantRelease,
  planGrantRequest,
  planGrantRevoke,
  planGrantWrite,
  type GrantForm,
  type GrantParties,
  type GrantRecord,
  type GrantStatus,
} from "../../../../../lib/domain/emergency/decisions";
import {
  alreadyRequested,
  grantExists,
  grantFrozen,
  grantMadeUnderOldState,
  granteeKeysChanged,
  granteeNotFound,
  grantNotFound,
  grantSignatureInvalid,
  grantStale,
  grantToSelf,
  notRequested,
  stillWaiting,
} from "../../../../../lib/domain/emergency/refusals";
import type { OrgId, UserId } from "../../../../../lib/domain/ids";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const HOUR = 3_600_000;
const org = "00000000-0000-4000-8000-0000000000a1" as OrgId;
const otherOrg = "00000000-0000-4000-8000-0000000000a2" as OrgId;
const bob = "00000000-0000-4000-8000-00000000000b" as UserId;
const carol = "00000000-0000-4000-8000-00000000000c" as UserId;
const mallory = "00000000-0000-4000-8000-00000000000d" as UserId;
const T0 = Date.parse("2026-11-01T00:00:00.000Z");
const at = (ms: number) => new Date(ms).toISOString();

const parties: GrantParties = { grantorKeys: "k-bob", grantorKdfVersion: 2, granteeKeys: "k-carol" };
const idle: GrantRecord = {
  grantId: "g1",
  orgId: org,
  grantorId: bob,
  granteeId: carol,
  level: "read",
  waitHours: 48,
  granteeKeys: "k-carol",
  keys: "k-bob",
  kdfVersion: 2,
  wrappedKey: "AAAA",
  signature: "BBBB",
  createdAt: at(T0),
  updatedAt: at(T0),
};
const asked: GrantRecord = { ...idle, requestedAt: at(T0) };
const opened: GrantRecord = { ...asked, sessionId: "s1", openedAt: at(T0 + 48 * HOUR) };

const refusal = (e: AppError) => asRefusal(e);

describe("a grant's status", () => {
  test.each<[string, GrantRecord, GrantParties, number, GrantStatus]>([
    ["nobody asked", idle, parties, T0, "idle"],
    ["asked, the wait running", asked, parties, T0 + 47 * HOUR, "waiting"],
    ["asked, a millisecond before the wait ends", asked, parties, T0 + 48 * HOUR - 1, "waiting"],
    ["asked, the wait over", asked, parties, T0 + 48 * HOUR, "released"],
    ["the grantor rotated keys since", asked, { ...parties, grantorKeys: "k-bob-2" }, T0 + 48 * HOUR, "stale"],
    ["the grantor changed the password since", idle, { ...parties, grantorKdfVersion: 3 }, T0, "stale"],
    ["the grantee rotated keys since", asked, { ...parties, granteeKeys: "k-carol-2" }, T0 + 99 * HOUR, "stale"],
  ])("%s: %s", (_what, g, p, now, status) => {
    expect(grantStatus(g, p, now)).toBe(status);
  });

  test("the wait runs from the request", () => {
    expect(availableAtMs(idle)).toBeNull();
    expect(availableAtMs({ ...asked, waitHours: 1 })).toBe(T0 + HOUR);
  });
});

describe("making a grant, or making it again", () => {
  const grantor = { userId: bob, orgId: org, keys: "k-bob", kdfVersion: 2 };
  const grantee = { userId: carol, orgId: org, keys: "k-carol", removed: false };
  const form: GrantForm = {
    grantId: "g1",
    granteeId: carol,
    level: "read",
    waitHours: 48,
    granteeKeys: "k-carol",
    keys: "k-bob",
    kdfVersion: 2,
  };
  const write =
    (over: { grantee?: typeof grantee | null; form?: Partial<GrantForm>; signed?: boolean; existing?: GrantRecord | null }) => () =>
      planGrantWrite(
        grantor,
        over.grantee === undefined ? grantee : over.grantee,
        { ...form, ...over.form },
        over.signed ?? true,
        over.existing ?? null,
      );

  test.each<[string, () => unknown, unknown]>([
    ["a new grant", write({}), "ok"],
    ["to oneself", write({ form: { granteeId: bob } }), refusal(grantToSelf())],
    ["to nobody", write({ grantee: null }), refusal(granteeNotFound())],
    ["to a member of another organization", write({ grantee: { ...grantee, orgId: otherOrg } }), refusal(granteeNotFound())],
    ["to a removed member", write({ grantee: { ...grantee, removed: true } }), refusal(granteeNotFound())],
    ["under the grantor's earlier keys", write({ form: { keys: "k-bob-0" } }), refusal(grantMadeUnderOldState("keys"))],
    ["under an earlier password", write({ form: { kdfVersion: 1 } }), refusal(grantMadeUnderOldState("kdfVersion"))],
    ["to the grantee's earlier keys", write({ form: { granteeKeys: "k-carol-0" } }), refusal(granteeKeysChanged())],
    ["not signed by the grantor", write({ signed: false }), refusal(grantSignatureInvalid())],
    ["a second grant to the same grantee", write({ form: { grantId: "g2" }, existing: idle }), refusal(grantExists("g1"))],
    ["made again, nobody asked: the level changes", write({ form: { level: "takeover" }, existing: idle }), "ok"],
    ["made again while asked, the same level and wait", write({ existing: asked }), "ok"],
    ["made again while asked, another level", write({ form: { level: "takeover" }, existing: asked }), refusal(grantFrozen())],
    ["made again while asked, a shorter wait", write({ form: { waitHours: 1 }, existing: asked }), refusal(grantFrozen())],
  ])("%s", (_what, plan, outcome) => {
    expect(outcomeOf(plan)).toEqual(outcome);
  });

  test("what a write is: new, or made again (frozen while a request stands)", () => {
    expect(write({})()).toEqual({ kind: "create" });
    expect(write({ existing: idle })()).toEqual({ kind: "rewrap", frozen: false });
    expect(write({ existing: asked })()).toEqual({ kind: "rewrap", frozen: true });
  });
});

describe("asking, refusing, revoking and releasing", () => {
  test.each<[string, () => unknown, unknown]>([
    ["the grantee asks", () => planGrantRequest(idle, carol, "idle"), "ok"],
    ["the grantor asks in the grantee's place", () => planGrantRequest(idle, bob, "idle"), refusal(grantNotFound())],
    ["a stranger asks", () => planGrantRequest(idle, mallory, "idle"), refusal(grantNotFound())],
    ["no such grant", () => planGrantRequest(null, carol, "idle"), refusal(grantNotFound())],
    ["asked twice", () => planGrantRequest(asked, carol, "waiting"), refusal(alreadyRequested())],
    ["asked after the wait", () => planGrantRequest(asked, carol, "released"), refusal(alreadyRequested())],
    ["a stale grant", () => planGrantRequest(idle, carol, "stale"), refusal(grantStale())],
    ["the grantor refuses during the wait", () => planGrantRefuse(asked, bob), "ok"],
    ["the grantor refuses after the release", () => planGrantRefuse(opened, bob), "ok"],
    ["the grantor refuses what nobody asked", () => planGrantRefuse(idle, bob), refusal(notRequested())],
    ["the grantee refuses", () => planGrantRefuse(asked, carol), refusal(grantNotFound())],
    ["the grantor revokes", () => planGrantRevoke(asked, bob), "ok"],
    ["the grantee declines", () => planGrantRevoke(idle, carol), "ok"],
    ["a stranger revokes", () => planGrantRevoke(idle, mallory), refusal(grantNotFound())],
    ["released to the grantee", () => planGrantRelease(asked, carol, "released"), "ok"],
    ["released to the grantor", () => planGrantRelease(asked, bob, "released"), refusal(grantNotFound())],
    ["released before the wait is over", () => planGrantRelease(asked, carol, "waiting"), refusal(stillWaiting(at(T0 + 48 * HOUR)))],
    ["released with nobody asking", () => planGrantRelease(idle, carol, "idle"), refusal(notRequested())],
    ["a stale grant released", () => planGrantRelease(asked, carol, "stale"), refusal(grantStale())],
  ])("%s", (_what, plan, outcome) => {
    expect(outcomeOf(plan)).toEqual(outcome);
  });

  test("a revocation says who revoked (the grantor) or declined (the grantee); a release says whether its session is read-only", () => {
    expect(planGrantRevoke(opened, carol)).toEqual({ by: "grantee" });
    expect(planGrantRevoke(opened, bob)).toEqual({ by: "grantor" });
    expect(planGrantRelease(opened, carol, "released")).toEqual({ readOnly: true });
    expect(planGrantRelease({ ...asked, level: "takeover" }, carol, "released")).toEqual({ readOnly: false });
  });
});
