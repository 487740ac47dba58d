/**
 * Domain events: one for every change of state, with ids and types only, never a token, hash,
 * key or ciphertext (contract sections 7 and 8).
 */
import type { Context } from "moleculer";
import { timestamp } from "./domain/encoding";

export type DomainEventType =
  | "user.registered"
  | "vault.created" | "vault.renamed" | "vault.deleted"
  | "vault.member.added" | "vault.member.removed" | "vault.member.role_changed" | "vault.rekeyed"
  | "invite.created" | "invite.revoked" | "invite.consumed"
  | "item.created" | "item.updated" | "item.deleted";

export interface DomainEvent {
  type: DomainEventType;
  at: string;
  actorId: string;
  orgId: string;
  vaultId?: string;
  itemId?: string;
  targetUserId?: string;
  inviteId?: string;
}

export function emitDomainEvent(ctx: Context, type: DomainEventType, subject: Omit<DomainEvent, "type" | "at">): void {
  const event: DomainEvent = { type, at: timestamp(), ...subject };
  void ctx.emit(type, event);
}
