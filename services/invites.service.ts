/** Organization invites: create, list, revoke, redeem (interface; contract section 6). */
import { decideInviteSigner, decideVisibleInvite } from "../lib/domain/orgs/access";
import { newId, type InviteId, type OrgId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { assertOrgManager } from "../lib/domain/orgs/roles";
import { timestamp } from "../lib/domain/encoding";
import { normalizeEmail } from "../lib/domain/email";
import { decideInviteStatement, decideRedeemToken, requireInviter } from "../lib/domain/orgs/invite-reads";
import { decideInviteLifetime, decideRedeemable, type Invite } from "../lib/domain/orgs/invites";
import { decideInviteLifetimeCap, DEFAULT_POLICIES } from "../lib/domain/orgs/policies";
import { addressLimit } from "../lib/domain/accounts/address-limits";
import { hashToken, newOpaqueToken } from "../lib/domain/opaque-tokens";
import type { Caller, GrantableRole, SignedStatement } from "../lib/domain/types";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { opaqueToken } from "../lib/http/params";
import { paramsOf } from "../lib/http/routes";
import { signedKeysOf } from "../lib/http/views";
import { limitPerAddress } from "../lib/limits/counters";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type CreateParams = { email: string; role: GrantableRole; expiresIn?: string };
type InviteParams = { inviteId: InviteId };
type StatementParams = InviteParams & { statement: SignedStatement };

export function invitesService(rt: Runtime): ServiceSchema {
  return {
    name: "invites",
    actions: {
      create: { params: paramsOf("invites.create"), handler: (ctx: Ctx<CreateParams>) => create(rt, ctx) },
      list: { params: paramsOf("invites.list"), handler: (ctx: Ctx<{ orgId: OrgId }>) => list(rt, ctx) },
      revoke: { params: paramsOf("invites.revoke"), handler: (ctx: Ctx<InviteParams>) => revoke(rt, ctx) },
      // The inviter's client signs the invite as the server made it (its id and expiry are the
      // server's), and the invitee's client checks that statement against the inviter's key
      // fingerprint in its link before registering.
      attachStatement: {
        params: paramsOf("invites.attachStatement"),
        handler: (ctx: Ctx<StatementParams>) => attachStatement(rt, ctx),
      },
      // Every request counts against the limit, malformed ones too: the token's shape is
      // checked in the handler, after counting, not by the validator before it.
      redeem: { params: paramsOf("invites.redeem"), handler: (ctx: Ctx<{ token?: unknown }>) => redeem(rt, ctx) },
    },
  };
}

/** Invites are managed by the organization's owners and admins (organization role, from the token). */
function assertInviteManager(caller: Caller, orgId: OrgId = caller.orgId): void {
  assertOrgManager(caller, orgId, "manage invites");
}

function toListEntry(i: Invite) {
  return { id: i.inviteId, email: i.email, role: i.role, inviterId: i.inviterId, expiresAt: i.expiresAt, createdAt: i.createdAt };
}

async function create({ store, config, events, metrics, clock }: Runtime, ctx: Ctx<CreateParams>) {
  const caller = callerOf(ctx);
  assertInviteManager(caller);
  const address = normalizeEmail(ctx.params.email);
  const ttlMs = decideInviteLifetimeCap(
    decideInviteLifetime(ctx.params.expiresIn, config.inviteTtlMs),
    ctx.params.expiresIn !== undefined,
    (await store.security.getPolicies(caller.orgId)) ?? DEFAULT_POLICIES,
  );
  const token = newOpaqueToken();
  const now = new Date(clock.nowMs());
  const invite: Invite = {
    inviteId: newId<InviteId>(),
    orgId: caller.orgId,
    email: address,
    role: ctx.params.role,
    inviterId: caller.userId,
    status: "pending",
    expiresAt: timestamp(new Date(now.getTime() + ttlMs)),
    createdAt: timestamp(now),
  };
  await store.invites.createInvite({
    invite,
    tokenHash: hashToken(token),
    events: [events.record("invite.created", { actorId: caller.userId, orgId: caller.orgId, inviteId: invite.inviteId })],
  });
  events.kick();
  metrics.inviteCreated();
  created(ctx, `/invites?orgId=${caller.orgId}`);
  return { inviteId: invite.inviteId, token, expiresAt: invite.expiresAt };
}

async function list({ store, clock }: Runtime, ctx: Ctx<{ orgId: OrgId }>) {
  assertInviteManager(callerOf(ctx), ctx.params.orgId);
  return (await store.invites.listPendingInvites({ orgId: ctx.params.orgId, now: clock.timestamp() })).map(toListEntry);
}

async function revoke({ store, inviteTokens, events, clock }: Runtime, ctx: Ctx<InviteParams>) {
  const caller = callerOf(ctx);
  const invite = decideVisibleInvite(await store.invites.getInvite(ctx.params.inviteId), caller);
  assertInviteManager(caller);
  // The event is written only when this call revokes it (not again for a revoked one).
  const outcome = await store.invites.revokeInvite({
    inviteId: invite.inviteId,
    orgId: caller.orgId,
    now: clock.timestamp(),
    events: [events.record("invite.revoked", { actorId: caller.userId, orgId: caller.orgId, inviteId: invite.inviteId })],
  });
  await inviteTokens.forget(invite.inviteId);
  if (outcome === "revoked") {
    events.kick();
  }
  return noContent(ctx);
}

async function attachStatement({ store, inviteTokens, clock }: Runtime, ctx: Ctx<StatementParams>) {
  const caller = callerOf(ctx);
  const invite = decideVisibleInvite(await store.invites.getInvite(ctx.params.inviteId), caller);
  decideInviteSigner(invite, caller.userId);
  const [inviter, org] = await Promise.all([store.accounts.findUserById(caller.userId), store.accounts.getOrg(invite.orgId)]);
  decideInviteStatement(invite, inviter, org, ctx.params.statement);
  await store.invites.attachStatement({ inviteId: invite.inviteId, statement: ctx.params.statement, now: clock.timestamp() });
  await inviteTokens.forget(invite.inviteId);
  return noContent(ctx);
}

async function redeem({ store, config, counters, inviteTokens, metrics, clock }: Runtime, ctx: Ctx<{ token?: unknown }>) {
  await limitPerAddress(counters, ctx.meta.clientIp, addressLimit("redeem", config.redeemRateLimit), () => metrics.rateLimited("redeem"));
  const token = decideRedeemToken(ctx.params.token, opaqueToken);
  const invite = decideRedeemable(await inviteTokens.find(hashToken(token)), clock.timestamp());
  // The organization's name and the inviter's keys and statement too, so the invitee sees
  // whom they are joining and can check it against what their inviter signed.
  const [org, found] = await Promise.all([store.accounts.getOrg(invite.orgId), store.accounts.findUserById(invite.inviterId)]);
  const inviter = requireInviter(found);
  return {
    inviteId: invite.inviteId,
    orgId: invite.orgId,
    orgName: org?.name,
    email: invite.email,
    role: invite.role,
    expiresAt: invite.expiresAt,
    inviter: signedKeysOf(inviter),
    ...(invite.statement && { inviteStatement: invite.statement }),
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(invitesService);
