/** The organization's audit log, for its owners and admins (contract section 8). */
import type { OrgId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { auditPublicKey, DEFAULT_AUDIT_PAGE, newAuditKeySeed, signAuditCheckpoint, verifyAuditChain } from "../lib/domain/audit";
import { assertOrgManager } from "../lib/domain/org-roles";
import { callerOf, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type Ctx<P> = Context<P, RequestMeta>;

export function auditService({ store, clock }: Runtime): ServiceSchema {
  // The audit key, read (or made) once per process: the same for every node, as the store keeps it.
  let seed: Promise<string> | undefined;
  const auditSeed = () =>
    (seed ??= store.audit.auditKeySeed(newAuditKeySeed(), clock.timestamp()).catch((err) => ((seed = undefined), Promise.reject(err))));
  return {
    name: "audit",
    actions: {
      key: {
        params: paramsOf("audit.key"),
        async handler() {
          return { publicKey: auditPublicKey(await auditSeed()) };
        },
      },

      checkpoint: {
        params: paramsOf("audit.checkpoint"),
        async handler(ctx: Ctx<{ orgId: OrgId }>) {
          assertOrgManager(callerOf(ctx), ctx.params.orgId, "read the audit log");
          const head = await store.audit.auditHead(ctx.params.orgId);
          return signAuditCheckpoint(await auditSeed(), { orgId: ctx.params.orgId, seq: head.seq, head: head.hash, at: clock.timestamp() });
        },
      },

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

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(auditService);
