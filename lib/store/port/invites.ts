/** Invites: one-time, expiring, looked up by the hash of their token. */
import type { InviteId, OrgId } from "../../domain/ids";
import type { Invite } from "../../domain/orgs/invites";
import type { SignedStatement } from "../../domain/types";
import type { WithEvents } from "./outbox";

/** What a revoke did: pending became revoked, it was already used or revoked, or there is no such invite. */
export type RevokeOutcome = "revoked" | "not-pending" | "not-found";

export interface InviteStore {
  /** 409 when a user with the email already exists. */
  createInvite(args: { invite: Invite; tokenHash: string } & WithEvents): Promise<void>;
  /** Pending, unexpired invites of an organization, newest first. */
  listPendingInvites(args: { orgId: OrgId; now: string }): Promise<Invite[]>;
  findInviteByTokenHash(tokenHash: string): Promise<Invite | null>;
  getInvite(inviteId: InviteId): Promise<Invite | null>;
  /** Pending becomes revoked; `not-found` when there is no such invite in the organization. */
  /** The events are written only when this call revokes the invite. */
  revokeInvite(args: { inviteId: InviteId; orgId: OrgId; now: string } & WithEvents): Promise<RevokeOutcome>;
  /**
   * Attaches the inviter's signed statement to a pending invite (the caller checked it): once;
   * the same statement again is a no-op, another one `409 CONFLICT`, an invite no longer pending
   * `400 INVITE_NOT_REDEEMABLE`.
   */
  attachStatement(args: { inviteId: InviteId; statement: SignedStatement; now: string }): Promise<void>;
}
