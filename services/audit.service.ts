/** The organization's audit log, for its owners and admins (contract section 8). */
import type { Context, ServiceSchema } from "moleculer";
import { verifyAuditChain } from "../lib/domain/audit";
import { assertOrgManager } from "../lib/domain/org-roles";
import { callerOf, type RequestMeta } from "../lib/http/context";
import type { Runtime } from "../lib/runtime";

type Ctx<P> = Context<P, RequestMeta>;

const orgId = { type: "string", min: 1, max: 64, lowercase: true } as const;
/**
 * Query strings carry text: "20" converts, "20.5", "x" and "" do not pass. A seq is at most the
 * largest 32-bit integer (the column's range on PostgreSQL), so a larger `before` is a 400.
 */
const seqNumber = { type: "number", integer: true, convert: true, min: 1, max: 2_147_483_647 } as const;

export const DEFAULT_AUDIT_PAGE = 100;
export const MAX_AUDIT_PAGE = 500;

export function auditService({ store }: Runtime): ServiceSchema {
  return {
    name: "audit",
    actions: {
      list: {
        params: { orgId, limit: { ...seqNumber, max: MAX_AUDIT_PAGE, optional: true }, before: { ...seqNumber, optional: true } },
        async handler(ctx: Ctx<{ orgId: string; limit?: number; before?: number }>) {
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
        params: { orgId },
        async handler(ctx: Ctx<{ orgId: string }>) {
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
