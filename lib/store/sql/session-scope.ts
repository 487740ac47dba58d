/**
 * A session's scope on SQL, inside the transactions of other aggregates (the rules:
 * lib/domain/accounts/session-scope.ts): what a login may do, decided under the account's lock, and a
 * policy's narrowing of an organization's sessions. A factor change's effect on the account's
 * sessions is `applyFactorChangeIn` (./sessions.ts). MongoDB: ../mongo/session-scope.ts.
 */
import type { OrgId, UserId } from "../../domain/ids";
import { decideEnrolOnly } from "../../domain/accounts/second-factors";
import { planPolicyNarrowing } from "../../domain/accounts/session-scope";
import { RECOVERY_PASSWORD_WINDOW_MS } from "../../domain/accounts/recovery";
import { DEFAULT_POLICIES, type OrgPolicies } from "../../domain/orgs/policies";
import { sql } from "./kysely";
import { chunks, type Db } from "./context";

/** The organization's policy on second factors, as stored (the default while it set none). */
export async function policyRequiresIn(trx: Db, orgId: OrgId): Promise<boolean> {
  const row = await trx.selectFrom("org_policies").select("policies").where("org_id", "=", orgId).executeTakeFirst();
  return (row ? (JSON.parse(row.policies) as OrgPolicies) : DEFAULT_POLICIES).requireSecondFactor;
}

/** The account's organization (read under its lock). */
export async function orgOfIn(trx: Db, userId: UserId): Promise<OrgId> {
  const row = await trx.selectFrom("users").select("org_id").where("user_id", "=", userId).executeTakeFirstOrThrow();
  return row.org_id;
}

/** Whether a login of the account, under its lock, may only enrol a second factor (`decideEnrolOnly`). */
export async function enrolOnlyIn(trx: Db, userId: UserId): Promise<boolean> {
  const requires = await policyRequiresIn(trx, await orgOfIn(trx, userId));
  if (!requires) return false;
  const factors = await trx.selectFrom("second_factors").select("factor_id").where("user_id", "=", userId).execute();
  return decideEnrolOnly(requires, factors.length);
}

/**
 * Locks every account of the organization (a write that changes nothing, as `lockAccount` does one):
 * a login deciding its scope, an enrolment or a removal in it waits for the new policies, or comes first.
 */
export async function lockOrgAccounts(trx: Db, orgId: OrgId): Promise<UserId[]> {
  await trx
    .updateTable("users")
    .set({ account_version: sql`account_version` })
    .where("org_id", "=", orgId)
    .execute();
  const rows = await trx.selectFrom("users").select("user_id").where("org_id", "=", orgId).where("removed_at", "is", null).execute();
  return rows.map((r) => r.user_id);
}

/** Narrows to enrolment the live whole sessions of the accounts `planPolicyNarrowing` names (not one an account recovery opened). */
export async function narrowSessionsIn(trx: Db, orgId: OrgId, policies: OrgPolicies, at: string): Promise<string[]> {
  if (!policies.requireSecondFactor) return [];
  const members = await lockOrgAccounts(trx, orgId);
  const withFactors = new Map<string, number>();
  for (const chunk of chunks(members, 500)) {
    const rows = await trx
      .selectFrom("second_factors")
      .select(["user_id", (eb) => eb.fn.countAll().as("n")])
      .where("user_id", "in", chunk)
      .groupBy("user_id")
      .execute();
    for (const r of rows) withFactors.set(r.user_id, Number(r.n));
  }
  const narrowed = planPolicyNarrowing(
    true,
    members.map((userId) => ({ userId, factorCount: withFactors.get(userId) ?? 0 })),
  );
  const since = new Date(Date.parse(at) - RECOVERY_PASSWORD_WINDOW_MS).toISOString();
  const ids: string[] = [];
  for (const chunk of chunks(narrowed, 500)) {
    const rows = await trx
      .selectFrom("sessions")
      .select("session_id")
      .where("user_id", "in", chunk)
      .where("ended_at", "is", null)
      .where("expires_at", ">", at)
      .where("enrol_only", "=", 0)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("recovery_requests as r")
              .select("r.request_id")
              .whereRef("r.session_id", "=", "sessions.session_id")
              .where("r.status", "=", "opened")
              .where("r.opened_at", ">", since),
          ),
        ),
      )
      .execute();
    ids.push(...rows.map((r) => r.session_id));
  }
  for (const chunk of chunks(ids, 500)) {
    await trx.updateTable("sessions").set({ enrol_only: 1 }).where("session_id", "in", chunk).where("ended_at", "is", null).execute();
  }
  return ids;
}
