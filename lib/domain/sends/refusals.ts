/**
 * Named refusals of sends: each constructor is the one place a refusal's code, message and field
 * are written, and each is thrown by one rule of this folder (decisions.ts).
 */
import { AppError, conflict, forbidden, invalid, notFound, unauthorized } from "../../errors";

/**
 * The send is not there for this request: never made, deleted, expired, opened its last time, not
 * finished, or its organization forbids sends. One answer for all, so a link tells a stranger nothing.
 */
export const sendNotFound = () => notFound("Send");

/** A new send names a sendId in use. */
export const sendIdTaken = () => conflict("A send with this sendId already exists", "sendId");

/** The organization's policy forbids sends. */
export const sendsForbidden = () => forbidden("Your organization's policy does not allow sends");

/** An expiry in the past, or beyond the longest lifetime the server or the organization allows. */
export const sendLifetimeRefused = (maxText: string, why: "server" | "policy") =>
  invalid(
    `A send lives from a minute to ${maxText} (${why === "policy" ? "the organization's sendMaxLifetime" : "SEND_MAX_LIFETIME"})`,
    "expiresIn",
  );

/** A send larger than SEND_MAX_BYTES. */
export const sendTooLarge = (bytes: number, max: number) =>
  new AppError("PAYLOAD_TOO_LARGE", `A send of ${bytes} sealed bytes is larger than the ${max} bytes one send may hold (SEND_MAX_BYTES)`);

/** A member with SEND_MAX_PER_USER live sends already. */
export const tooManySends = (max: number) =>
  new AppError("PAYLOAD_TOO_LARGE", `You have ${max} live sends, the most one member may have (SEND_MAX_PER_USER): delete one first`);

/** The organization's sends would pass SEND_ORG_QUOTA. */
export const sendQuotaFull = (used: number, bytes: number, quota: number) =>
  new AppError(
    "PAYLOAD_TOO_LARGE",
    `The organization's sends hold ${used} bytes; ${bytes} more would pass its quota of ${quota} (SEND_ORG_QUOTA). Delete sends, or wait for some to expire`,
  );

/** A part index the send does not have. */
export const sendPartOutOfRange = (index: number, parts: number) =>
  invalid(`This send has ${parts} part${parts === 1 ? "" : "s"} (0 to ${parts - 1}), not part ${index}`, "index");

/** A part that would take the send past the sealed size it was made with. */
export const sendPartsTooLarge = (bytes: number) => invalid(`This send's parts hold ${bytes} sealed bytes, as it was made with`, "data");

/** A part or a finish for a send that is finished: its parts never change. */
export const sendFinished = () => conflict("This send is finished: its parts cannot change", "sendId");

/** A finish before every part arrived, or with parts that do not add up to the size the send was made with. */
export const sendIncomplete = (missing: number | null, parts: number) =>
  conflict(
    missing === null
      ? "The parts sent do not add up to the sealed size this send was made with"
      : `Part ${missing} of ${parts} has not arrived: send it, then finish the send`,
    "index",
  );

/** A send with a password opened without its proof. */
export const sendPasswordRequired = () =>
  new AppError("UNAUTHORIZED", "This send is protected by a password: send its proof", { field: "passwordProof" });

/** A wrong password (its proof does not match). */
export const sendPasswordWrong = () => new AppError("UNAUTHORIZED", "That password does not open this send", { field: "passwordProof" });

/** A part read without a valid access from an open of this send (or after it ended). */
export const sendAccessInvalid = () => unauthorized("This access to the send's parts is not valid or has ended: open the send again");

/** Too many wrong passwords for a send (counted as logins are, lib/domain/accounts/login-limits.ts). */
export const sendPasswordRateLimited = (refusal: "email-and-address" | "address" | "email", retryAfterSec: number) =>
  new AppError(
    "RATE_LIMITED",
    refusal === "email-and-address"
      ? "Too many wrong passwords for this send from your address; try again later"
      : refusal === "address"
        ? "Too many wrong passwords from your address; try again later"
        : "Too many wrong passwords for this send; try again later",
    { retryAfterSec },
  );
