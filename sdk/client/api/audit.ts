/** `client.audit`: the organization's audit log, read and checked here (the part: audit.ts). */
import type { AuditExport } from "../../../protocol/formats/audit";
import type { CheckedAuditLog } from "../audit";
import type { Parts } from "../parts";
import type { AuditRecord } from "../types";

export interface AuditApi {
  /** The organization's audit log, newest first (one page, as the server gives it: unchecked). */
  log(opts?: { orgId?: string; limit?: number; before?: number }): Promise<{ events: AuditRecord[]; nextBefore: number | null }>;
  /** The organization's audit log checked here; throws a named SecurityError where it does not hold. */
  verify(orgId?: string, opts?: { full?: boolean }): Promise<CheckedAuditLog>;
  /** The server's own verdict on its chain: its word only (`verify` checks it here). */
  serverVerdict(orgId?: string): Promise<{ ok: boolean; count: number; head?: string; brokenAt?: number }>;
  /** The whole log with a signed checkpoint and the audit key, checked here first: `vaultctl audit verify FILE` checks it anywhere. */
  export(orgId?: string): Promise<AuditExport>;
}

export function auditApi({ audit }: Pick<Parts, "audit">): AuditApi {
  return {
    log: (opts = {}) => audit.auditLog(opts),
    verify: (orgId, opts = {}) => audit.verifyAuditLog(orgId, opts),
    serverVerdict: (orgId) => audit.serverAuditVerdict(orgId),
    export: (orgId) => audit.exportAuditLog(orgId),
  };
}
