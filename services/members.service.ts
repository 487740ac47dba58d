/** Sharing: add, list, change the role of and remove vault members (interface and contract section 3). */
import type { Context, ServiceSchema } from "moleculer";
import { notFound } from "../lib/errors";
import { timestamp } from "../lib/domain/encoding";
import { GRANTABLE_ROLES, VAULT_ROLES, type GrantableRole, type VaultRole } from "../lib/domain/types";
import { callerOf, noContent, type RequestMeta } from "../lib/http/context";
import { pathId, signature, STRICT, uuid, wrappedKey } from "../lib/http/params";
import type { Runtime } from "../lib/runtime";

type Ctx<P> = Context<P, RequestMeta>;

interface AddParams {
  vaultId: string;
  recipientUserId: string;
  encryptedVaultKey: string;
  wrapSignature: string;
  role: GrantableRole;
  keyVersion?: number;
}

const keyVersion = { type: "number", integer: true, positive: true, optional: true } as const;

export function membersService({ store, events }: Runtime): ServiceSchema {
  return {
    name: "members",
    actions: {
      list: {
        params: { vaultId: pathId },
        async handler(ctx: Ctx<{ vaultId: string }>) {
          const members = await store.listMembers(ctx.params.vaultId, callerOf(ctx).userId);
          if (!members) throw notFound("Vault");
          return { members };
        },
      },

      add: {
        params: {
          ...STRICT, vaultId: pathId, recipientUserId: uuid, encryptedVaultKey: wrappedKey, wrapSignature: signature,
          role: { type: "enum", values: [...GRANTABLE_ROLES] }, keyVersion,
        },
        async handler(ctx: Ctx<AddParams>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          await store.addMember(p.vaultId, caller.userId, {
            userId: p.recipientUserId, role: p.role, encryptedVaultKey: p.encryptedVaultKey, wrapSignature: p.wrapSignature, keyVersion: p.keyVersion,
          }, timestamp());
          await events.emit("vault.member.added", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, targetUserId: p.recipientUserId });
          return noContent(ctx);
        },
      },

      changeRole: {
        params: { ...STRICT, vaultId: pathId, userId: pathId, role: { type: "enum", values: [...VAULT_ROLES] } },
        async handler(ctx: Ctx<{ vaultId: string; userId: string; role: VaultRole }>) {
          const caller = callerOf(ctx);
          const { vaultId, userId, role } = ctx.params;
          const entry = await store.changeMemberRole(vaultId, caller.userId, userId, role, timestamp());
          await events.emit("vault.member.role_changed", { actorId: caller.userId, orgId: caller.orgId, vaultId, targetUserId: userId });
          return entry;
        },
      },

      remove: {
        params: { vaultId: pathId, userId: pathId },
        async handler(ctx: Ctx<{ vaultId: string; userId: string }>) {
          const caller = callerOf(ctx);
          const { vaultId, userId } = ctx.params;
          const result = await store.removeMember(vaultId, caller.userId, userId, timestamp());
          await events.emit("vault.member.removed", { actorId: caller.userId, orgId: caller.orgId, vaultId, targetUserId: userId });
          return result;
        },
      },
    },
  };
}
