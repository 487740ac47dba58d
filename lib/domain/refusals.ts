/**
 * Named refusals every feature shares (names, email addresses, readiness, the store's own races).
 * Each feature's own are in its folder: lib/domain/{vaults,items,accounts,orgs,audit}/refusals.ts.
 * Each constructor is the one place a refusal's code, message and field are written; the error
 * body keeps the contract's shape (`{ error: { code, message, field? } }`).
 */
import { AppError, conflict, invalid } from "../errors";

// ---- Names and sizes ------------------------------------------------------------------------

/** A name that breaks the one rule for names (protocol/names.ts). */
export const badName = (field: string, problem: string) => invalid(`${field} ${problem}`, field);

// ---- Keys, statements and formats -----------------------------------------------------------

/** An address the one email rule (protocol/email.ts) refuses, in its words. */
export const badEmail = (why: string, field: string) => invalid(why, field);

// ---- Readiness ------------------------------------------------------------------------------

/**
 * A health check while some routed action has no node to serve it (a split deployment starting, or
 * a node away until its replacement serves): the services named, and when to ask again.
 */
export const notEveryServiceReachable = (services: readonly string[]) =>
  new AppError("UNAVAILABLE", `Not every service is reachable: ${services.join(", ")}`, { retryAfterSec: 1, forClients: true });

// ---- What the store reads under its locks ---------------------------------------------------

/** A write that lost a unique-key race to another (the store's own race). */
export const alreadyExists = () => conflict("Already exists");

/** A transaction that lost its race on a vault more often than it retries (the store's own race). */
export const lostRace = () => conflict("The vault changed meanwhile; try again");

/** A change too large for the database to hold in one transaction. */
export const tooLargeForOneTransaction = () => new AppError("PAYLOAD_TOO_LARGE", "The change is too large for one database transaction");
