/**
 * Domain events: one for every change of state (contract sections 7 and 8), with ids and types
 * only, never a token, hash, key or ciphertext. Each carries an `eventId`, so a consumer that is
 * handed one twice (at-least-once delivery) records it once.
 */
import { AUDIT_SUBJECTS } from "../../../protocol/formats/audit";
import { isUuid, type InviteId, type ItemId, type OrgId, type UserId, type VaultId } from "../ids";

export const DOMAIN_EVENT_TYPES = [
  "user.registered",
  "user.password_changed",
  "user.keys_rotated",
  "user.removed",
  "vault.created",
  "vault.renamed",
  "vault.deleted",
  "vault.member.added",
  "vault.member.removed",
  "vault.member.role_changed",
  "vault.rekeyed",
  "invite.created",
  "invite.revoked",
  "invite.consumed",
  "item.created",
  "item.updated",
  "item.deleted",
  "item.restored",
  "item.purged",
  "item.attachment_added",
  "item.attachment_removed",
  "vault.items_imported",
  "vault.exported",
  "vault.exported_plaintext",
  "user.factor_added",
  "user.factor_removed",
  "user.recovery_codes_made",
  "user.device_remembered",
  "user.device_forgotten",
  "user.passkey_added",
  "user.passkey_removed",
  "org.policies_changed",
  "recovery.enrolled",
  "recovery.unenrolled",
  "recovery.requested",
  "recovery.approved",
  "recovery.cancelled",
  "recovery.opened",
  "recovery.completed",
  "send.created",
  "send.deleted",
  "send.opened",
  "emergency.granted",
  "emergency.revoked",
  "emergency.declined",
  "emergency.requested",
  "emergency.refused",
  "emergency.opened",
  "emergency.completed",
] as const;
export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

/** The optional subjects of an event, in the order records name them. */
export const EVENT_SUBJECTS = AUDIT_SUBJECTS;
export type EventSubject = (typeof EVENT_SUBJECTS)[number];

export interface DomainEvent {
  eventId: string;
  type: DomainEventType;
  at: string;
  actorId: UserId;
  orgId: OrgId;
  vaultId?: VaultId;
  itemId?: ItemId;
  targetUserId?: UserId;
  inviteId?: InviteId;
}

/** Who acted, in which organization, on what: what a service hands over when it emits. */
export type EventSubjects = Pick<DomainEvent, "actorId" | "orgId" | EventSubject>;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TYPES = new Set<string>(DOMAIN_EVENT_TYPES);

/**
 * An event as it comes off the queue, checked field by field; null when it is not one (a poison
 * message, dead-lettered rather than retried). Unknown fields are dropped.
 */
export function parseDomainEvent(raw: unknown): DomainEvent | null {
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (!isUuid(r.eventId) || typeof r.type !== "string" || !TYPES.has(r.type)) return null;
  if (typeof r.at !== "string" || !TIMESTAMP.test(r.at) || !isUuid(r.actorId) || !isUuid(r.orgId)) return null;
  const event: DomainEvent = {
    eventId: r.eventId,
    type: r.type as DomainEventType,
    at: r.at,
    actorId: r.actorId as UserId,
    orgId: r.orgId as OrgId,
  };
  for (const key of EVENT_SUBJECTS) {
    const value = r[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" || value.length === 0 || value.length > 64) return null;
    (event as Record<EventSubject, string>)[key] = value;
  }
  return event;
}
