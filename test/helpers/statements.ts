/**
 * Signed statements made the way an independent client would: node:crypto's Ed25519 over the
 * bytes protocol/formats/statements.ts defines (the SDK signs with WebCrypto).
 */
import { sign, type KeyObject } from "node:crypto";
import {
  inviteStatementBytes,
  kdfStatementBytes,
  keyStatementBytes,
  type InviteStatement,
  type SignedStatement,
} from "../../protocol/formats/statements";
import type { KdfParams } from "../../protocol/crypto/primitives";
import { fingerprintOf, type PublicKeys } from "./roster";

export interface StatementSigner {
  userId: string;
  email: string;
  keys: { edPrivate: KeyObject };
  bundle: PublicKeys & { kdf: KdfParams };
}

const signed = (bytes: Uint8Array, key: KeyObject): SignedStatement => ({
  version: 1,
  signature: sign(null, bytes, key).toString("base64"),
});

/** The user's key statement: their id, email and key fingerprint. */
export const keyStatementOf = (u: StatementSigner): SignedStatement =>
  signed(keyStatementBytes({ userId: u.userId, email: u.email, keys: fingerprintOf(u.bundle), version: 1 }), u.keys.edPrivate);

/** The user's KDF statement: their id, email and registered KDF parameters. */
export const kdfStatementOf = (u: StatementSigner): SignedStatement =>
  signed(kdfStatementBytes({ userId: u.userId, email: u.email, kdf: u.bundle.kdf, version: 1 }), u.keys.edPrivate);

/** An inviter's statement of an invite. */
export const inviteStatementOf = (inviter: { keys: { edPrivate: KeyObject } }, invite: InviteStatement): SignedStatement =>
  signed(inviteStatementBytes(invite), inviter.keys.edPrivate);
