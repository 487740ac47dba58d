/** Invite tokens and states (contract section 6). */
import type { InviteId, OrgId, UserId } from "../ids";
import type { GrantableRole, SignedStatement } from "../types";
import { parseDuration } from "../duration";
import { badInviteLifetime, inviteNotRedeemable, inviteTokenNotFound } from "./refusals";

export type InviteStatus = "pending" | "used" | "revoked";

export interface Invite {
  inviteId: InviteId;
  orgId: OrgId;
  email: string;
  role: GrantableRole;
  inviterId: UserId;
  status: InviteStatus;
  expiresAt: string;
  createdAt: string;
  /** The inviter's signed statement of the invite (protocol/formats/statements.ts), attached after creation; absent for an invite made without one. */
  statement?: SignedStatement;
}

/** `expiresIn` ranges from 1s to 30d. */
export const MAX_INVITE_TTL_MS = 30 * 86_400_000;

/** An invite's lifetime in ms: `expiresIn` (a duration from 1s to 30d), or the server's default when none is given. */
export function decideInviteLifetime(expiresIn: string | undefined, defaultTtlMs: number): number {
  const ttlMs = expiresIn === undefined ? defaultTtlMs : parseDuration(expiresIn);
  if (ttlMs === null || ttlMs > MAX_INVITE_TTL_MS) throw badInviteLifetime();
  return ttlMs;
}

/**
 * Past its expiry, an invite that was never used (pending, or revoked) is only clutter: the sweeper
 * purges it. A used one stays, the record of how its user joined.
 */
export const PURGEABLE_INVITE_STATUSES: readonly InviteStatus[] = ["pending", "revoked"];

/** The invite a token names, redeemable now: no such invite is `404`, a used, revoked or expired one `INVITE_NOT_REDEEMABLE`. */
export function decideRedeemable(invite: Invite | null, now: string): Invite {
  if (!invite) throw inviteTokenNotFound();
  if (!isRedeemable(invite, now)) throw inviteNotRedeemable();
  return invite;
}

/** A pending invite not yet expired can be redeemed; anything else is INVITE_NOT_REDEEMABLE. */
export function isRedeemable(invite: Pick<Invite, "status" | "expiresAt">, now: string): boolean {
  return invite.status === "pending" && invite.expiresAt > now;
}
