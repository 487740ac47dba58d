/**
 * Who sees what outside a vault: an organization only by its members, a user only by their
 * organization, an invite only by its organization, and its statement only by its inviter.
 */
import type { OrgId, UserId } from "../ids";
import type { Invite } from "./invites";
import { inviteNotFound, notOrgMember, notTheInviter, userNotFound } from "./refusals";
import type { Caller } from "../types";

/** The caller's own organization only (`403` for another). */
export function decideOrgAccess(caller: Caller, orgId: OrgId): void {
  if (caller.orgId !== orgId) throw notOrgMember();
}

/** A user the caller may see: one of their organization (another's, or none, is `404`). */
export function decideVisibleUser<U extends { orgId: OrgId }>(user: U | null | undefined, caller: Caller): U {
  if (!user || user.orgId !== caller.orgId) throw userNotFound();
  return user;
}

/** An invite of the caller's organization (another's, or none, is `404`). */
export function decideVisibleInvite(invite: Invite | null | undefined, caller: Caller): Invite {
  if (!invite || invite.orgId !== caller.orgId) throw inviteNotFound();
  return invite;
}

/** Only the inviter signs their invite. */
export function decideInviteSigner(invite: Pick<Invite, "inviterId">, callerId: UserId): void {
  if (invite.inviterId !== callerId) throw notTheInviter();
}
