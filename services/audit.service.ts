/** The organization's audit log, for its owners and admins (contract section 8). */
import type { OrgId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { DEFAULT_AUDIT_PAGE, verifyAuditChain } from "../lib/domain/audit";
import { assertOrgManager } from "../lib/domain/org-roles";
import { callerOf, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";

type Ctx<P> = Context<P, RequestMeta>;

export function auditService({ store }: Runtime): ServiceSchema {
  return {
    name: "audit",
    actions: {
      list: {
        params: paramsOf("audit.list"),
        async handler(ctx: Ctx<{ orgId: OrgId; limit?: number; before?: number }>) {
          assertOrgManager(callerOf(ctx), ctx.params.orgId, "read the audit log");
          const events = await store.audit.listAuditRecords({
            orgId: ctx.params.orgId,
            limit: ctx.params.limit ?? DEFAULT_AUDIT_PAGE,
            before: ctx.params.before,
          });
          const last = events[events.length - 1];
          // Seqs have no gaps: older records exist exactly when the last one shown is not the first.
          return { events, nextBefore: last && last.seq > 1 ? last.seq : null };
        },
      },

      verify: {
        params: paramsOf("audit.verify"),
        async handler(ctx: Ctx<{ orgId: OrgId }>) {
          assertOrgManager(callerOf(ctx), ctx.params.orgId, "verify the audit log");
          const head = await store.audit.auditHead(ctx.params.orgId);
          return verifyAuditChain(head, (after, upTo, limit) =>
            store.audit.readAuditChain({ orgId: ctx.params.orgId, afterSeq: after, upToSeq: upTo, limit }),
          );
        },
      },
    },
  };
}
