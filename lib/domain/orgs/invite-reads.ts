/**
 * An invite as its requests read it: what its inviter signs of it (protocol/formats/statements.ts),
 * the redeem token's shape, and the inviter an invitee is shown.
 */
import type { InviteStatement } from "../../../protocol/formats/statements";
import type { Invite } from "./invites";
import { tokenUserGone } from "../accounts/refusals";
import { badRedeemToken, inviteTokenNotFound } from "./refusals";
import { checkInviteStatement } from "../accounts/statements";
import type { SignedStatement } from "../types";

/** What an inviter signs of an invite: the invite as the server made it, and its organization's name. */
export function inviteStatementOf(invite: Invite, orgName: string): InviteStatement {
  return {
    inviteId: invite.inviteId,
    orgId: invite.orgId,
    orgName,
    email: invite.email,
    role: invite.role,
    expiresAt: invite.expiresAt,
    inviterId: invite.inviterId,
  };
}

/** The inviter's statement of their invite, over the inviter and organization read again (either gone: `401`). */
export function decideInviteStatement(
  invite: Invite,
  inviter: { signingPublicKey: string } | null | undefined,
  org: { name: string } | null | undefined,
  statement: SignedStatement,
): void {
  if (!inviter || !org) throw tokenUserGone();
  checkInviteStatement(inviteStatementOf(invite, org.name), inviter.signingPublicKey, statement);
}

/** A redeem token as sent: a string within the bounds, checked after the request was counted. */
export function decideRedeemToken(token: unknown, bounds: { min: number; max: number }): string {
  if (typeof token !== "string" || token.length < bounds.min || token.length > bounds.max) throw badRedeemToken(bounds.min, bounds.max);
  return token;
}

/** The inviter of a redeemable invite, shown to the invitee: an invite whose inviter is gone is no invite (`404`). */
export function requireInviter<U>(inviter: U | null | undefined): U {
  if (!inviter) throw inviteTokenNotFound();
  return inviter;
}
