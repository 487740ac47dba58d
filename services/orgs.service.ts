/** Organizations, their members' public key bundles (contract section 2), and people leaving them. */
import { decideOrgAccess } from "../lib/domain/orgs/access";
import { requireOrg } from "../lib/domain/orgs/reads";
import { assertMayChangePolicies } from "../lib/domain/orgs/roles";
import { DEFAULT_POLICIES, nextSendPolicies, passkeySignInOf, type OrgPolicies } from "../lib/domain/orgs/policies";
import { factorMatters, planPolicyChange, type PolicyPerson } from "../lib/domain/orgs/policy-change";
import type { OrgId, UserId } from "../lib/domain/ids";
import { announceChanged, announceEnded } from "../lib/auth/session-check";
import type { ServiceSchema } from "moleculer";
import { callerOf, created, type Ctx } from "../lib/http/context";
import { planOrgLink } from "../lib/domain/orgs/log";
import { requireUser } from "../lib/domain/accounts/users";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { publicKeysOf } from "../lib/http/views";
import { runnerService } from "../app/node-runtime";

type OrgParams = { orgId: OrgId };
type SetPoliciesParams = OrgParams &
  Partial<Omit<OrgPolicies, "sendMaxLifetime">> & {
    requireSecondFactor: boolean;
    sendMaxLifetime?: string | null;
    confirmLockOut?: string[];
  };
type RemoveMemberParams = OrgParams & { userId: UserId; orgLink?: unknown };
type AppendLogParams = OrgParams & { link: unknown };

export function orgsService(rt: Runtime): ServiceSchema {
  return {
    name: "orgs",
    actions: {
      policies: { params: paramsOf("orgs.policies"), handler: (ctx: Ctx<OrgParams>) => policies(rt, ctx) },
      setPolicies: { params: paramsOf("orgs.setPolicies"), handler: (ctx: Ctx<SetPoliciesParams>) => setPolicies(rt, ctx) },
      get: { params: paramsOf("orgs.get"), handler: (ctx: Ctx<OrgParams>) => get(rt, ctx) },
      members: { params: paramsOf("orgs.members"), handler: (ctx: Ctx<OrgParams>) => members(rt, ctx) },
      // The rules: lib/domain/orgs/membership.ts. A person leaves when they name themselves.
      removeMember: { params: paramsOf("orgs.removeMember"), handler: (ctx: Ctx<RemoveMemberParams>) => removeMember(rt, ctx) },
      // The signed organization log: lib/domain/orgs/log.ts (the protocol: protocol/formats/org-log.ts).
      log: { params: paramsOf("orgs.log"), handler: (ctx: Ctx<OrgParams>) => log(rt, ctx) },
      appendLog: { params: paramsOf("orgs.appendLog"), handler: (ctx: Ctx<AppendLogParams>) => appendLog(rt, ctx) },
    },
  };
}

function assertInOrg(ctx: Ctx<OrgParams>): void {
  decideOrgAccess(callerOf(ctx), ctx.params.orgId);
}

/** Policies as members read them: each one marked enforced by the server or applied by clients only. */
const policiesView = (p: OrgPolicies) => ({
  ...p,
  passkeySignIn: passkeySignInOf(p),
  enforced: [
    "requireSecondFactor",
    "minKdf",
    "inviteMaxLifetime",
    "recoveryMinThreshold",
    "passkeySignIn",
    "sendsForbidden",
    "sendMaxLifetime",
  ],
  clientOnly: ["client.minPasswordScore", "client.idleLockMinutes"],
});

async function policies({ store }: Runtime, ctx: Ctx<OrgParams>) {
  assertInOrg(ctx);
  return policiesView((await store.security.getPolicies(ctx.params.orgId)) ?? DEFAULT_POLICIES);
}

async function setPolicies(rt: Runtime, ctx: Ctx<SetPoliciesParams>) {
  const { store, clock, events } = rt;
  assertInOrg(ctx);
  const caller = callerOf(ctx);
  assertMayChangePolicies(caller);
  const p = ctx.params;
  const [current, people] = await Promise.all([store.security.getPolicies(p.orgId), peopleOf(store, p.orgId)]);
  // Left out (a client from before it): kept as it is, never relaxed by a change of another policy.
  const passkeys = p.passkeySignIn ?? passkeySignInOf(current);
  const policies = planPolicyChange({
    current: current ?? DEFAULT_POLICIES,
    next: {
      requireSecondFactor: p.requireSecondFactor,
      ...(passkeys !== "allowed" && { passkeySignIn: passkeys }),
      ...(p.minKdf && { minKdf: p.minKdf }),
      ...(p.inviteMaxLifetime !== undefined && { inviteMaxLifetime: p.inviteMaxLifetime }),
      ...nextSendPolicies(p, current),
      recoveryMinThreshold: p.recoveryMinThreshold ?? DEFAULT_POLICIES.recoveryMinThreshold,
      client: {
        minPasswordScore: p.client?.minPasswordScore ?? 0,
        ...(p.client?.idleLockMinutes !== undefined && { idleLockMinutes: p.client.idleLockMinutes }),
      },
    },
    people,
    confirmed: p.confirmLockOut ?? [],
  });
  // A factor required: the whole sessions of members without one narrow to enrolment, from their next request.
  const { narrowedSessions } = await store.security.setPolicies({
    orgId: p.orgId,
    policies,
    at: clock.timestamp(),
    events: [events.record("org.policies_changed", { actorId: caller.userId, orgId: p.orgId })],
  });
  events.kick();
  await announceChanged(ctx, rt.sessions, narrowedSessions);
  return policiesView(policies);
}

/** The organization's members (not removed) as a policy change is checked against them; factors are read for owners and admins only. */
async function peopleOf(store: Runtime["store"], orgId: OrgId): Promise<PolicyPerson[]> {
  const members = (await store.accounts.listOrgMembers(orgId)).filter((u) => u.removedAt === undefined);
  return Promise.all(
    members.map(async (u) => ({
      email: u.email,
      role: u.role,
      hasFactor: factorMatters(u.role) && (await store.security.listFactors(u.userId)).length > 0,
    })),
  );
}

async function get({ store }: Runtime, ctx: Ctx<OrgParams>) {
  assertInOrg(ctx);
  const org = requireOrg(await store.accounts.getOrg(ctx.params.orgId));
  return { orgId: org.orgId, name: org.name, createdAt: org.createdAt };
}

async function members({ store }: Runtime, ctx: Ctx<OrgParams>) {
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
}

async function removeMember(rt: Runtime, ctx: Ctx<RemoveMemberParams>) {
  const { store, clock, events, inviteTokens } = rt;
  assertInOrg(ctx);
  const caller = callerOf(ctx);
  const orgLink =
    ctx.params.orgLink === undefined
      ? undefined
      : await planOrgLink(ctx.params.orgLink, {
          orgId: caller.orgId,
          caller: requireUser(await store.accounts.findUserById(caller.userId)),
          removing: ctx.params.userId,
          field: "orgLink",
        });
  const { vaults, endedSessions, revokedInvites } = await store.accounts.removeFromOrg({
    caller,
    targetId: ctx.params.userId,
    now: clock.timestamp(),
    orgLink,
    events: [events.record("user.removed", { actorId: caller.userId, orgId: caller.orgId, targetUserId: ctx.params.userId })],
  });
  events.kick();
  await announceEnded(ctx, rt.sessions, endedSessions);
  for (const inviteId of revokedInvites) await inviteTokens.forget(inviteId);
  return { userId: ctx.params.userId, vaults, sessionsEnded: endedSessions.length };
}

async function log({ store }: Runtime, ctx: Ctx<OrgParams>) {
  assertInOrg(ctx);
  return { links: await store.orgLog.links(ctx.params.orgId) };
}

async function appendLog({ store, clock }: Runtime, ctx: Ctx<AppendLogParams>) {
  assertInOrg(ctx);
  const { orgId } = ctx.params;
  const caller = requireUser(await store.accounts.findUserById(callerOf(ctx).userId));
  const members = async () => (await store.accounts.listOrgMembers(orgId)).filter((u) => u.removedAt === undefined);
  const entry = await planOrgLink(ctx.params.link, { orgId, caller, members, field: "link" });
  await store.orgLog.append({ orgId, entry, field: "link", now: clock.timestamp() });
  created(ctx, `/orgs/${orgId}/log`);
  return { seq: entry.seq, hash: entry.hash };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(orgsService);
