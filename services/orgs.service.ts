/** Organizations, their members' public key bundles (contract section 2), and people leaving them. */
import { decideOrgAccess } from "../lib/domain/access";
import { orgNotFound } from "../lib/domain/refusals";
import { assertMayChangePolicies } from "../lib/domain/org-roles";
import { decidePolicies, DEFAULT_POLICIES, type OrgPolicies } from "../lib/domain/org-policies";
import type { OrgId, UserId } from "../lib/domain/ids";
import { announceEnded } from "../lib/auth/session-check";
import type { Context, ServiceSchema } from "moleculer";
import { callerOf, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { publicKeysOf } from "../lib/http/views";
import { runnerService } from "../app/node-runtime";

type Ctx<P> = Context<P, RequestMeta>;

export function orgsService(rt: Runtime): ServiceSchema {
  const { store, clock, events, inviteTokens } = rt;
  function assertInOrg(ctx: Ctx<{ orgId: OrgId }>): void {
    decideOrgAccess(callerOf(ctx), ctx.params.orgId);
  }
  /** Policies as members read them: each one marked enforced by the server or applied by clients only. */
  const policiesView = (p: OrgPolicies) => ({
    ...p,
    enforced: ["requireSecondFactor", "minKdf", "inviteMaxLifetime", "recoveryMinThreshold"],
    clientOnly: ["client.minPasswordScore", "client.idleLockMinutes"],
  });

  return {
    name: "orgs",
    actions: {
      policies: {
        params: paramsOf("orgs.policies"),
        async handler(ctx: Ctx<{ orgId: OrgId }>) {
          assertInOrg(ctx);
          return policiesView((await store.security.getPolicies(ctx.params.orgId)) ?? DEFAULT_POLICIES);
        },
      },
      setPolicies: {
        params: paramsOf("orgs.setPolicies"),
        async handler(ctx: Ctx<{ orgId: OrgId } & Partial<OrgPolicies> & { requireSecondFactor: boolean }>) {
          assertInOrg(ctx);
          const caller = callerOf(ctx);
          assertMayChangePolicies(caller);
          const p = ctx.params;
          const policies = decidePolicies({
            requireSecondFactor: p.requireSecondFactor,
            ...(p.minKdf && { minKdf: p.minKdf }),
            ...(p.inviteMaxLifetime !== undefined && { inviteMaxLifetime: p.inviteMaxLifetime }),
            recoveryMinThreshold: p.recoveryMinThreshold ?? DEFAULT_POLICIES.recoveryMinThreshold,
            client: {
              minPasswordScore: p.client?.minPasswordScore ?? 0,
              ...(p.client?.idleLockMinutes !== undefined && { idleLockMinutes: p.client.idleLockMinutes }),
            },
          });
          await store.security.setPolicies({
            orgId: p.orgId,
            policies,
            at: clock.timestamp(),
            events: [events.record("org.policies_changed", { actorId: caller.userId, orgId: p.orgId })],
          });
          events.kick();
          return policiesView(policies);
        },
      },
      get: {
        params: paramsOf("orgs.get"),
        async handler(ctx: Ctx<{ orgId: OrgId }>) {
          assertInOrg(ctx);
          const org = await store.accounts.getOrg(ctx.params.orgId);
          if (!org) throw orgNotFound();
          return { orgId: org.orgId, name: org.name, createdAt: org.createdAt };
        },
      },
      members: {
        params: paramsOf("orgs.members"),
        async handler(ctx: Ctx<{ orgId: OrgId }>) {
          assertInOrg(ctx);
          const users = await store.accounts.listOrgMembers(ctx.params.orgId);
          return {
            members: users.map((u) => ({
              ...publicKeysOf(u),
              role: u.role,
              createdAt: u.createdAt,
              ...(u.removedAt !== undefined && { removedAt: u.removedAt }),
            })),
          };
        },
      },
      removeMember: {
        // The rules: lib/domain/org-membership.ts. A person leaves when they name themselves.
        params: paramsOf("orgs.removeMember"),
        async handler(ctx: Ctx<{ orgId: OrgId; userId: UserId }>) {
          assertInOrg(ctx);
          const caller = callerOf(ctx);
          const { vaults, endedSessions, revokedInvites } = await store.accounts.removeFromOrg({
            caller,
            targetId: ctx.params.userId,
            now: clock.timestamp(),
            events: [events.record("user.removed", { actorId: caller.userId, orgId: caller.orgId, targetUserId: ctx.params.userId })],
          });
          events.kick();
          await announceEnded(ctx, rt.sessions, endedSessions);
          for (const inviteId of revokedInvites) await inviteTokens.forget(inviteId);
          return { userId: ctx.params.userId, vaults, sessionsEnded: endedSessions.length };
        },
      },
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(orgsService);
