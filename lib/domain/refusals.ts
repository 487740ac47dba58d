/**
 * Named refusals: each constructor is the one place a refusal's code, message and field are
 * written, and each is thrown by one rule (a `decide*` in lib/domain/). Grep a name to find its
 * rule and the rule's test; the error body keeps the contract's shape (`{ error: { code,
 * message, field? } }`).
 */
import { AppError, conflict, forbidden, invalid, notFound, notRedeemable } from "../errors";

// ---- Items (lib/domain/items.ts) ----------------------------------------------------------------

/** The vault does not exist, or the caller is not its member (the contract does not tell them apart). */
export const vaultNotFound = () => notFound("Vault");
/** The item is not in the vault. */
export const itemNotFound = () => notFound("Item");
/** A create names an itemId the vault already holds. */
export const itemIdTaken = () => conflict("An item with this itemId already exists", "itemId");
/** An update states a revision other than the stored one: it was made on an older read. */
export const staleRevision = (stored: number, stated: number) => conflict(`The item's revision is ${stored}, not ${stated}`, "revision");
/** The item changed between the read under the lock and the conditional write (the store's own race). */
export const itemChangedMeanwhile = () => conflict("The item changed meanwhile", "revision");

// ---- Registration and invites (lib/domain/registration.ts, lib/domain/invites.ts) ---------------

/** The server takes no registrations (REGISTRATION_MODE=disabled). */
export const registrationDisabled = () => forbidden("Registration is disabled on this server");
/** REGISTRATION_MODE=invite, the server has users, and the request carries no invite. */
export const inviteRequired = () => forbidden("Registration needs an invite");
/** An invite token that is no invite's. */
export const inviteTokenNotFound = () => notFound("Invite token");
/** The invite is used, revoked or expired. */
export const inviteNotRedeemable = () => notRedeemable();
/** The invite is for another address than the one registering. */
export const notTheInvitedEmail = () => invalid("The email is not the invited one", "email");
/** An invite's `expiresIn` that is not a duration from 1s to 30d. */
export const badInviteLifetime = () => invalid("expiresIn must be like 24h or 72h, from 1s to 30d", "expiresIn");

// ---- Rate limits (lib/domain/address-limits.ts) -------------------------------------------------

/** Past a per-address limit: `429` with its message and the seconds until the window ends. */
export const rateLimited = (message: string, retryAfterSec: number) => new AppError("RATE_LIMITED", message, { retryAfterSec });
