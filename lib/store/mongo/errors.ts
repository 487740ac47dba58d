/**
 * MongoDB errors in the contract's terms: 409, 413, 503, or not disguised. Pure: unit-tested with
 * the driver's own error classes. The table: docs/design/mongo-errors.md.
 */
import {
  MongoError,
  MongoErrorLabel,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from "mongodb";
import { AppError } from "../../errors";
import { alreadyExists, lostRace, tooLargeForOneTransaction } from "../../domain/refusals";

const DUPLICATE_KEY = 11000;
const WRITE_CONFLICT = 112;

/** Too large for one transaction: retrying the same change meets the same wall. */
const TOO_LARGE = new Map<number, string>([
  [257, "TransactionTooLarge"],
  [313, "TransactionTooLargeForCache"],
  [10334, "BSONObjectTooLarge"],
]);

/** The server's "not now": no writable primary, a stepdown or shutdown, a deadline, a lock wait. */
const NOT_NOW = new Map<number, string>([
  [6, "HostUnreachable"],
  [7, "HostNotFound"],
  [24, "LockTimeout"],
  [50, "MaxTimeMSExpired"],
  [64, "WriteConcernFailed"],
  [89, "NetworkTimeout"],
  [91, "ShutdownInProgress"],
  [189, "PrimarySteppedDown"],
  [251, "NoSuchTransaction"],
  [262, "ExceededTimeLimit"],
  [290, "TransactionExceededLifetimeLimitSeconds"],
  [9001, "SocketException"],
  [10107, "NotWritablePrimary"],
  [11600, "InterruptedAtShutdown"],
  [11602, "InterruptedDueToReplStateChange"],
  [13435, "NotPrimaryNoSecondaryOk"],
  [13436, "NotPrimaryOrSecondary"],
]);

function named(err: MongoError, table: Map<number, string>): boolean {
  const codeName = (err as { codeName?: unknown }).codeName;
  return (typeof err.code === "number" && table.has(err.code)) || (typeof codeName === "string" && [...table.values()].includes(codeName));
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoError && err.code === DUPLICATE_KEY;
}

/** Another transaction kept changing the same vault until this one's time ran out: 409, the caller may try again. */
export function isLostRace(err: unknown): boolean {
  return err instanceof MongoError && err.code === WRITE_CONFLICT;
}

export function isTooLargeForTransaction(err: unknown): boolean {
  return err instanceof MongoError && named(err, TOO_LARGE);
}

/** The database cannot serve now (unreachable, no primary, a lost majority, a deadline): 503. */
export function isMongoUnavailable(err: unknown): boolean {
  if (!(err instanceof MongoError) || isLostRace(err) || isDuplicateKey(err) || isTooLargeForTransaction(err)) return false;
  return (
    err instanceof MongoNetworkError ||
    err instanceof MongoServerSelectionError ||
    err instanceof MongoTopologyClosedError ||
    err instanceof MongoNotConnectedError ||
    err instanceof MongoOperationTimeoutError ||
    err instanceof MongoWriteConcernError ||
    named(err, NOT_NOW) ||
    err.hasErrorLabel(MongoErrorLabel.TransientTransactionError) ||
    err.hasErrorLabel(MongoErrorLabel.UnknownTransactionCommitResult) ||
    err.hasErrorLabel(MongoErrorLabel.RetryableWriteError)
  );
}

/** Worth another attempt of the whole transaction, while its deadline allows (the driver's labels say so). */
export function isTransientTransactionError(err: unknown): boolean {
  return err instanceof MongoError && err.hasErrorLabel(MongoErrorLabel.TransientTransactionError) && !isTooLargeForTransaction(err);
}

/** A commit whose outcome is unknown (its reply was lost): committing again is safe. */
export function isUnknownCommitResult(err: unknown): boolean {
  return err instanceof MongoError && err.hasErrorLabel(MongoErrorLabel.UnknownTransactionCommitResult);
}

/** What a failure means to the caller; refusals (AppError) pass unchanged. */
export function translateMongoError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isDuplicateKey(err)) return alreadyExists();
  if (isLostRace(err)) return lostRace();
  if (isTooLargeForTransaction(err)) return tooLargeForOneTransaction();
  if (isMongoUnavailable(err)) return new AppError("UNAVAILABLE", "The database is unavailable");
  return err;
}

/**
 * The reply to `hello` must come from a replica set member or a mongos: a standalone server
 * cannot run the transactions the rekey, the member removal and the invite consumption need.
 */
export function assertTransactionsSupported(hello: { setName?: unknown; msg?: unknown }): void {
  if (typeof hello.setName === "string" || hello.msg === "isdbgrid") return;
  throw new Error(
    "MONGO_URL points at a standalone MongoDB server, which cannot run transactions. " +
      "Use a replica set: a single node will do (start mongod with --replSet rs0, then run rs.initiate() once).",
  );
}
