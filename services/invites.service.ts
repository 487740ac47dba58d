/** Organization invites: create, list, revoke, redeem (interface; contract section 6). */
import { decideInviteSigner, decideVisibleInvite } from "../lib/domain/access";
import { badRedeemToken, tokenUserGone } from "../lib/domain/refusals";
import { newId, type InviteId, type OrgId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { checkInviteStatement } from "../lib/domain/statements";
import type { InviteStatement } from "../protocol/formats/statements";
import { assertOrgManager } from "../lib/domain/org-roles";
import { timestamp } from "../lib/domain/encoding";
import { normalizeEmail } from "../lib/domain/email";
import { decideInviteLifetime, decideRedeemable, type Invite } from "../lib/domain/invites";
import { decideInviteLifetimeCap, DEFAULT_POLICIES } from "../lib/domain/org-policies";
import { inviteTokenNotFound } from "../lib/domain/refusals";
import { addressLimit } from "../lib/domain/address-limits";
import { hashToken, newOpaqueToken } from "../lib/domain/opaque-tokens";
import type { Caller, GrantableRole, SignedStatement } from "../lib/domain/types";
import { callerOf, created, noContent, type RequestMeta } from "../lib/http/context";
import { opaqueToken } from "../lib/http/params";
import { paramsOf } from "../lib/http/routes";
import { signedKeysOf } from "../lib/http/views";
import { limitPerAddress } from "../lib/limits/counters";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type Ctx<P> = Context<P, RequestMeta>;

/** Invites are managed by the organization's owners and admins (organization role, from the token). */
function assertInviteManager(caller: Caller, orgId: OrgId = caller.orgId): void {
  assertOrgManager(caller, orgId, "manage invites");
}

/** What an inviter signs of an invite (protocol/formats/statements.ts). */
function statementOf(invite: Invite, orgName: string): InviteStatement {
  return {
    inviteId: invite.inviteId,
    orgId: invite.orgId,
    orgName,
    email: invite.email,
    role: invite.role,
    expiresAt: invite.expiresAt,
    inviterId: invite.inviterId,
  };
}

function toListEntry(i: Invite) {
  return { id: i.inviteId, email: i.email, role: i.role, inviterId: i.inviterId, expiresAt: i.expiresAt, createdAt: i.createdAt };
}

export function invitesService({ store, config, counters, inviteTokens, events, metrics, clock }: Runtime): ServiceSchema {
  return {
    name: "invites",
    actions: {
      create: {
        params: paramsOf("invites.create"),
        async handler(ctx: Ctx<{ email: string; role: GrantableRole; expiresIn?: string }>) {
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
        },
      },

      list: {
        params: paramsOf("invites.list"),
        async handler(ctx: Ctx<{ orgId: OrgId }>) {
          assertInviteManager(callerOf(ctx), ctx.params.orgId);
          return (await store.invites.listPendingInvites({ orgId: ctx.params.orgId, now: clock.timestamp() })).map(toListEntry);
        },
      },

      revoke: {
        params: paramsOf("invites.revoke"),
        async handler(ctx: Ctx<{ inviteId: InviteId }>) {
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
        },
      },

      attachStatement: {
        // The inviter's client signs the invite as the server made it (its id and expiry are the
        // server's), and the invitee's client checks that statement against the inviter's key
        // fingerprint in its link before registering.
        params: paramsOf("invites.attachStatement"),
        async handler(ctx: Ctx<{ inviteId: InviteId; statement: SignedStatement }>) {
          const caller = callerOf(ctx);
          const invite = decideVisibleInvite(await store.invites.getInvite(ctx.params.inviteId), caller);
          decideInviteSigner(invite, caller.userId);
          const [inviter, org] = await Promise.all([store.accounts.findUserById(caller.userId), store.accounts.getOrg(invite.orgId)]);
          if (!inviter || !org) throw tokenUserGone();
          checkInviteStatement(statementOf(invite, org.name), inviter.signingPublicKey, ctx.params.statement);
          await store.invites.attachStatement({ inviteId: invite.inviteId, statement: ctx.params.statement, now: clock.timestamp() });
          await inviteTokens.forget(invite.inviteId);
          return noContent(ctx);
        },
      },

      redeem: {
        // Every request counts against the limit, malformed ones too: the token's shape is
        // checked in the handler, after counting, not by the validator before it.
        params: paramsOf("invites.redeem"),
        async handler(ctx: Ctx<{ token?: unknown }>) {
          await limitPerAddress(counters, ctx.meta.clientIp, addressLimit("redeem", config.redeemRateLimit), () =>
            metrics.rateLimited("redeem"),
          );
          const { token } = ctx.params;
          if (typeof token !== "string" || token.length < opaqueToken.min || token.length > opaqueToken.max)
            throw badRedeemToken(opaqueToken.min, opaqueToken.max);
          const invite = decideRedeemable(await inviteTokens.find(hashToken(token)), clock.timestamp());
          // The organization's name and the inviter's keys and statement too, so the invitee sees
          // whom they are joining and can check it against what their inviter signed.
          const [org, inviter] = await Promise.all([store.accounts.getOrg(invite.orgId), store.accounts.findUserById(invite.inviterId)]);
          if (!inviter) throw inviteTokenNotFound();
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
        },
      },
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(invitesService);
