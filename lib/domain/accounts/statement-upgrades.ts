/**
 * An account made before statements existed is upgraded by its own client: it signs its statements
 * over what the server holds, and the server checks them against that before keeping them.
 */
import { checkKdfStatement, checkKeyStatement } from "./statements";
import { noStatementGiven } from "./refusals";
import type { Kdf, SignedStatement } from "../types";

/** What the client sends: at least one statement. */
export interface StatementUpgrade {
  keyStatement?: SignedStatement;
  kdfStatement?: SignedStatement;
}

/** An upgrade of the user's statements: one given at least, and each checked against the user's keys and KDF. */
export function decideStatementUpgrade(
  user: Parameters<typeof checkKeyStatement>[0] & { kdf: Kdf },
  { keyStatement, kdfStatement }: StatementUpgrade,
): void {
  if (!keyStatement && !kdfStatement) throw noStatementGiven();
  if (keyStatement) checkKeyStatement(user, keyStatement);
  if (kdfStatement) checkKdfStatement(user, kdfStatement);
}
