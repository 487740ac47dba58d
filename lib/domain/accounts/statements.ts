/**
 * The server's checks of the statements users sign (the format, one implementation with the
 * clients: protocol/formats/statements.ts). The server verifies each against the holder's registered keys and
 * fields before storing it, so a client that trusts the server's honesty sees only statements
 * that verify; clients check them again themselves. Refusals are `400 INVALID` naming the field.
 */
import { badBindingTag, badStatementSignature, badStatementVersion, bindingWithoutInvite } from "./refusals";
import { inviteStatementBytes, kdfStatementBytes, keyStatementBytes, type InviteStatement } from "../../../protocol/formats/statements";
import { signatureVerifies } from "./keys";
import { keyFingerprint } from "../vaults/roster";
import type { Kdf, SignedStatement } from "../types";

/** The statements of this release all have version 1 (a key or KDF change counts up, with a signature by the previous key). */
export const STATEMENT_VERSION = 1;

/** The version of an account's signed KDF statement (1 for an account that has signed none yet). */
export const kdfVersionOf = (account: { kdfStatement?: Pick<SignedStatement, "version"> }): number =>
  account.kdfStatement?.version ?? STATEMENT_VERSION;

interface Holder {
  userId: string;
  email: string;
  publicKey: string;
  signingPublicKey: string;
}

function assertSigned(
  bytes: Uint8Array,
  statement: SignedStatement,
  signingPublicKey: string,
  field: string,
  what: string,
  version = STATEMENT_VERSION,
): void {
  if (statement.version !== version) throw badStatementVersion(what, version, field);
  if (!signatureVerifies(Buffer.from(bytes), Buffer.from(statement.signature, "base64"), signingPublicKey)) {
    throw badStatementSignature(what, field);
  }
}

/** The user's key statement: their id, normalized email and key fingerprint, signed with their signing key. */
export function checkKeyStatement(user: Holder, statement: SignedStatement, field = "keyStatement", version = STATEMENT_VERSION): void {
  const bytes = keyStatementBytes({ userId: user.userId, email: user.email, keys: keyFingerprint(user), version: statement.version });
  assertSigned(bytes, statement, user.signingPublicKey, field, "The key statement", version);
}

/** The user's KDF statement: their id, normalized email and KDF parameters with salt, signed with their signing key. */
export function checkKdfStatement(
  user: Holder & { kdf: Kdf },
  statement: SignedStatement,
  field = "kdfStatement",
  version = STATEMENT_VERSION,
): void {
  const bytes = kdfStatementBytes({ userId: user.userId, email: user.email, kdf: user.kdf, version: statement.version });
  assertSigned(bytes, statement, user.signingPublicKey, field, "The KDF statement", version);
}

/** An invite's statement, signed by its inviter over the invite as it is (id, organization, email, role, expiry). */
export function checkInviteStatement(
  invite: InviteStatement,
  inviterSigningPublicKey: string,
  statement: SignedStatement,
  field = "statement",
): void {
  assertSigned(inviteStatementBytes(invite), statement, inviterSigningPublicKey, field, "The invite statement");
}

/** The MAC an invited user registers with: 32 bytes, and only with an invite token. What it vouches for, the inviter checks. */
export function checkInviteBinding(mac: string, withInvite: boolean): void {
  if (!withInvite) throw bindingWithoutInvite();
  if (Buffer.from(mac, "base64").length !== 32) throw badBindingTag();
}
