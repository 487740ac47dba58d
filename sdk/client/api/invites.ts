/** `client.invites`: invites to the organization, signed by the inviter and checked by the invitee (the part: invites.ts). */
import type { GrantableRole } from "../../../protocol/vault-roles";
import type { CheckedInvite, CreatedInvite } from "../invites";
import type { Parts } from "../parts";
import type { Invite } from "../types";

export interface InvitesApi {
  /**
   * Creates the invite, signs it, and keeps the link's binding secret on this device (by the
   * invited email) to check the invitee's keys against at first contact.
   */
  create(email: string, role?: GrantableRole, expiresIn?: string): Promise<CreatedInvite>;
  /** The web vault's link for an invite code: `<origin>/#/invite/<code>`, on the server this client talks to. */
  link(code: string): string;
  /** The organization's invites (the caller's own organization unless `orgId` says otherwise). */
  list(orgId?: string): Promise<Invite[]>;
  revoke(inviteId: string): Promise<void>;
  /**
   * What an invite is for, checked: given a link or code that names the inviter's key, the
   * server's answer must be the invite that inviter signed, by that very key (`INVITE_MISMATCH`
   * otherwise). A bare token answers `verified: false`. Checking does not use the invite up;
   * registering with it does.
   */
  redeem(linkOrCode: string): Promise<CheckedInvite>;
}

export function invitesApi({ invites }: Pick<Parts, "invites">): InvitesApi {
  return {
    create: (email, role = "member", expiresIn) => invites.createInvite(email, role, expiresIn),
    link: (code) => invites.inviteLink(code),
    list: (orgId) => invites.listInvites(orgId),
    revoke: (inviteId) => invites.revokeInvite(inviteId),
    redeem: (linkOrCode) => invites.redeemInvite(linkOrCode),
  };
}
