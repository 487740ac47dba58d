/**
 * The user's key bundle and the wraps made with it: the server checks sizes and signatures,
 * never holds a private key.
 */
import {
  badEd25519Length,
  badKdfParameter,
  badKeySignature,
  badPrivateBlob,
  badSalt,
  kdfParameterMissing,
  notCanonicalSpki,
  notEd25519Key,
  notSpkiKey,
  rsaKeyOutOfRange,
} from "./refusals";
import { badWrapLength, badWrapSignature } from "../vaults/refusals";
import { createPrivateKey, createPublicKey, verify, type KeyObject } from "node:crypto";
import type { Kdf, VaultType } from "../types";
import { KDF_CAPS } from "../../../protocol/crypto/kdf";

const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const MAX_PRIVATE_BLOB = 16 * 1024;
/** AES-256-KW (RFC 3394) of a 32-byte key is the key plus one 8-byte block. */
export const PERSONAL_WRAP_BYTES = 40;

// Parsed keys by their base64 text: keys never change, and parsing costs more than verifying.
const keyCache = new Map<string, KeyObject>();
function cachedKey(cacheKey: string, parse: () => KeyObject): KeyObject {
  let key = keyCache.get(cacheKey);
  if (!key) {
    key = parse();
    if (keyCache.size >= 10_000) keyCache.delete(keyCache.keys().next().value!);
    keyCache.set(cacheKey, key);
  }
  return key;
}

function signingKey(signingPublicKeyB64: string): KeyObject {
  return cachedKey(`ed:${signingPublicKeyB64}`, () =>
    createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(signingPublicKeyB64, "base64")]), format: "der", type: "spki" }),
  );
}

// Ed25519's field and curve constant (RFC 8032, 5.1): p = 2^255 - 19, d = -121665/121666 mod p.
const P = (1n << 255n) - 19n;
const powMod = (base: bigint, exp: bigint): bigint => {
  let result = 1n;
  for (let b = base % P, e = exp; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) result = (result * b) % P;
  return result;
};
const D = (((-121665n * powMod(121666n, P - 2n)) % P) + P) % P;

/**
 * Whether 32 bytes decode to a point of the curve (RFC 8032, 5.1.3): y below p, and x^2 =
 * (y^2 - 1) / (d y^2 + 1) a square, with no sign bit on x = 0. Node accepts any 32 bytes as a key.
 */
export function isEd25519Point(raw: Buffer): boolean {
  if (raw.length !== 32) return false;
  const bytes = Buffer.from(raw);
  const xSign = bytes[31]! >> 7;
  bytes[31] = bytes[31]! & 0x7f;
  const y = BigInt(`0x${bytes.reverse().toString("hex")}`);
  if (y >= P) return false;
  const y2 = (y * y) % P;
  const x2 = (((y2 - 1n + P) % P) * powMod((D * y2 + 1n) % P, P - 2n)) % P;
  if (x2 === 0n) return xSign === 0;
  return powMod(x2, (P - 1n) / 2n) === 1n;
}

/** Modulus length in bytes of an RSA public key (SPKI DER, base64) that passed `checkKeyBundle`. */
export function rsaModulusBytes(publicKeyB64: string): number {
  const key = cachedKey(`rsa:${publicKeyB64}`, () =>
    createPublicKey({ key: Buffer.from(publicKeyB64, "base64"), format: "der", type: "spki" }),
  );
  return Math.ceil(key.asymmetricKeyDetails!.modulusLength! / 8);
}

/** Ed25519 verification of `signature` over exactly `data` by the holder of `signingPublicKeyB64`. */
/** An Ed25519 private key from its 32-byte seed (RFC 8410's PKCS #8 form around it). */
export function ed25519KeyFromSeed(seed: Buffer): KeyObject {
  return createPrivateKey({
    key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]),
    format: "der",
    type: "pkcs8",
  });
}

export function signatureVerifies(data: Buffer, signature: Buffer, signingPublicKeyB64: string): boolean {
  if (signature.length !== 64) return false;
  return verify(null, data, signingKey(signingPublicKeyB64), signature);
}

export interface KeyBundle {
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
}

/** Registration's key checks: RSA 2048..4096 with e=65537 in SPKI DER, a raw Ed25519 key, a self-signature that verifies. */
export function checkKeyBundle(bundle: KeyBundle): void {
  const der = Buffer.from(bundle.publicKey, "base64");
  let rsa: KeyObject;
  try {
    rsa = createPublicKey({ key: der, format: "der", type: "spki" });
  } catch {
    throw notSpkiKey();
  }
  const details = rsa.asymmetricKeyDetails;
  if (
    rsa.asymmetricKeyType !== "rsa" ||
    !details?.modulusLength ||
    details.modulusLength < 2048 ||
    details.modulusLength > 4096 ||
    details.publicExponent !== 65537n
  ) {
    throw rsaKeyOutOfRange();
  }
  if (!rsa.export({ format: "der", type: "spki" }).equals(der)) {
    throw notCanonicalSpki();
  }
  if (Buffer.from(bundle.signingPublicKey, "base64").length !== 32) {
    throw badEd25519Length();
  }
  if (!isEd25519Point(Buffer.from(bundle.signingPublicKey, "base64"))) {
    throw notEd25519Key();
  }
  if (!signatureVerifies(der, Buffer.from(bundle.publicKeySignature, "base64"), bundle.signingPublicKey)) {
    throw badKeySignature();
  }
  for (const field of ["encryptedPrivateKey", "encryptedSigningPrivateKey"] as const) {
    const size = Buffer.from(bundle[field], "base64").length;
    if (size === 0 || size > MAX_PRIVATE_BLOB) throw badPrivateBlob(field);
  }
}

/** KDF parameters as a request gives them: every algorithm's fields optional but the common ones. */
export interface KdfParams {
  algorithm: Kdf["algorithm"];
  salt: string;
  iterations: number;
  memoryKiB?: number;
  parallelism?: number;
}

/** Only the fields of the chosen algorithm are kept; argon2id needs its two. */
export function normalizeKdf(k: KdfParams): Kdf {
  if (k.algorithm === "pbkdf2-sha256") return { algorithm: k.algorithm, salt: k.salt, iterations: k.iterations };
  if (k.memoryKiB === undefined) throw kdfParameterMissing("memoryKiB");
  if (k.parallelism === undefined) throw kdfParameterMissing("parallelism");
  return { algorithm: "argon2id", salt: k.salt, iterations: k.iterations, memoryKiB: k.memoryKiB, parallelism: k.parallelism };
}

/**
 * No KDF downgrade: parameters below the contract's floor are refused. Nor beyond the caps every
 * client of ours derives within (protocol/crypto/kdf.ts): an account no client would open.
 */
export function checkKdf(kdf: Kdf): void {
  const salt = Buffer.from(kdf.salt, "base64");
  const caps = KDF_CAPS;
  if (salt.length < caps.saltBytes.min || salt.length > caps.saltBytes.max) throw badSalt(caps.saltBytes.min, caps.saltBytes.max);
  if (kdf.algorithm === "argon2id") {
    if (kdf.iterations < 2 || kdf.iterations > caps.argon2id.iterations)
      throw badKdfParameter("argon2id iterations", 2, caps.argon2id.iterations, "iterations");
    if (kdf.memoryKiB < 19456 || kdf.memoryKiB > caps.argon2id.memoryKiB)
      throw badKdfParameter("argon2id memoryKiB", 19456, caps.argon2id.memoryKiB, "memoryKiB");
    if (kdf.parallelism < 1 || kdf.parallelism > caps.argon2id.parallelism)
      throw badKdfParameter("argon2id parallelism", 1, caps.argon2id.parallelism, "parallelism");
  } else if (kdf.iterations < 600_000 || kdf.iterations > caps["pbkdf2-sha256"].iterations) {
    throw badKdfParameter("pbkdf2-sha256 iterations", 600000, caps["pbkdf2-sha256"].iterations, "iterations");
  }
}

/** What a wrap is checked against: the vault's type, the holder's RSA key and the sender's signing key. */
export interface WrapCheck {
  vaultType: VaultType;
  encryptedVaultKey: string;
  wrapSignature: string;
  holderPublicKey: string;
  senderSigningPublicKey: string;
}

/**
 * A wrapped vault key: exactly 40 bytes for a personal vault (AES-256-KW), exactly the holder's
 * RSA modulus length for a shared one (RSA-OAEP), signed by the sender over exactly those bytes.
 */
export function checkWrap(w: WrapCheck): void {
  const wrapped = Buffer.from(w.encryptedVaultKey, "base64");
  const expected = w.vaultType === "personal" ? PERSONAL_WRAP_BYTES : rsaModulusBytes(w.holderPublicKey);
  if (wrapped.length !== expected) {
    throw badWrapLength(expected, w.vaultType);
  }
  if (!signatureVerifies(wrapped, Buffer.from(w.wrapSignature, "base64"), w.senderSigningPublicKey)) {
    throw badWrapSignature();
  }
}
