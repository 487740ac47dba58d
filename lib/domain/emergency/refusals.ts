/**
 * Named refusals of emergency access: each constructor is the one place a refusal's code, message
 * and field are written, and each is thrown by one rule of this folder (decisions.ts).
 */
import { conflict, forbidden, invalid, notFound } from "../../errors";

/**
 * No grant by this id that the caller is a party to (or with the caller on the wrong side of it):
 * one answer for all, so an id tells a stranger nothing.
 */
export const grantNotFound = () => notFound("Emergency access grant");

/** A grant naming its own grantor as the grantee. */
export const grantToSelf = () => invalid("You cannot grant emergency access to yourself", "granteeId");

/** A grantee who is not a member of the grantor's organization (never was, or was removed). */
export const granteeNotFound = () => notFound("Member");

/** A grant made under account keys or a KDF statement the grantor's account has since replaced. */
export const grantMadeUnderOldState = (field: "keys" | "kdfVersion") =>
  conflict(
    field === "keys"
      ? "Your account's keys changed since this grant was made: make it again with the current ones"
      : "Your password changed since this grant was made: make it again under the current one",
    field,
  );

/** A grant wrapped to other keys than the grantee's current ones (the grantee rotated them since the grantor's device read them). */
export const granteeKeysChanged = () =>
  conflict("The grantee's keys changed: check their new keys on your device, then make the grant again", "granteeKeys");

/** A grant whose signature is not the grantor's over what it states. */
export const grantSignatureInvalid = () => invalid("The grant's signature is not yours over what it states", "signature");

/** A new grant to a member who already has one from the grantor. */
export const grantExists = (grantId: string) =>
  conflict(
    `You already grant this member emergency access (${grantId}): make that grant again under its id, or revoke it first`,
    "granteeId",
  );

/** A grant made again with another level or wait while its grantee's request stands: both are fixed from the request on. */
export const grantFrozen = () =>
  conflict(
    "The grantee has asked for access: the level and the wait stay as they were asked under. Refuse the request or revoke the grant to change them",
    "level",
  );

/** A grant whose grantor or grantee changed keys, or whose grantor changed the password, since it was made: it opens nothing until the grantor's device makes it again. */
export const grantStale = () =>
  conflict("This grant was made under keys or a password that have changed since: the grantor's device must make it again", "grantId");

/** A request for a grant already asked for. */
export const alreadyRequested = () => conflict("You have already asked for this access: the wait is running", "grantId");

/** A refusal, a release or a session of a grant nobody asked for. */
export const notRequested = () => conflict("Nobody has asked for this access", "grantId");

/** The grant's key or session asked for before the wait is over. */
export const stillWaiting = (availableAt: string) =>
  conflict(`The wait is not over: this access opens at ${availableAt}, unless the grantor refuses it first`, "grantId");

/** A write in a session a read grant opened: it may only read. */
export const readOnlySession = () => forbidden("This session was opened by emergency access to read the account: it can only read");
