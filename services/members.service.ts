/** Sharing: add, list, change the role of and remove vault members (interface and contract section 3). */
import type { Context, ServiceSchema } from "moleculer";
import { invalid, notFound } from "../lib/errors";
import { parseRosterLink, ROSTER_LINK_FIELD } from "../lib/domain/roster";
import { GRANTABLE_ROLES, VAULT_ROLES, type GrantableRole, type VaultRole } from "../lib/domain/types";
import { callerOf, noContent, type RequestMeta } from "../lib/http/context";
import { pathId, rosterLink, signature, STRICT, uuid, wrappedKey } from "../lib/http/params";
import type { Runtime } from "../lib/runtime";

type Ctx<P> = Context<P, RequestMeta>;

interface AddParams {
  vaultId: string;
  recipientUserId: string;
  encryptedVaultKey: string;
  wrapSignature: string;
  role: GrantableRole;
  keyVersion?: number;
  rosterLink?: unknown;
}

const keyVersion = { type: "number", integer: true, positive: true, optional: true } as const;

export function membersService({ store, events, clock }: Runtime): ServiceSchema {
  return {
    name: "members",
    actions: {
      list: {
        params: { vaultId: pathId },
        async handler(ctx: Ctx<{ vaultId: string }>) {
          const members = await store.vaults.listMembers({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId });
          if (!members) throw notFound("Vault");
          return { members };
        },
      },

      add: {
        params: {
          ...STRICT,
          vaultId: pathId,
          recipientUserId: uuid,
          encryptedVaultKey: wrappedKey,
          wrapSignature: signature,
          role: { type: "enum", values: [...GRANTABLE_ROLES] },
          keyVersion,
          rosterLink,
        },
        async handler(ctx: Ctx<AddParams>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          const link = parseRosterLink(p.rosterLink);
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
          });
          await events.emit("vault.member.added", {
            actorId: caller.userId,
            orgId: caller.orgId,
            vaultId: p.vaultId,
            targetUserId: p.recipientUserId,
          });
          return noContent(ctx);
        },
      },

      changeRole: {
        params: { ...STRICT, vaultId: pathId, userId: pathId, role: { type: "enum", values: [...VAULT_ROLES] }, rosterLink },
        async handler(ctx: Ctx<{ vaultId: string; userId: string; role: VaultRole; rosterLink?: unknown }>) {
          const caller = callerOf(ctx);
          const { vaultId, userId, role } = ctx.params;
          const link = parseRosterLink(ctx.params.rosterLink);
          const entry = await store.vaults.changeMemberRole({
            vaultId,
            actorId: caller.userId,
            targetId: userId,
            role,
            now: clock.timestamp(),
            rosterLink: link,
          });
          await events.emit("vault.member.role_changed", { actorId: caller.userId, orgId: caller.orgId, vaultId, targetUserId: userId });
          return entry;
        },
      },

      remove: {
        // The interface's DELETE has no body; a signed vault's `remove` link comes in an optional JSON body.
        params: { ...STRICT, vaultId: pathId, userId: pathId, rosterLink },
        async handler(ctx: Ctx<{ vaultId: string; userId: string; rosterLink?: unknown }>) {
          const caller = callerOf(ctx);
          const { vaultId, userId } = ctx.params;
          const link = parseRosterLink(ctx.params.rosterLink);
          const result = await store.vaults.removeMember({
            vaultId,
            actorId: caller.userId,
            targetId: userId,
            now: clock.timestamp(),
            rosterLink: link,
          });
          await events.emit("vault.member.removed", { actorId: caller.userId, orgId: caller.orgId, vaultId, targetUserId: userId });
          return result;
        },
      },

      roster: {
        params: { vaultId: pathId },
        async handler(ctx: Ctx<{ vaultId: string }>) {
          const links = await store.vaults.getRoster({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId });
          if (!links) throw notFound("Vault");
          return { links };
        },
      },

      adoptRoster: {
        params: { ...STRICT, vaultId: pathId, rosterLink },
        async handler(ctx: Ctx<{ vaultId: string; rosterLink?: unknown }>) {
          const link = parseRosterLink(ctx.params.rosterLink);
          if (!link) throw invalid("rosterLink is required: the adopt link", ROSTER_LINK_FIELD);
          await store.vaults.adoptRoster({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, link, now: clock.timestamp() });
          return noContent(ctx);
        },
      },
    },
  };
}
