/**
 * Each organization's signed log (protocol/formats/org-log.ts): the links clients signed, in order,
 * kept whole. The rules of an append are lib/domain/orgs/log.ts; a removal appends its link in the
 * removal's own transaction (`AccountStore.removeFromOrg`).
 */
import type { OrgId } from "../../domain/ids";
import type { OrgLogEntry } from "../../domain/orgs/log";

export interface OrgLogStore {
  /** The organization's links, oldest first, as their signers sent them; empty for a log not started. */
  links(orgId: OrgId): Promise<unknown[]>;
  /**
   * Appends one link under the organization's lock, if it follows the stored head
   * (`decideOrgLogStep`: 409 naming `${field}.seq` when another change came first).
   */
  append(args: { orgId: OrgId; entry: OrgLogEntry; field: string; now: string }): Promise<void>;
}
