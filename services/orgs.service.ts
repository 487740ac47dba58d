/** Organizations and their members' public key bundles (contract section 2). */
import { decideOrgAccess } from "../lib/domain/access";
import { orgNotFound } from "../lib/domain/refusals";
import type { OrgId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { callerOf, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { publicKeysOf } from "../lib/http/views";

type Ctx<P> = Context<P, RequestMeta>;

export function orgsService({ store }: Runtime): ServiceSchema {
  function assertInOrg(ctx: Ctx<{ orgId: OrgId }>): void {
    decideOrgAccess(callerOf(ctx), ctx.params.orgId);
  }
  return {
    name: "orgs",
    actions: {
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
            members: users.map((u) => ({ ...publicKeysOf(u), role: u.role, createdAt: u.createdAt })),
          };
        },
      },
    },
  };
}
