/**
 * Named refusals of organizations: each constructor is the one place a refusal's code, message and field
 * are written, and each is thrown by one rule of this folder. Grep a name to find its rule and its
 * test; the error body keeps the contract's shape (`{ error: { code, message, field? } }`).
 */
import { conflict, forbidden, invalid, notFound, notRedeemable } from "../../errors";

// ---- Registration and invites ---------------------------------------------------------------

/** An invite token that is no invite's. */
export const inviteTokenNotFound = () => notFound("Invite token");

/** The invite is used, revoked or expired. */
export const inviteNotRedeemable = () => notRedeemable();

/** The invite is for another address than the one registering. */
export const notTheInvitedEmail = () => invalid("The email is not the invited one", "email");

/** An invite's `expiresIn` that is not a duration from 1s to 30d. */
export const badInviteLifetime = () => invalid("expiresIn must be like 24h or 72h, from 1s to 30d", "expiresIn");

// ---- Vault roles and membership -------------------------------------------------------------

/** Only an organization's owners and admins manage it (its invites, its audit log). */
export const notOrgManager = (what: string) => forbidden(`Only the organization's owners and admins ${what}`);

// ---- Who sees what --------------------------------------------------------------------------

/** Another organization than the caller's. */
export const notOrgMember = () => forbidden("Not a member of this organization");

/** A user of another organization, or none: they do not exist for the caller. */
export const userNotFound = () => notFound("User");

/** An invite of another organization, or none. */
export const inviteNotFound = () => notFound("Invite");

/** Only the inviter signs their invite. */
export const notTheInviter = () => forbidden("Only the inviter signs an invite");

/** The organization the request names is gone. */
export const orgNotFound = () => notFound("Organization");

/** Another registration is redeeming this invite right now. */
export const inviteBeingRedeemed = () => notRedeemable("The invite is being redeemed");

/** A redeem token of the wrong shape (counted against the address before it is checked). */
export const badRedeemToken = (min: number, max: number) => invalid(`token must be a string of ${min} to ${max} characters`, "token");

// ---- People leave ---------------------------------------------------------------------------

/** The organization's last owner cannot leave it or be removed. */
export const lastOrgOwner = () => invalid("The organization's last owner cannot leave it: make someone else an owner first");

/** The person is the last owner of shared vaults others are in: an owner is named there first. */
export const lastOwnerOfVaults = (vaultIds: readonly string[]) =>
  invalid(
    `The last owner of ${vaultIds.length} shared vault(s) others are in cannot leave: make another owner there first (${vaultIds.join(", ")})`,
    "vaults",
  );

/** A person taken out of their organization signs in no more. */
export const removedFromOrg = () => forbidden("This account was removed from its organization");

// ---- Organization policies ------------------------------------------------------------------

/** Only an organization's owners set its policies. */
export const policiesOwnersOnly = () => forbidden("Only the organization's owners set its policies");

/** A policy value outside its bounds. */
export const badPolicy = (field: string) => invalid(`${field} is outside its bounds`, field.split(".").pop());

/** A new master password whose KDF costs less than the organization requires. */
export const kdfBelowPolicy = (m: { argon2idMemoryKiB: number; argon2idIterations: number; pbkdf2Iterations: number }) =>
  invalid(
    `Your organization requires a KDF of at least argon2id ${m.argon2idMemoryKiB} KiB x ${m.argon2idIterations}, or pbkdf2-sha256 x ${m.pbkdf2Iterations}`,
    "kdf",
  );

/**
 * A policy change that would shut people out (policy-change.ts), without the request confirming it:
 * the first such policy (the field), each lock-out with who it shuts out, and the confirmation that
 * makes the change anyway.
 */
export const policyShutsOut = (
  first: "requireSecondFactor" | "recoveryMinThreshold" | "inviteMaxLifetime",
  lockOuts: readonly { field: string; who: string }[],
) =>
  conflict(
    `This change would shut people out. ${lockOuts.map((l) => `${l.field}: ${l.who}.`).join(" ")} To make it anyway, send confirmLockOut: [${lockOuts.map((l) => `"${l.field}"`).join(", ")}]`,
    first,
  );

/** An invite asked to last longer than the organization allows. */
export const inviteOutlivesPolicy = (max: string) => invalid(`Your organization's invites last at most ${max}`, "expiresIn");

// ---- What the store reads under its locks ---------------------------------------------------

/** A statement for an invite that holds another one. */
export const inviteHasStatement = () => conflict("The invite already has a statement", "signature");

/** A statement for an invite that is no longer pending (used or revoked meanwhile). */
export const inviteNotPendingForStatement = () => notRedeemable("Only a pending invite takes a statement");

// ---- The signed organization log (lib/domain/orgs/log.ts) -------------------------------------------

/** A link of the organization's log that breaks its form, is not the caller's, or says something other than the server's state. */
export const orgLinkRefused = (bodyField: string, field: string, why: string) =>
  invalid(`Organization log link: ${why}`, `${bodyField}.${field}`);

/** A link that does not follow the stored head: another change came first (read the log again, sign again). */
export const orgLogMoved = (bodyField: string, seq: number) =>
  conflict(`The organization's log moved on: the next link is seq ${seq}; read it again`, `${bodyField}.seq`);
