/**
 * A session's scope on MongoDB, inside the transactions of other aggregates (the rules:
 * lib/domain/accounts/session-scope.ts; SQL: ../sql/session-scope.ts): what a login may do, decided
 * after the account's document is written (`lockAccount`), and a policy's narrowing of an
 * organization's sessions, after every account document of it is written: a login, an enrolment or
 * a removal at the same moment conflicts with it, and one of the two retries on the other's outcome.
 */
import type { ClientSession } from "mongodb";
import type { OrgId, UserId } from "../../domain/ids";
import { decideEnrolOnly } from "../../domain/accounts/second-factors";
import { planPolicyNarrowing } from "../../domain/accounts/session-scope";
import { RECOVERY_PASSWORD_WINDOW_MS } from "../../domain/accounts/recovery";
import { DEFAULT_POLICIES, type OrgPolicies } from "../../domain/orgs/policies";
import type { MongoContext } from "./context";

/** The organization's policy on second factors, as stored (the default while it set none). */
export async function policyRequiresIn(c: MongoContext, session: ClientSession, orgId: OrgId): Promise<boolean> {
  const doc = await c.orgPolicies.findOne({ _id: orgId }, { session });
  return (doc ? doc.policies : DEFAULT_POLICIES).requireSecondFactor;
}

/** The account's organization. */
export async function orgOfIn(c: MongoContext, session: ClientSession, userId: UserId): Promise<OrgId> {
  const user = await c.users.findOne({ _id: userId }, { session, projection: { orgId: 1 } });
  return user!.orgId;
}

/** Whether a login of the account (its document written in this transaction) may only enrol a second factor. */
export async function enrolOnlyIn(c: MongoContext, session: ClientSession, userId: UserId): Promise<boolean> {
  const requires = await policyRequiresIn(c, session, await orgOfIn(c, session, userId));
  if (!requires) return false;
  return decideEnrolOnly(requires, await c.secondFactors.countDocuments({ userId }, { session }));
}

/** Narrows to enrolment the live whole sessions of the accounts `planPolicyNarrowing` names (not one an account recovery opened). */
export async function narrowSessionsIn(
  c: MongoContext,
  session: ClientSession,
  orgId: OrgId,
  policies: OrgPolicies,
  at: string,
): Promise<string[]> {
  if (!policies.requireSecondFactor) return [];
  // Every account of the organization written: a write in another transaction on one of them conflicts with this.
  await c.users.updateMany({ orgId }, { $inc: { writeSeq: 1 } }, { session });
  const members = await c.users.find({ orgId, removedAt: { $exists: false } }, { session, projection: { _id: 1 } }).toArray();
  const counts = await c.secondFactors
    .aggregate<{ _id: UserId; n: number }>(
      [{ $match: { userId: { $in: members.map((m) => m._id) } } }, { $group: { _id: "$userId", n: { $sum: 1 } } }],
      { session },
    )
    .toArray();
  const withFactors = new Map(counts.map((r) => [r._id, r.n]));
  const narrowed = planPolicyNarrowing(
    true,
    members.map((m) => ({ userId: m._id, factorCount: withFactors.get(m._id) ?? 0 })),
  );
  if (narrowed.length === 0) return [];
  const since = new Date(Date.parse(at) - RECOVERY_PASSWORD_WINDOW_MS).toISOString();
  const recovering = await c.recoveryRequests
    .find({ userId: { $in: narrowed }, status: "opened", openedAt: { $gt: since } }, { session, projection: { sessionId: 1 } })
    .toArray();
  const kept = recovering.map((r) => r.sessionId).filter((id): id is string => typeof id === "string");
  const live = await c.sessions
    .find(
      {
        userId: { $in: narrowed },
        endedAt: { $exists: false },
        expiresAt: { $gt: at },
        enrolOnly: { $exists: false },
        _id: { $nin: kept },
      },
      { session, projection: { _id: 1 } },
    )
    .toArray();
  const ids = live.map((d) => d._id);
  if (ids.length > 0)
    await c.sessions.updateMany({ _id: { $in: ids }, endedAt: { $exists: false } }, { $set: { enrolOnly: true } }, { session });
  return ids;
}
