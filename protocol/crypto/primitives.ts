/**
 * Every cryptographic primitive the client uses, on WebCrypto only (Node 22+ and current
 * browsers), plus Argon2id from hash-wasm (WebAssembly). Nothing else in the SDK touches keys
 * directly, so this file is what an auditor reads.
 */
import { concatBytes, fromBase64, utf8, type Bytes } from "../encoding";
import { checkKdf, type KdfParams } from "./kdf";

export type { Argon2idParams, KdfParams, Pbkdf2Params } from "./kdf";

const subtle = globalThis.crypto.subtle;

/** WebCrypto's key type, named so that it type-checks against both the DOM and Node's typings. */
export type CryptoKey = Awaited<ReturnType<typeof subtle.importKey>>;

export const AES_KEY_BYTES = 32;
const GCM_IV_BYTES = 12;
const GCM_TAG_BYTES = 16;

export function randomBytes(length: number): Bytes {
  return globalThis.crypto.getRandomValues(new Uint8Array(length));
}

// ---- Key derivation -------------------------------------------------------------------------

/**
 * The master key: 32 bytes from the password under the registered KDF parameters. The password
 * is NFKC-normalized first, so the same password typed on two keyboards gives the same key.
 * Parameters below the floor or beyond the caps (kdf.ts) are refused before anything is derived.
 */
export async function deriveMasterKey(password: string, kdf: KdfParams): Promise<Bytes> {
  checkKdf(kdf);
  const salt = fromBase64(kdf.salt);
  if (kdf.algorithm === "argon2id") {
    // Loaded when first needed: a page that derives in a Web Worker never loads it on the page itself.
    const { argon2id } = await import("./argon2.js");
    const out = await argon2id({
      password: utf8(password.normalize("NFKC")),
      salt,
      iterations: kdf.iterations,
      memorySize: kdf.memoryKiB,
      parallelism: kdf.parallelism,
      hashLength: 32,
      outputType: "binary",
    });
    return new Uint8Array(out);
  }
  return pbkdf2Sha256(utf8(password.normalize("NFKC")), salt, kdf.iterations, 32);
}

export async function pbkdf2Sha256(password: Bytes, salt: Bytes, iterations: number, length: number): Promise<Bytes> {
  const base = await subtle.importKey("raw", password, "PBKDF2", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, base, length * 8));
}

export async function hkdfSha256(ikm: Bytes, salt: Bytes, info: Bytes, length: number): Promise<Bytes> {
  const base = await subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, base, length * 8));
}

/**
 * The master key never leaves the client. Two independent keys come from it: the auth hash,
 * which the server sees (and stores only hashed), and the stretched key, which it never sees.
 */
export async function splitMasterKey(masterKey: Bytes): Promise<{ authHash: Bytes; stretchedKey: Bytes }> {
  const none = new Uint8Array(0);
  const [authHash, stretchedKey] = await Promise.all([
    hkdfSha256(masterKey, none, utf8("auth"), 32),
    hkdfSha256(masterKey, none, utf8("enc"), 32),
  ]);
  return { authHash, stretchedKey };
}

export async function hmacSha256(key: Bytes, data: Bytes): Promise<Bytes> {
  const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", k, data));
}

/** Checks an HMAC-SHA256 tag in constant time (WebCrypto's verify); false for a tag of the wrong length. */
export async function hmacSha256Verifies(key: Bytes, data: Bytes, tag: Bytes): Promise<boolean> {
  if (tag.length !== 32) return false;
  const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return subtle.verify("HMAC", k, tag, data);
}

export async function sha256(data: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.digest("SHA-256", data));
}

// ---- AES-256-KW (RFC 3394): personal vault keys -----------------------------------------------

export async function aesKwWrap(kek: Bytes, key: Bytes): Promise<Bytes> {
  const wrapping = await subtle.importKey("raw", kek, "AES-KW", false, ["wrapKey"]);
  const toWrap = await subtle.importKey("raw", key, "AES-GCM", true, ["encrypt"]);
  return new Uint8Array(await subtle.wrapKey("raw", toWrap, wrapping, "AES-KW"));
}

export async function aesKwUnwrap(kek: Bytes, wrapped: Bytes): Promise<Bytes> {
  const wrapping = await subtle.importKey("raw", kek, "AES-KW", false, ["unwrapKey"]);
  const key = await subtle.unwrapKey("raw", wrapped, wrapping, "AES-KW", "AES-GCM", true, ["encrypt"]);
  return new Uint8Array(await subtle.exportKey("raw", key));
}

// ---- RSA-OAEP-SHA256: shared vault keys --------------------------------------------------------

const RSA_OAEP = { name: "RSA-OAEP", hash: "SHA-256" } as const;

export interface RsaKeyPair {
  /** SPKI DER: what the server stores as `publicKey`. */
  publicKeyDer: Bytes;
  /** PKCS#8 DER, to be encrypted under the stretched key before it leaves the client. */
  privateKeyPkcs8: Bytes;
  privateKey: CryptoKey;
}

export async function generateRsaKeyPair(modulusBits = 3072): Promise<RsaKeyPair> {
  const pair = await subtle.generateKey({ ...RSA_OAEP, modulusLength: modulusBits, publicExponent: new Uint8Array([1, 0, 1]) }, true, [
    "encrypt",
    "decrypt",
  ]);
  const [publicKeyDer, privateKeyPkcs8] = await Promise.all([
    subtle.exportKey("spki", pair.publicKey),
    subtle.exportKey("pkcs8", pair.privateKey),
  ]);
  return { publicKeyDer: new Uint8Array(publicKeyDer), privateKeyPkcs8: new Uint8Array(privateKeyPkcs8), privateKey: pair.privateKey };
}

export async function importRsaPrivateKey(pkcs8: Bytes): Promise<CryptoKey> {
  return subtle.importKey("pkcs8", pkcs8, RSA_OAEP, false, ["decrypt"]);
}

export async function importRsaPublicKey(spkiDer: Bytes): Promise<CryptoKey> {
  return subtle.importKey("spki", spkiDer, RSA_OAEP, false, ["encrypt"]);
}

/** The modulus length in bytes: the exact size of every RSA-OAEP wrap for this key. */
export async function rsaModulusBytes(spkiDer: Bytes): Promise<number> {
  const key = await importRsaPublicKey(spkiDer);
  return (key.algorithm as unknown as { modulusLength: number }).modulusLength / 8;
}

export async function rsaOaepWrap(recipientSpkiDer: Bytes, key: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.encrypt(RSA_OAEP, await importRsaPublicKey(recipientSpkiDer), key));
}

export async function rsaOaepUnwrap(privateKey: CryptoKey, wrapped: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.decrypt(RSA_OAEP, privateKey, wrapped));
}

// ---- Ed25519: signatures over wraps and over the RSA public key ------------------------------

export interface Ed25519KeyPair {
  /** The 32 raw bytes: what the server stores as `signingPublicKey`. */
  publicKeyRaw: Bytes;
  privateKeyPkcs8: Bytes;
  privateKey: CryptoKey;
}

export async function generateEd25519KeyPair(): Promise<Ed25519KeyPair> {
  const pair = (await subtle.generateKey("Ed25519", true, ["sign", "verify"])) as { publicKey: CryptoKey; privateKey: CryptoKey };
  const [raw, pkcs8] = await Promise.all([subtle.exportKey("raw", pair.publicKey), subtle.exportKey("pkcs8", pair.privateKey)]);
  return { publicKeyRaw: new Uint8Array(raw), privateKeyPkcs8: new Uint8Array(pkcs8), privateKey: pair.privateKey };
}

export async function importEd25519PrivateKey(pkcs8: Bytes): Promise<CryptoKey> {
  return subtle.importKey("pkcs8", pkcs8, "Ed25519", false, ["sign"]);
}

export async function ed25519Sign(privateKey: CryptoKey, message: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle.sign("Ed25519", privateKey, message));
}

/** False for a signature that does not verify, and for a key or signature of the wrong shape. */
export async function ed25519Verify(publicKeyRaw: Bytes, message: Bytes, signature: Bytes): Promise<boolean> {
  if (publicKeyRaw.length !== 32 || signature.length !== 64) return false;
  try {
    const key = await subtle.importKey("raw", publicKeyRaw, "Ed25519", false, ["verify"]);
    return await subtle.verify("Ed25519", key, signature, message);
  } catch {
    return false;
  }
}

// ---- AES-256-GCM: items and private keys -----------------------------------------------------

/** `iv (12) || ciphertext || tag (16)`, the IV random per message. */
export async function gcmEncrypt(key: Bytes, plaintext: Bytes, associatedData?: Bytes): Promise<Bytes> {
  const iv = randomBytes(GCM_IV_BYTES);
  const k = await subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
  return concatBytes(iv, new Uint8Array(await subtle.encrypt(gcmParams(iv, associatedData), k, plaintext)));
}

/** Throws when the key, the associated data or a single bit of the blob is wrong. */
export async function gcmDecrypt(key: Bytes, blob: Bytes, associatedData?: Bytes): Promise<Bytes> {
  if (blob.length < GCM_IV_BYTES + GCM_TAG_BYTES) throw new Error("ciphertext too short");
  const iv = blob.slice(0, GCM_IV_BYTES);
  const k = await subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
  return new Uint8Array(await subtle.decrypt(gcmParams(iv, associatedData), k, blob.slice(GCM_IV_BYTES)));
}

function gcmParams(iv: Bytes, associatedData?: Bytes) {
  return associatedData ? { name: "AES-GCM", iv, additionalData: associatedData } : { name: "AES-GCM", iv };
}
