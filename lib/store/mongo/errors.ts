/**
 * MongoDB errors in the contract's terms (the counterpart of `EngineOps.isUniqueViolation` and
 * `isPostgresUnavailable`). Pure: unit-tested with the driver's own error classes.
 */
import { MongoError, MongoNetworkError, MongoServerSelectionError, MongoTopologyClosedError } from "mongodb";
import { AppError, conflict } from "../../errors";

const DUPLICATE_KEY = 11000;
const WRITE_CONFLICT = 112;

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoError && err.code === DUPLICATE_KEY;
}

/**
 * A write conflict that `withTransaction` kept retrying until its time ran out: another
 * transaction kept changing the same vault. The caller may try again: 409, never a 5xx.
 */
export function isLostRace(err: unknown): boolean {
  return err instanceof MongoError && (err.code === WRITE_CONFLICT || err.hasErrorLabel("TransientTransactionError"));
}

/** The server cannot be reached (or the client is closing): 503 through `withUnavailableErrors`. */
export function isMongoUnavailable(err: unknown): boolean {
  return err instanceof MongoNetworkError || err instanceof MongoServerSelectionError || err instanceof MongoTopologyClosedError;
}

/** What a transaction's failure means to the caller; refusals (AppError) pass unchanged. */
export function translateMongoError(err: unknown): unknown {
  if (err instanceof AppError || isMongoUnavailable(err)) return err;
  if (isDuplicateKey(err)) return conflict("Already exists");
  if (isLostRace(err)) return conflict("The vault changed meanwhile; try again");
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
