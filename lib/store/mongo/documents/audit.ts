/** The documents of the audit log: its records and each organization's chain head. */
import type { InviteId, ItemId, OrgId, UserId, VaultId } from "../../../domain/ids";
import { auditRecord, type AuditRecord } from "../../../domain/audit/log";
import { EVENT_SUBJECTS, type DomainEventType, type EventSubject } from "../../../domain/audit/events";

/** One audit record; `_id` is the event id (recorded once). Unique on (orgId, seq). */
export interface AuditEventDoc {
  _id: string;
  orgId: OrgId;
  seq: number;
  type: DomainEventType;
  at: string;
  actorId: UserId;
  vaultId?: VaultId;
  itemId?: ItemId;
  targetUserId?: UserId;
  inviteId?: InviteId;
  prevHash: string;
  hash: string;
}

/** An organization's chain head; `_id` is the organization id. `writes` is bumped by every append (the lock). */
export interface AuditHeadDoc {
  _id: string;
  seq: number;
  hash: string;
  writes?: number;
}

export function auditDoc(r: AuditRecord): AuditEventDoc {
  const doc: AuditEventDoc = {
    _id: r.eventId,
    orgId: r.orgId,
    seq: r.seq,
    type: r.type,
    at: r.at,
    actorId: r.actorId,
    prevHash: r.prevHash,
    hash: r.hash,
  };
  for (const key of EVENT_SUBJECTS) if (r[key] !== undefined) (doc as Record<EventSubject, string>)[key] = r[key];
  return doc;
}

export function toAuditRecord(d: AuditEventDoc): AuditRecord {
  const { _id, ...rest } = d;
  return auditRecord({ ...rest, eventId: _id });
}
