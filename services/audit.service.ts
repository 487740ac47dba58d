/** The organization's audit log, for its owners and admins (contract section 8). */
import type { OrgId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { auditPublicKey, DEFAULT_AUDIT_PAGE, newAuditKeySeed, signAuditCheckpoint, verifyAuditChain } from "../lib/domain/audit/log";
import { assertOrgManager } from "../lib/domain/orgs/roles";
import { callerOf, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type OrgParams = { orgId: OrgId };
type ListParams = OrgParams & { limit?: number; before?: number };
/** The audit key's seed, read (or made) once per process. */
type AuditSeed = () => Promise<string>;

export function auditService(rt: Runtime): ServiceSchema {
  const { store, clock } = rt;
  // The audit key, read (or made) once per process: the same for every node, as the store keeps it.
  let seed: Promise<string> | undefined;
  const auditSeed: AuditSeed = () =>
    (seed ??= store.audit.auditKeySeed(newAuditKeySeed(), clock.timestamp()).catch((err) => ((seed = undefined), Promise.reject(err))));
  return {
    name: "audit",
    actions: {
      key: { params: paramsOf("audit.key"), handler: () => key(auditSeed) },
      checkpoint: { params: paramsOf("audit.checkpoint"), handler: (ctx: Ctx<OrgParams>) => checkpoint(rt, auditSeed, ctx) },
      list: { params: paramsOf("audit.list"), handler: (ctx: Ctx<ListParams>) => list(rt, ctx) },
      verify: { params: paramsOf("audit.verify"), handler: (ctx: Ctx<OrgParams>) => verify(rt, ctx) },
    },
  };
}

async function key(auditSeed: AuditSeed) {
  return { publicKey: auditPublicKey(await auditSeed()) };
}

async function checkpoint({ store, clock }: Runtime, auditSeed: AuditSeed, ctx: Ctx<OrgParams>) {
  assertOrgManager(callerOf(ctx), ctx.params.orgId, "read the audit log");
  const head = await store.audit.auditHead(ctx.params.orgId);
  return signAuditCheckpoint(await auditSeed(), { orgId: ctx.params.orgId, seq: head.seq, head: head.hash, at: clock.timestamp() });
}

async function list({ store }: Runtime, ctx: Ctx<ListParams>) {
  assertOrgManager(callerOf(ctx), ctx.params.orgId, "read the audit log");
  const events = await store.audit.listAuditRecords({
    orgId: ctx.params.orgId,
    limit: ctx.params.limit ?? DEFAULT_AUDIT_PAGE,
    before: ctx.params.before,
  });
  const last = events[events.length - 1];
  // Seqs have no gaps: older records exist exactly when the last one shown is not the first.
  return { events, nextBefore: last && last.seq > 1 ? last.seq : null };
}

async function verify({ store }: Runtime, ctx: Ctx<OrgParams>) {
  assertOrgManager(callerOf(ctx), ctx.params.orgId, "verify the audit log");
  const head = await store.audit.auditHead(ctx.params.orgId);
  return verifyAuditChain(head, (after, upTo, limit) =>
    store.audit.readAuditChain({ orgId: ctx.params.orgId, afterSeq: after, upToSeq: upTo, limit }),
  );
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(auditService);
