/**
 * Who may register (contract section 2, REGISTRATION_MODE): an open server takes anyone; an
 * invite-only one takes its first user, then only holders of a redeemable invite for their own
 * address; a disabled one takes no one. The rule reads no store: the service looks the invite up
 * and asks whether the server has users, then calls it.
 */
import { userIdForKey, type UserId } from "../ids";
import { decideRedeemable, type Invite } from "../orgs/invites";
import { checkKdf, checkKeyBundle, normalizeKdf, type KdfParams, type KeyBundle } from "./keys";
import { decideOrgName } from "../names";
import { decideKdfAgainstPolicy, DEFAULT_POLICIES, type OrgPolicies } from "../orgs/policies";
import { inviteRequired, registrationDisabled } from "./refusals";
import { notTheInvitedEmail } from "../orgs/refusals";
import { checkInviteBinding, checkKdfStatement, checkKeyStatement } from "./statements";
import type { InviteBinding, Kdf, SignedStatement } from "../types";

export type RegistrationMode = "open" | "invite" | "disabled";

/** What any client is told before anyone signs in (`GET /auth/registration`). */
export interface RegistrationOffer {
  mode: RegistrationMode;
  /** Nobody has registered yet and the server takes registrations: a first page leads with creating the first account. */
  firstAccount: boolean;
}

/** The offer: the mode as configured, and whether the first account is still to be made (never on a disabled server). */
export function planRegistrationOffer(mode: RegistrationMode, hasUsers: boolean): RegistrationOffer {
  return { mode, firstAccount: mode !== "disabled" && !hasUsers };
}

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

/** What the registering client sends, its address already normalized. */
export interface RegistrationForm extends KeyBundle {
  address: string;
  kdf: KdfParams;
  orgName?: string;
  keyStatement?: SignedStatement;
  kdfStatement?: SignedStatement;
  /** The MAC binding the account to the invite its client was given (base64). */
  inviteBinding?: string;
}

/** What a registration stores, besides the form's own keys. */
export interface RegistrationPlan {
  /** The invite redeemed; null: a new organization, named `orgName`. */
  invite: Invite | null;
  orgName: string;
  userId: UserId;
  kdf: Kdf;
  inviteBinding?: InviteBinding;
}

/**
 * A registration as one decision: who may register (`decideRegistration`), the new organization's
 * name, the key bundle and KDF, the statements the keys signed, the invite binding, and an
 * invitee's KDF against their organization's policy (`policies`: the invite's organization's, as
 * the service read them), in that order, each refusal named.
 */
export function planRegistration(found: RegistrationRequest & { policies: OrgPolicies | null }, form: RegistrationForm): RegistrationPlan {
  const invite = decideRegistration(found);
  const orgName = decideOrgName(form.orgName);
  checkKeyBundle(form);
  const kdf = normalizeKdf(form.kdf);
  checkKdf(kdf);
  // Derived from the signing key: the client knows it before this answer, and signed it into its statements.
  const userId = userIdForKey(form.signingPublicKey);
  const holder = { userId, email: form.address, publicKey: form.publicKey, signingPublicKey: form.signingPublicKey };
  if (form.keyStatement) checkKeyStatement(holder, form.keyStatement);
  if (form.kdfStatement) checkKdfStatement({ ...holder, kdf }, form.kdfStatement);
  if (form.inviteBinding !== undefined) checkInviteBinding(form.inviteBinding, invite !== null);
  // An invitee's new password meets their organization's least KDF cost.
  if (invite) decideKdfAgainstPolicy(kdf, found.policies ?? DEFAULT_POLICIES);
  const binding =
    invite && form.inviteBinding !== undefined ? { inviteBinding: { inviteId: invite.inviteId, mac: form.inviteBinding } } : {};
  return { invite, orgName, userId, kdf, ...binding };
}
