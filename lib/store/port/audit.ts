/** The audit log (lib/domain/audit/log.ts): append-only, one hash chain per organization. */
import type { OrgId } from "../../domain/ids";
import type { AuditHead, AuditRecord } from "../../domain/audit/log";
import type { DomainEvent } from "../../domain/audit/events";

export interface AppendOutcome {
  appended: number;
  alreadyRecorded: number;
}

export interface AuditStore {
  /**
   * Appends each event whose id is not recorded yet to its organization's chain, in one
   * transaction that holds the organization's head. Safe to call again with the same events and
   * from several workers at once: `appended` were new, `alreadyRecorded` were not.
   */
  appendAuditEvents(events: DomainEvent[]): Promise<AppendOutcome>;
  /** An organization's records, newest first, those with seq < `before` when it is given. */
  listAuditRecords(args: { orgId: OrgId; limit: number; before?: number }): Promise<AuditRecord[]>;
  /** Records in seq order with afterSeq < seq <= upToSeq, at most `limit` (verification reads pages). */
  readAuditChain(args: { orgId: OrgId; afterSeq: number; upToSeq: number; limit: number }): Promise<AuditRecord[]>;
  /** The organization's last seq and hash (EMPTY_HEAD before its first record). */
  auditHead(orgId: OrgId): Promise<AuditHead>;
  /** The server's audit key seed: `candidate` stored if there is none yet, else the one stored (the same for every node). */
  auditKeySeed(candidate: string, now: string): Promise<string>;
}
