// Signed statements and the invite binding: what a client signs so the server cannot re-pair ids, keys and emails.
// Design: docs/design/signed-statements.md
import { canonicalJson } from "../canonical";
import { fromBase64, fromBase64Url, fromHex, toBase64, toBase64Url, toHex, utf8, type Bytes } from "../encoding";
import { kdfFields } from "../crypto/kdf";
import {
  ed25519Sign,
  ed25519Verify,
  hkdfSha256,
  hmacSha256,
  hmacSha256Verifies,
  type CryptoKey,
  type KdfParams,
} from "../crypto/primitives";

export const KEY_STATEMENT_CONTEXT = "vault-key-statement/v1\n";
export const KDF_STATEMENT_CONTEXT = "vault-kdf-statement/v1\n";
export const INVITE_STATEMENT_CONTEXT = "vault-invite-statement/v1\n";
/** HKDF info of the key that MACs an invitee's key statement under an invite link's binding secret. */
export const INVITE_BINDING_INFO = "vault-invite-binding/v1";

/** A statement as the API carries it: the signed values are the holder's own fields, only these travel. */
export interface SignedStatement {
  version: number;
  /** Ed25519, base64 (64 bytes). */
  signature: string;
}

/** Who a key bundle belongs to, in the user's own words: their id, their normalized email, the fingerprint of both keys. */
export interface KeyStatement {
  userId: string;
  email: string;
  /** `keyFingerprint`: SHA-256 (hex) over the RSA key's SPKI DER, then the 32 raw Ed25519 bytes. */
  keys: string;
  /** 1 for the keys an account registered with; each signed key change counts up. */
  version: number;
}

/** The KDF parameters and salt an account derives with, in the account's own words. */
export interface KdfStatement {
  userId: string;
  email: string;
  kdf: KdfParams;
  /** 1 at registration; each signed change of parameters counts up, so an old statement cannot be replayed. */
  version: number;
}

/** An invite, as its inviter made it. */
export interface InviteStatement {
  inviteId: string;
  orgId: string;
  orgName: string;
  email: string;
  role: "admin" | "member";
  expiresAt: string;
  inviterId: string;
}

const bytesOf = (context: string, value: object): Bytes => utf8(context + canonicalJson(value));

export const keyStatementBytes = (s: KeyStatement): Bytes =>
  bytesOf(KEY_STATEMENT_CONTEXT, { userId: s.userId, email: s.email, keys: s.keys, version: s.version });

export const kdfStatementBytes = (s: KdfStatement): Bytes =>
  bytesOf(KDF_STATEMENT_CONTEXT, { userId: s.userId, email: s.email, kdf: kdfFields(s.kdf), version: s.version });

export const inviteStatementBytes = (s: InviteStatement): Bytes =>
  bytesOf(INVITE_STATEMENT_CONTEXT, {
    inviteId: s.inviteId,
    orgId: s.orgId,
    orgName: s.orgName,
    email: s.email,
    role: s.role,
    expiresAt: s.expiresAt,
    inviterId: s.inviterId,
  });

export async function signStatement(bytes: Bytes, signingPrivateKey: CryptoKey): Promise<string> {
  return toBase64(await ed25519Sign(signingPrivateKey, bytes));
}

/** False for a signature that does not verify, or is not base64 of 64 bytes. */
export async function statementVerifies(bytes: Bytes, signingPublicKey: string, signature: string): Promise<boolean> {
  try {
    return await ed25519Verify(fromBase64(signingPublicKey), bytes, fromBase64(signature));
  } catch {
    return false;
  }
}

// ---- The invite binding -------------------------------------------------------------------------

/** 32 random bytes the inviter's client puts in the invite link (never sent to the server). */
export const INVITE_SECRET_BYTES = 32;

async function bindingKey(secret: Bytes): Promise<Bytes> {
  return hkdfSha256(secret, new Uint8Array(0), utf8(INVITE_BINDING_INFO), 32);
}

/**
 * The invitee's proof, made at registration: HMAC-SHA256, under a key derived from the link's
 * binding secret, of their key statement's signed bytes. Only someone who had the link can make
 * it; the inviter, who made the secret, checks it before trusting the invitee's keys.
 */
export async function inviteBindingMac(secret: Bytes, statement: KeyStatement): Promise<string> {
  return toBase64(await hmacSha256(await bindingKey(secret), keyStatementBytes(statement)));
}

export async function inviteBindingVerifies(secret: Bytes, statement: KeyStatement, mac: string): Promise<boolean> {
  let tag: Bytes;
  try {
    tag = fromBase64(mac);
  } catch {
    return false;
  }
  return hmacSha256Verifies(await bindingKey(secret), keyStatementBytes(statement), tag);
}

// ---- Invite codes: what an invite link carries in its fragment -------------------------------------

/**
 * `<token>.<secret>.<inviter key>.<invite id>`: the server's one-time token, the binding secret,
 * the inviter's key fingerprint and the invite's id, the last three base64url (32, 32 and 16
 * bytes). A link is `<origin>/#/invite/<code>`; the fragment never reaches a server. A bare token
 * (an invite made without this client) is a code too, with none of the others.
 */
export interface InviteCode {
  token: string;
  secret?: Bytes;
  /** The inviter's key fingerprint (hex), as `keyFingerprint` gives it. */
  inviterKey?: string;
  /** The invite the inviter made and signed (a lower-case UUID): the statement must be this invite's. */
  inviteId?: string;
}

export function formatInviteCode(code: Required<InviteCode>): string {
  const id = fromHex(code.inviteId.replace(/-/g, ""));
  return `${code.token}.${toBase64Url(code.secret)}.${toBase64Url(fromHex(code.inviterKey))}.${toBase64Url(id)}`;
}

/** A code, or a whole link holding one (`.../#/invite/<code>`); null for text that is neither. */
export function parseInviteCode(text: string): InviteCode | null {
  let code: string;
  try {
    code = decodeURIComponent(text.trim().replace(/^.*#\/invite\//, ""));
  } catch {
    return null;
  }
  const parts = code.split(".");
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(parts[0] ?? "")) return null;
  if (parts.length === 1) return { token: parts[0]! };
  if (parts.length !== 4) return null;
  try {
    const secret = fromBase64Url(parts[1]!);
    const key = fromBase64Url(parts[2]!);
    const id = toHex(fromBase64Url(parts[3]!));
    if (secret.length !== INVITE_SECRET_BYTES || key.length !== 32 || id.length !== 32) return null;
    const inviteId = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
    return { token: parts[0]!, secret, inviterKey: toHex(key), inviteId };
  } catch {
    return null;
  }
}
