/**
 * Who may register (contract section 2, REGISTRATION_MODE): an open server takes anyone; an
 * invite-only one takes its first user, then only holders of a redeemable invite for their own
 * address; a disabled one takes no one. The rule reads no store: the service looks the invite up
 * and asks whether the server has users, then calls it.
 */
import { decideRedeemable, type Invite } from "./invites";
import { inviteRequired, notTheInvitedEmail, registrationDisabled } from "./refusals";

export type RegistrationMode = "open" | "invite" | "disabled";

/** Before anything is counted or looked up: a disabled server refuses at once. */
export function decideRegistrationOpen(mode: RegistrationMode): void {
  if (mode === "disabled") throw registrationDisabled();
}

export interface RegistrationRequest {
  mode: RegistrationMode;
  /** The request named an invite token. */
  tokenGiven: boolean;
  /** The invite that token is, if any. */
  invite: Invite | null;
  /** The server already has users (an invite-only server's first user needs no invite). */
  hasUsers: boolean;
  /** The registering address, normalized. */
  address: string;
  now: string;
}

/** The invite the registration redeems (null: none needed), or the refusal. */
export function decideRegistration(r: RegistrationRequest): Invite | null {
  decideRegistrationOpen(r.mode);
  if (!r.tokenGiven && !r.invite) {
    if (r.mode === "invite" && r.hasUsers) throw inviteRequired();
    return null;
  }
  const invite = decideRedeemable(r.invite, r.now);
  if (invite.email !== r.address) throw notTheInvitedEmail();
  return invite;
}
