// A user's key log: every key bundle the account has had, each signed by the key it replaces.
// Design: docs/design/key-log.md
import { canonicalJson } from "../canonical";
import { fromBase64, utf8, type Bytes } from "../encoding";
import { bundleSelfSignatureVerifies, keyFingerprint } from "../crypto/keys";
import {
  checkAtAndSig,
  ED25519_SIG,
  exactKeys,
  fail,
  HEX64,
  int,
  linkSig,
  linkSigVerifies,
  sha256Hex,
  str,
  TIMESTAMP,
  UUID_LOWER,
} from "./links";
import type { CryptoKey } from "../crypto/primitives";

/** Prepended to an entry's canonical bytes before either signature: a key-log signature is never valid as anything else. */
export const KEY_LOG_CONTEXT = "vault-key-log/v1\n";
/** The `prev` of entry 1. */
export const KEY_LOG_GENESIS_PREV = "0".repeat(64);
/** The most entries a log holds: far above any real account (a rotation is rare), bounding what a client checks. */
export const MAX_KEY_VERSIONS = 100;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** One bundle of the log. Entry 1 has no `at`, `sig` or `selfSig`; every later entry has all three. */
export interface KeyLogEntry {
  userId: string;
  /** 1 for the registered keys; each rotation counts up by one (the key statement's version). */
  version: number;
  /** SHA-256 (hex) of the previous entry's canonical bytes (signatures included); 64 zeros at version 1. */
  prev: string;
  /** RSA-OAEP key, SPKI DER, base64. */
  publicKey: string;
  /** Ed25519 key, 32 raw bytes, base64. */
  signingPublicKey: string;
  /** The new Ed25519 key's signature over the RSA key's SPKI DER (the bundle's self-signature). */
  publicKeySignature: string;
  /** When the rotation was signed (ISO 8601 UTC with milliseconds): the signer's claim. */
  at?: string;
  /** Ed25519 by the previous entry's signing key over `KEY_LOG_CONTEXT` + the unsigned entry's canonical bytes. */
  sig?: string;
  /** Ed25519 by this entry's own signing key over the same bytes. */
  selfSig?: string;
}

export type UnsignedKeyLogEntry = Omit<KeyLogEntry, "sig" | "selfSig">;

/** An entry once its place and signatures checked out: its hash and key fingerprint (`keyFingerprint`). */
export interface VerifiedKeyEntry {
  entry: KeyLogEntry;
  hash: string;
  keys: string;
}

const GENESIS_FIELDS = ["userId", "version", "prev", "publicKey", "signingPublicKey", "publicKeySignature"];
const STEP_FIELDS = [...GENESIS_FIELDS, "at", "sig", "selfSig"];

/** What both signatures cover: the context string, then the entry without its signatures, canonically encoded. */
export function keyLogSigningBytes(entry: UnsignedKeyLogEntry | KeyLogEntry): Bytes {
  const { sig: _sig, selfSig: _selfSig, ...body } = entry as KeyLogEntry;
  return utf8(KEY_LOG_CONTEXT + canonicalJson(body));
}

/** The whole entry, signatures included, canonically encoded: what the next entry's `prev` hashes. */
export const keyLogEntryBytes = (entry: KeyLogEntry): Bytes => utf8(canonicalJson(entry));

export const keyLogEntryHash = (entry: KeyLogEntry): Promise<string> => sha256Hex(keyLogEntryBytes(entry));

/** Entry 1: the bundle an account registered with (no signatures: whoever trusts it pinned it). */
export function genesisEntry(
  userId: string,
  bundle: { publicKey: string; signingPublicKey: string; publicKeySignature: string },
): KeyLogEntry {
  return {
    userId,
    version: 1,
    prev: KEY_LOG_GENESIS_PREV,
    publicKey: bundle.publicKey,
    signingPublicKey: bundle.signingPublicKey,
    publicKeySignature: bundle.publicKeySignature,
  };
}

/** The next entry after `last`, signed by the key it replaces and by the new one. */
export async function signKeyLogStep(
  last: KeyLogEntry,
  next: { publicKey: string; signingPublicKey: string; publicKeySignature: string; at: string },
  previousSigningKey: CryptoKey,
  newSigningKey: CryptoKey,
): Promise<KeyLogEntry> {
  const unsigned: UnsignedKeyLogEntry = {
    userId: last.userId,
    version: last.version + 1,
    prev: await keyLogEntryHash(last),
    publicKey: next.publicKey,
    signingPublicKey: next.signingPublicKey,
    publicKeySignature: next.publicKeySignature,
    at: next.at,
  };
  const bytes = keyLogSigningBytes(unsigned);
  return { ...unsigned, sig: await linkSig(bytes, previousSigningKey), selfSig: await linkSig(bytes, newSigningKey) };
}

/** An entry as received, checked field by field (exactly its fields, each of its form); `RosterLinkError` naming the field. */
export function parseKeyLogEntry(raw: unknown): KeyLogEntry {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) fail("keyLogEntry", "a key log entry must be an object");
  const o = raw as Record<string, unknown>;
  const version = int(o, "version", 1);
  const fields = version === 1 ? GENESIS_FIELDS : STEP_FIELDS;
  exactKeys(o, fields, "");
  for (const f of fields) if (o[f] === undefined) fail(f, `a version ${version} entry needs ${f}`);
  const entry: KeyLogEntry = {
    userId: str(o, "userId", UUID_LOWER, "a lower-case UUID"),
    version,
    prev: str(o, "prev", HEX64, "64 lower-case hex digits"),
    publicKey: str(o, "publicKey", BASE64, "base64"),
    signingPublicKey: str(o, "signingPublicKey", BASE64, "base64"),
    publicKeySignature: str(o, "publicKeySignature", BASE64, "base64"),
  };
  // Canonical base64 of the sizes keys have: every client and the server read the same bytes from the same text.
  canonical(entry.publicKey, "publicKey", 1, 4096);
  canonical(entry.signingPublicKey, "signingPublicKey", 32, 32);
  canonical(entry.publicKeySignature, "publicKeySignature", 64, 64);
  if (version === 1) {
    if (entry.prev !== KEY_LOG_GENESIS_PREV) fail("prev", "the first entry's prev must be 64 zeros");
    return entry;
  }
  entry.at = str(o, "at", TIMESTAMP, "an ISO 8601 UTC timestamp with milliseconds");
  entry.sig = str(o, "sig", ED25519_SIG, "a base64 Ed25519 signature (64 bytes)");
  entry.selfSig = str(o, "selfSig", ED25519_SIG, "a base64 Ed25519 signature (64 bytes)");
  checkAtAndSig({ at: entry.at, sig: entry.sig });
  checkAtAndSig({ at: entry.at, sig: entry.selfSig });
  return entry;
}

function canonical(text: string, field: string, min: number, max: number): void {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(text);
  } catch {
    return fail(field, `${field} must be canonical base64`);
  }
  if (bytes.length < min || bytes.length > max)
    fail(field, min === max ? `${field} must be ${min} bytes` : `${field} must be ${min} to ${max} bytes`);
}

/**
 * Whether `entry` follows `last` (verified): the same user, the next version, `prev` its hash, a
 * self-signed bundle, keys never used before in the log (`seen`), and both signatures. Returns the
 * failing field and why, or null.
 */
export async function keyLogStepProblem(
  last: VerifiedKeyEntry,
  entry: KeyLogEntry,
  seen: ReadonlySet<string>,
): Promise<{ field: string; message: string } | null> {
  if (entry.userId !== last.entry.userId) return { field: "userId", message: `the entry is of user ${entry.userId}` };
  if (entry.version !== last.entry.version + 1)
    return { field: "version", message: `the next version is ${last.entry.version + 1}, not ${entry.version}` };
  if (entry.prev !== last.hash) return { field: "prev", message: `prev is not the hash of version ${last.entry.version}` };
  if (!(await bundleSelfSignatureVerifies(entry)))
    return { field: "publicKeySignature", message: "the new signing key did not sign the new RSA key" };
  if (seen.has(await keyFingerprint(entry))) return { field: "publicKey", message: "the keys were used before in this log" };
  const bytes = keyLogSigningBytes(entry);
  if (!(await linkSigVerifies(bytes, entry.sig!, fromBase64(last.entry.signingPublicKey))))
    return { field: "sig", message: `the step is not signed by the key of version ${last.entry.version}` };
  if (!(await linkSigVerifies(bytes, entry.selfSig!, fromBase64(entry.signingPublicKey))))
    return { field: "selfSig", message: "the step is not signed by its own new key" };
  return null;
}

/**
 * A whole log as a server serves it, checked from entry 1: each entry's form, its place, its
 * self-signed bundle, its signature by the key before it and by its own. Says nothing of whether
 * entry 1 (or any) is the user's: the caller anchors it to a key it trusts. Throws `KeyLogError`.
 */
export async function verifyKeyLog(userId: string, raw: unknown): Promise<VerifiedKeyEntry[]> {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_KEY_VERSIONS)
    throw new KeyLogError(`the key log of ${userId} is not a list of 1 to ${MAX_KEY_VERSIONS} entries`);
  const out: VerifiedKeyEntry[] = [];
  const seen = new Set<string>();
  for (const [index, item] of raw.entries()) {
    let entry: KeyLogEntry, keys: string;
    try {
      entry = parseKeyLogEntry(item);
      keys = await keyFingerprint(entry);
    } catch (err) {
      throw new KeyLogError(`entry ${index + 1} of the key log of ${userId} is invalid: ${(err as Error).message}`);
    }
    if (index === 0) {
      if (entry.userId !== userId || entry.version !== 1)
        throw new KeyLogError(
          `the key log of ${userId} does not start with its version 1 (it is ${entry.userId}'s version ${entry.version})`,
        );
      if (!(await bundleSelfSignatureVerifies(entry)))
        throw new KeyLogError(`the first keys in the log of ${userId} are not signed by their own signing key`);
    } else {
      const problem = await keyLogStepProblem(out[index - 1]!, entry, seen);
      if (problem) throw new KeyLogError(`entry ${index + 1} of the key log of ${userId} (${problem.field}): ${problem.message}`);
    }
    seen.add(keys);
    out.push({ entry, hash: await keyLogEntryHash(entry), keys });
  }
  return out;
}

/** A log that does not verify on its own: the caller reports it as `KEY_LOG_BROKEN`. */
export class KeyLogError extends Error {
  override readonly name = "KeyLogError";
}

/** The bundle of an entry, as key lookups give it. */
export const bundleOfEntry = (e: KeyLogEntry) => ({
  userId: e.userId,
  publicKey: e.publicKey,
  signingPublicKey: e.signingPublicKey,
  publicKeySignature: e.publicKeySignature,
});
