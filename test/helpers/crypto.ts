/**
 * What a real client does, with node:crypto: key bundles, RSA-OAEP-SHA256 and AES-256-KW wraps,
 * Ed25519 signatures, AES-256-GCM items. Nothing here is mocked.
 */
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  hkdfSync,
  pbkdf2,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  sign,
  verify,
  constants,
  type KeyObject,
} from "node:crypto";
import { promisify } from "node:util";

const generateKeyPairAsync = promisify(generateKeyPair);
const pbkdf2Async = promisify(pbkdf2);
const KW_IV = Buffer.from("A6A6A6A6A6A6A6A6", "hex");
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export const b64 = (b: Buffer | Uint8Array) => Buffer.from(b).toString("base64");
export const unb64 = (s: string) => Buffer.from(s, "base64");

export interface UserKeys {
  rsaPublic: KeyObject;
  rsaPrivate: KeyObject;
  edPublic: KeyObject;
  edPrivate: KeyObject;
  /** The key that wraps personal vault keys (AES-256-KW) and the private keys (AES-GCM). */
  stretchedKey: Buffer;
  authHash: Buffer;
  kdf: { algorithm: "pbkdf2-sha256"; salt: string; iterations: number };
}

export interface RegistrationBundle {
  authHash: string;
  kdf: UserKeys["kdf"];
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
}

/** The master key stretched into an auth hash and a stretched key, as a client does after its KDF. */
function splitMasterKey(masterKey: Buffer): { authHash: Buffer; stretchedKey: Buffer } {
  return {
    authHash: Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "auth", 32)),
    stretchedKey: Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "enc", 32)),
  };
}

/** PBKDF2-SHA256 with the contract's floor of 600,000 iterations: the real, slow client KDF. */
export async function deriveFromPassword(password: string, kdf: { salt: string; iterations: number }) {
  return splitMasterKey(await pbkdf2Async(password, unb64(kdf.salt), kdf.iterations, 32, "sha256"));
}

export async function newUserKeys(opts: { rsaBits?: number; password?: string } = {}): Promise<UserKeys> {
  const kdf = { algorithm: "pbkdf2-sha256" as const, salt: b64(randomBytes(16)), iterations: 600_000 };
  const [rsa, ed] = await Promise.all([
    generateKeyPairAsync("rsa", { modulusLength: opts.rsaBits ?? 2048, publicExponent: 65537 }),
    generateKeyPairAsync("ed25519"),
  ]);
  // Deriving with the full KDF costs ~100 ms a user; tests that do not check it use a random master key.
  const { authHash, stretchedKey } = opts.password ? await deriveFromPassword(opts.password, kdf) : splitMasterKey(randomBytes(32));
  return {
    rsaPublic: rsa.publicKey,
    rsaPrivate: rsa.privateKey,
    edPublic: ed.publicKey,
    edPrivate: ed.privateKey,
    stretchedKey,
    authHash,
    kdf,
  };
}

export function spkiDer(key: KeyObject): Buffer {
  return key.export({ type: "spki", format: "der" });
}

export function rawEd25519(key: KeyObject): Buffer {
  return spkiDer(key).subarray(ED25519_SPKI_PREFIX.length);
}

export function ed25519FromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" });
}

export function encryptGcm(key: Buffer, plaintext: Buffer, aad?: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  if (aad) cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ct, cipher.getAuthTag()]);
}

export function decryptGcm(key: Buffer, blob: Buffer, aad?: Buffer): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, blob.subarray(0, 12));
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(blob.subarray(blob.length - 16));
  return Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]);
}

export function registrationBundle(keys: UserKeys): RegistrationBundle {
  const der = spkiDer(keys.rsaPublic);
  return {
    authHash: b64(keys.authHash),
    kdf: keys.kdf,
    publicKey: b64(der),
    signingPublicKey: b64(rawEd25519(keys.edPublic)),
    publicKeySignature: b64(sign(null, der, keys.edPrivate)),
    encryptedPrivateKey: b64(encryptGcm(keys.stretchedKey, keys.rsaPrivate.export({ type: "pkcs8", format: "der" }))),
    encryptedSigningPrivateKey: b64(encryptGcm(keys.stretchedKey, keys.edPrivate.export({ type: "pkcs8", format: "der" }))),
  };
}

/** A client recovering its private keys from the login response. */
export function openPrivateKeys(stretchedKey: Buffer, login: { encryptedPrivateKey: string; encryptedSigningPrivateKey: string }) {
  return {
    rsaPrivate: createPrivateKey({ key: decryptGcm(stretchedKey, unb64(login.encryptedPrivateKey)), format: "der", type: "pkcs8" }),
    edPrivate: createPrivateKey({ key: decryptGcm(stretchedKey, unb64(login.encryptedSigningPrivateKey)), format: "der", type: "pkcs8" }),
  };
}

export const newVaultKey = () => randomBytes(32);

export function wrapShared(vaultKey: Buffer, recipientPublicKeyB64: string): Buffer {
  const key = createPublicKey({ key: unb64(recipientPublicKeyB64), format: "der", type: "spki" });
  return publicEncrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" }, vaultKey);
}

export function unwrapShared(wrapped: Buffer, rsaPrivate: KeyObject): Buffer {
  return privateDecrypt({ key: rsaPrivate, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" }, wrapped);
}

export function wrapPersonal(vaultKey: Buffer, stretchedKey: Buffer): Buffer {
  const cipher = createCipheriv("id-aes256-wrap", stretchedKey, KW_IV);
  return Buffer.concat([cipher.update(vaultKey), cipher.final()]);
}

export function unwrapPersonal(wrapped: Buffer, stretchedKey: Buffer): Buffer {
  const decipher = createDecipheriv("id-aes256-wrap", stretchedKey, KW_IV);
  return Buffer.concat([decipher.update(wrapped), decipher.final()]);
}

export function signWrap(wrapped: Buffer, edPrivate: KeyObject): Buffer {
  return sign(null, wrapped, edPrivate);
}

export function wrapVerifies(wrapped: Buffer, signature: Buffer, signingPublicKeyB64: string): boolean {
  return verify(null, wrapped, ed25519FromRaw(unb64(signingPublicKeyB64)), signature);
}

/** An item as a client stores it: AES-256-GCM under the vault key, bound to its vault and item ids. */
export function encryptItem(vaultKey: Buffer, vaultId: string, itemId: string, data: string, name: string) {
  const aad = Buffer.from(`${vaultId}/${itemId}`);
  return {
    itemId,
    encryptedData: b64(encryptGcm(vaultKey, Buffer.from(data), aad)),
    encryptedName: b64(encryptGcm(vaultKey, Buffer.from(name), aad)),
  };
}

export function decryptItem(vaultKey: Buffer, item: { vaultId: string; itemId: string; encryptedData: string; encryptedName: string }) {
  const aad = Buffer.from(`${item.vaultId}/${item.itemId}`);
  return {
    data: decryptGcm(vaultKey, unb64(item.encryptedData), aad).toString(),
    name: decryptGcm(vaultKey, unb64(item.encryptedName), aad).toString(),
  };
}
