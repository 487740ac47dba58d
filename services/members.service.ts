/** Sharing: add, list, change the role of and remove vault members (interface and contract section 3). */
import { withCheckedAuditClaim } from "../lib/audit-claims";
import type { UserId, VaultId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { parseRosterLink, ROSTER_LINK_FIELD } from "../lib/domain/vaults/roster";
import type { GrantableRole, VaultRole } from "../lib/domain/types";
import { callerOf, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

interface AddParams {
  vaultId: VaultId;
  recipientUserId: UserId;
  encryptedVaultKey: string;
  wrapSignature: string;
  role: GrantableRole;
  keyVersion?: number;
  rosterLink?: unknown;
}

type VaultParams = { vaultId: VaultId };
type ChangeRoleParams = VaultParams & { userId: UserId; role: VaultRole; rosterLink?: unknown };
type RemoveParams = VaultParams & { userId: UserId; rosterLink?: unknown };

export function membersService(rt: Runtime): ServiceSchema {
  return {
    name: "members",
    actions: {
      list: { params: paramsOf("members.list"), handler: (ctx: Ctx<VaultParams>) => list(rt, ctx) },
      add: { params: paramsOf("members.add"), handler: (ctx: Ctx<AddParams>) => add(rt, ctx) },
      changeRole: { params: paramsOf("members.changeRole"), handler: (ctx: Ctx<ChangeRoleParams>) => changeRole(rt, ctx) },
      remove: { params: paramsOf("members.remove"), handler: (ctx: Ctx<RemoveParams>) => remove(rt, ctx) },
      roster: { params: paramsOf("members.roster"), handler: (ctx: Ctx<VaultParams>) => roster(rt, ctx) },
    },
  };
}

async function list({ store }: Runtime, ctx: Ctx<VaultParams>) {
  return { members: await store.vaults.listMembers({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId }) };
}

async function add({ store, events, clock }: Runtime, ctx: Ctx<AddParams>) {
  const caller = callerOf(ctx);
  const p = ctx.params;
  const link = await withCheckedAuditClaim(store, caller.orgId, ROSTER_LINK_FIELD, parseRosterLink(p.rosterLink));
  await store.vaults.addMember({
    vaultId: p.vaultId,
    actorId: caller.userId,
    member: {
      userId: p.recipientUserId,
      role: p.role,
      encryptedVaultKey: p.encryptedVaultKey,
      wrapSignature: p.wrapSignature,
      keyVersion: p.keyVersion,
      rosterLink: link,
    },
    now: clock.timestamp(),
    events: [
      events.record("vault.member.added", {
        actorId: caller.userId,
        orgId: caller.orgId,
        vaultId: p.vaultId,
        targetUserId: p.recipientUserId,
      }),
    ],
  });
  events.kick();
  return noContent(ctx);
}

async function changeRole({ store, events, clock }: Runtime, ctx: Ctx<ChangeRoleParams>) {
  const caller = callerOf(ctx);
  const { vaultId, userId, role } = ctx.params;
  const link = await withCheckedAuditClaim(store, caller.orgId, ROSTER_LINK_FIELD, parseRosterLink(ctx.params.rosterLink));
  const entry = await store.vaults.changeMemberRole({
    vaultId,
    actorId: caller.userId,
    targetId: userId,
    role,
    now: clock.timestamp(),
    rosterLink: link,
    events: [events.record("vault.member.role_changed", { actorId: caller.userId, orgId: caller.orgId, vaultId, targetUserId: userId })],
  });
  events.kick();
  return entry;
}

async function remove({ store, events, clock }: Runtime, ctx: Ctx<RemoveParams>) {
  const caller = callerOf(ctx);
  const { vaultId, userId } = ctx.params;
  const link = await withCheckedAuditClaim(store, caller.orgId, ROSTER_LINK_FIELD, parseRosterLink(ctx.params.rosterLink));
  const result = await store.vaults.removeMember({
    vaultId,
    actorId: caller.userId,
    targetId: userId,
    now: clock.timestamp(),
    rosterLink: link,
    events: [events.record("vault.member.removed", { actorId: caller.userId, orgId: caller.orgId, vaultId, targetUserId: userId })],
  });
  events.kick();
  return result;
}

async function roster({ store }: Runtime, ctx: Ctx<VaultParams>) {
  return { links: await store.vaults.getRoster({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId }) };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(membersService);
