/**
 * The audit claim a request's signed link carries, checked against the organization's audit log
 * before the write (the rule is `decideAuditClaim`, lib/domain/audit/log.ts): an honest server never
 * stores a link naming an audit head its log does not have, so a client that finds one differing
 * from its own verified log knows the server showed two histories.
 */
import { decideAuditClaim } from "./domain/audit/log";
import type { OrgId } from "./domain/ids";
import type { AuditClaim } from "../protocol/formats/links";
import type { Store } from "./store";

/** `link` (parsed; undefined when the request has none) once its claim is checked; `field` is the request field that carries it. */
export async function withCheckedAuditClaim<T extends AuditClaim | undefined>(
  store: Store,
  orgId: OrgId,
  field: string,
  link: T,
): Promise<T> {
  if (link?.auditSeq === undefined) return link;
  const [record] = await store.audit.readAuditChain({ orgId, afterSeq: link.auditSeq - 1, upToSeq: link.auditSeq, limit: 1 });
  decideAuditClaim(link, record, field);
  return link;
}
