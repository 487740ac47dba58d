/** The organization's audit log (owners and admins of the organization). */
import type { ClientCore } from "./core";
import type { AuditRecord } from "./types";

export class Audit {
  constructor(private readonly core: ClientCore) {}

  /** The organization's audit log, newest first. */
  auditLog(opts: { orgId?: string; limit?: number; before?: number } = {}): Promise<{ events: AuditRecord[]; nextBefore: number | null }> {
    return this.core.http.request("GET", "/audit", {
      query: { orgId: opts.orgId ?? this.core.account.orgId, limit: opts.limit, before: opts.before },
    });
  }

  /** The server's check of the organization's audit hash chain. */
  verifyAuditLog(orgId = this.core.account.orgId): Promise<{ ok: boolean; count: number; head?: string; brokenAt?: number }> {
    return this.core.http.request("GET", "/audit/verify", { query: { orgId } });
  }
}
