// k-of-n account recovery: the signed bytes, the trustee's short code, the recovery copy's encryption.
// Design: docs/design/recovery-format.md
import { canonicalJson } from "../canonical";
import { fromBase64, toBase64, toHex, utf8, type Bytes } from "../encoding";
import { combine } from "shamir-secret-sharing";
import { gcmDecrypt, gcmEncrypt, hkdfSha256, sha256 } from "../crypto/primitives";

export const ENROLMENT_CONTEXT = "vault-recovery-enrolment/v1\n";
export const ENROLMENT_CONTEXT_V2 = "vault-recovery-enrolment/v2\n";
export const APPROVAL_CONTEXT = "vault-recovery-approval/v1\n";
export const SESSION_CONTEXT = "vault-recovery-session/v1\n";
const CODE_CONTEXT = "vault-recovery-code/v3";
const CONFIRM_CONTEXT = "vault-recovery-confirm/v1";
const COPY_INFO = "vault-recovery-key/v1";
const COPY_AAD = "vault-recovery-copy/v1";

/** A trustee of an enrolment, as the user's client saw them: their id, the fingerprint of the keys it wrapped to, and their share's hash. */
export interface EnrolmentTrustee {
  trusteeId: string;
  /** `keyFingerprint` (protocol/crypto/keys.ts) of the trustee's keys the share was wrapped to, hex. */
  keys: string;
  /** SHA-256 of the wrapped share's bytes, hex. */
  share: string;
}

export interface EnrolmentStatement {
  enrolmentId: string;
  userId: string;
  threshold: number;
  /** SHA-256 of the recovery copy's bytes, hex. */
  copy: string;
  /** Sorted by trusteeId. */
  trustees: EnrolmentTrustee[];
}

/**
 * What a versioned enrolment (`vault-recovery-enrolment/v2`) adds, each signed: the enrolment's
 * number in the account's sequence, and the account state it was made under. A trustee's client
 * refuses one older than an enrolment, or an account state, it has seen (`RECOVERY_SUPERSEDED`).
 */
export interface EnrolmentVersion {
  /** 1, 2, … per account: each enrolment one past the one it replaces. */
  version: number;
  /** `keyFingerprint` (hex) of the account's own keys when it enrolled: a key rotation since makes it stale. */
  keys: string;
  /** The version of the account's signed KDF statement when it enrolled: a password change since makes it stale. */
  kdfVersion: number;
}

export type VersionedEnrolmentStatement = EnrolmentStatement & EnrolmentVersion;

/** Versions past this are refused (they order enrolments within one KDF statement version: `enrolmentOrder`). */
export const MAX_ENROLMENT_VERSION = 999_999;

/**
 * One number that orders enrolments: by the KDF statement version they were made under, then by
 * their own version (a password change starts a new run, and stales everything before it).
 */
export const enrolmentOrder = (kdfVersion: number, version: number): number => kdfVersion * (MAX_ENROLMENT_VERSION + 1) + version;

/** An enrolment signed in the versioned form. */
export const isVersioned = (s: EnrolmentStatement | VersionedEnrolmentStatement): s is VersionedEnrolmentStatement =>
  (s as Partial<EnrolmentVersion>).version !== undefined;

export interface ApprovalStatement {
  requestId: string;
  userId: string;
  enrolmentId: string;
  trusteeId: string;
  /** SHA-256 of the request's one-time public key (SPKI DER), hex. */
  requestKey: string;
  /** SHA-256 of the share re-wrapped to that key, hex. */
  share: string;
}

export const hashHex = async (bytes: Bytes): Promise<string> => toHex(await sha256(bytes));
export const hashOfBase64 = (b64: string): Promise<string> => hashHex(fromBase64(b64));

/**
 * The bytes an enrolment's signature is over: `vault-recovery-enrolment/v2` when it carries a
 * version (with the account state it was made under), else the unversioned
 * `vault-recovery-enrolment/v1` of enrolments made before versions (still verified: a trustee marks
 * them, and refuses one once it has seen a versioned enrolment of the account).
 */
export function enrolmentBytes(s: EnrolmentStatement | VersionedEnrolmentStatement): Bytes {
  const trustees = [...s.trustees].sort((a, b) => (a.trusteeId < b.trusteeId ? -1 : a.trusteeId > b.trusteeId ? 1 : 0));
  const base = { enrolmentId: s.enrolmentId, userId: s.userId, threshold: s.threshold, copy: s.copy, trustees };
  if (!isVersioned(s)) return utf8(ENROLMENT_CONTEXT + canonicalJson(base));
  return utf8(ENROLMENT_CONTEXT_V2 + canonicalJson({ ...base, version: s.version, keys: s.keys, kdfVersion: s.kdfVersion }));
}

export const approvalBytes = (s: ApprovalStatement): Bytes => utf8(APPROVAL_CONTEXT + canonicalJson(s));

/** What the recovering device signs with the account's recovered signing key to be let in. */
export const sessionProofBytes = (s: { requestId: string; userId: string }): Bytes => utf8(SESSION_CONTEXT + canonicalJson(s));

/**
 * Crockford's base32: no I, L, O or U, so nothing reads as another; 32 letters, 5 bits each. Every
 * code a person reads or types in this service is written in it (the recovery request's codes here,
 * a login's recovery codes in lib/domain/accounts/second-factors.ts) and read back by `normalizeRecoveryCode`.
 */
export const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** 80 bits of SHA-256 over `parts` (joined by NUL after `context`), as 16 letters of Crockford's base32 in groups of four. */
async function shortCode(context: string, ...parts: string[]): Promise<string> {
  const digest = await sha256(utf8([context, ...parts].join("\0")));
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of digest.subarray(0, 10)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out.match(/.{4}/g)!.join("-");
}

/**
 * The code the user's new device shows, and each trustee's client computes for the request it was
 * given, before it re-wraps a share: over the device's one-time key, which the device made before
 * the server answered, and the account's normalized email (so one key cannot stand for two
 * accounts' requests). A server that swapped the key would need another key with the same 80 bits
 * (a second preimage: nothing the server chooses, not even the request id, goes in).
 */
export const recoveryCode = (requestPublicKey: string, email: string): Promise<string> => shortCode(CODE_CONTEXT, requestPublicKey, email);

/**
 * The code a trustee reads back to the user after approving: over the one-time key and the user's
 * keys as the trustee has them pinned (`keyFingerprint`, hex). The new device computes it over the
 * keys it recovered; only if they are the account's real keys (as its peers know them) do the two
 * match, so a server cannot pass off keys of its own as the recovered account.
 */
export const confirmationCode = (requestPublicKey: string, accountKeys: string): Promise<string> =>
  shortCode(CONFIRM_CONTEXT, requestPublicKey, accountKeys);

/** A code as a person types it back: case, spaces and dashes do not matter, nor I or L for 1 and O for 0. */
export const normalizeRecoveryCode = (code: string): string =>
  code.toUpperCase().replace(/[\s-]/g, "").replace(/[IL]/g, "1").replace(/O/g, "0");

async function copyKey(secret: Bytes, enrolmentId: string): Promise<Bytes> {
  return hkdfSha256(secret, utf8(enrolmentId), utf8(COPY_INFO), 32);
}

const copyAad = (userId: string, enrolmentId: string): Bytes => utf8(`${COPY_AAD}\0${userId}\0${enrolmentId}`);

/** The recovery copy: the account's stretched key, AES-256-GCM under a key derived (HKDF-SHA256) from the recovery secret. */
export async function sealRecoveryCopy(secret: Bytes, userId: string, enrolmentId: string, stretchedKey: Bytes): Promise<string> {
  return toBase64(await gcmEncrypt(await copyKey(secret, enrolmentId), stretchedKey, copyAad(userId, enrolmentId)));
}

/** The stretched key back; throws when the secret is not the one it was sealed under (fewer than k right shares). */
export async function openRecoveryCopy(secret: Bytes, userId: string, enrolmentId: string, copy: string): Promise<Bytes> {
  return gcmDecrypt(await copyKey(secret, enrolmentId), fromBase64(copy), copyAad(userId, enrolmentId));
}

/** The statement an enrolment signs, from what is stored: the copy's and each share's hash (and its version, when it has one). */
export async function enrolmentStatementOf(e: {
  enrolmentId: string;
  userId: string;
  threshold: number;
  copy: string;
  shares: ReadonlyArray<{ trusteeId: string; encryptedShare: string; trusteeKeys: string }>;
  version?: number;
  keys?: string;
  kdfVersion?: number;
}): Promise<EnrolmentStatement | VersionedEnrolmentStatement> {
  const base: EnrolmentStatement = {
    enrolmentId: e.enrolmentId,
    userId: e.userId,
    threshold: e.threshold,
    copy: await hashOfBase64(e.copy),
    trustees: await Promise.all(
      e.shares.map(async (s) => ({ trusteeId: s.trusteeId, keys: s.trusteeKeys, share: await hashOfBase64(s.encryptedShare) })),
    ),
  };
  if (e.version === undefined) return base;
  // A version without the account state it binds is signed as such (and fails against what the user signed).
  return { ...base, version: e.version, keys: e.keys ?? "", kdfVersion: e.kdfVersion ?? 0 };
}

/** Subsets of `k` of `items` (at most C(10,5) = 252 for the largest enrolment). */
function* subsets<T>(items: readonly T[], k: number, from = 0): Generator<T[]> {
  if (k === 0) return yield [];
  for (let i = from; i <= items.length - k; i++) for (const rest of subsets(items, k - 1, i + 1)) yield [items[i]!, ...rest];
}

/**
 * The stretched key from the first k of `shares` that open the copy (shares that are not the
 * trustees' are outvoted, never trusted: the copy's AES-GCM tag decides), or null when no k do.
 */
export async function openWithShares(
  shares: Bytes[],
  threshold: number,
  userId: string,
  enrolmentId: string,
  copy: string,
): Promise<Bytes | null> {
  if (shares.length < threshold) return null;
  for (const subset of subsets(shares, threshold)) {
    try {
      return await openRecoveryCopy(new Uint8Array(await combine(subset)), userId, enrolmentId, copy);
    } catch {
      // Another subset.
    }
  }
  return null;
}
