/**
 * A user's keys: the master key from the password, the account's key bundle (RSA-OAEP for
 * receiving vault keys, Ed25519 for signing wraps), and the checks a client makes on anyone's
 * bundle before trusting it.
 */
import { concatBytes, equalBytes, fromBase64, toBase64, toHex, type Bytes } from "../encoding";
import { SecurityError, UnlockError } from "../errors";
import { checkKdf, DEFAULT_ARGON2ID } from "./kdf";
import {
  deriveMasterKey,
  ed25519Sign,
  ed25519Verify,
  gcmDecrypt,
  gcmEncrypt,
  generateEd25519KeyPair,
  generateRsaKeyPair,
  importEd25519PrivateKey,
  importRsaPrivateKey,
  randomBytes,
  rsaOaepUnwrap,
  rsaOaepWrap,
  sha256,
  splitMasterKey,
  type Argon2idParams,
  type CryptoKey,
  type KdfParams,
  type Pbkdf2Params,
} from "./primitives";

export { DEFAULT_ARGON2ID, DEFAULT_PBKDF2 } from "./kdf";

export type KdfChoice = Omit<Argon2idParams, "salt"> | Omit<Pbkdf2Params, "salt">;

/** New KDF parameters with a fresh 16-byte salt. */
export function newKdfParams(choice: KdfChoice = DEFAULT_ARGON2ID): KdfParams {
  return { ...choice, salt: toBase64(randomBytes(16)) } as KdfParams;
}

/** A user's public keys as the server hands them out (`GET /users/:id/keys`, org member lists). */
export interface PublicKeyBundle {
  userId: string;
  email?: string;
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
}

/** The body of `POST /auth/register`, less the email and the invite. */
export interface RegistrationKeys {
  authHash: string;
  kdf: KdfParams;
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
}

/** The unlocked account: what signs, unwraps and wraps. Lives in memory only. */
export interface AccountKeys {
  stretchedKey: Bytes;
  rsaPrivateKey: CryptoKey;
  signingPrivateKey: CryptoKey;
  publicKeyDer: Bytes;
  signingPublicKeyRaw: Bytes;
}

/** How the master key is derived: `deriveMasterKey` here, or the same code elsewhere (a browser's Web Worker). */
export type DeriveMasterKey = (password: string, kdf: KdfParams) => Promise<Bytes>;

/**
 * The auth hash (sent to the server) and the stretched key (never sent) from the password. The
 * parameters are checked against the floor and caps (kdf.ts) here, whatever `derive` is, before
 * it runs.
 */
export async function deriveAccountSecrets(
  password: string,
  kdf: KdfParams,
  derive: DeriveMasterKey = deriveMasterKey,
): Promise<{ authHash: Bytes; stretchedKey: Bytes }> {
  checkKdf(kdf);
  return splitMasterKey(await derive(password, kdf));
}

/** Everything registration needs, generated here: the server receives public keys and ciphertext. */
export async function createAccountKeys(
  password: string,
  opts: { kdf?: KdfParams; rsaBits?: number; derive?: DeriveMasterKey } = {},
): Promise<{ registration: RegistrationKeys; keys: AccountKeys }> {
  const kdf = opts.kdf ?? newKdfParams();
  const [{ authHash, stretchedKey }, rsa, ed] = await Promise.all([
    deriveAccountSecrets(password, kdf, opts.derive),
    generateRsaKeyPair(opts.rsaBits),
    generateEd25519KeyPair(),
  ]);
  const registration: RegistrationKeys = {
    authHash: toBase64(authHash),
    kdf,
    publicKey: toBase64(rsa.publicKeyDer),
    signingPublicKey: toBase64(ed.publicKeyRaw),
    publicKeySignature: toBase64(await ed25519Sign(ed.privateKey, rsa.publicKeyDer)),
    encryptedPrivateKey: toBase64(await gcmEncrypt(stretchedKey, rsa.privateKeyPkcs8)),
    encryptedSigningPrivateKey: toBase64(await gcmEncrypt(stretchedKey, ed.privateKeyPkcs8)),
  };
  const keys: AccountKeys = {
    stretchedKey,
    rsaPrivateKey: await importRsaPrivateKey(rsa.privateKeyPkcs8),
    signingPrivateKey: await importEd25519PrivateKey(ed.privateKeyPkcs8),
    publicKeyDer: rsa.publicKeyDer,
    signingPublicKeyRaw: ed.publicKeyRaw,
  };
  return { registration, keys };
}

export interface StoredAccountKeys {
  publicKey: string;
  signingPublicKey: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
}

/**
 * Opens the private keys that login returned. A wrong stretched key fails the AES-GCM tag
 * (`UnlockError`). Private keys that do not match the public keys the server holds for us are a
 * substitution (`SecurityError`): the client would otherwise sign with one key while others
 * verify with another.
 */
export async function openAccountKeys(stretchedKey: Bytes, stored: StoredAccountKeys): Promise<AccountKeys> {
  let rsaPkcs8: Bytes, edPkcs8: Bytes;
  try {
    rsaPkcs8 = await gcmDecrypt(stretchedKey, fromBase64(stored.encryptedPrivateKey));
    edPkcs8 = await gcmDecrypt(stretchedKey, fromBase64(stored.encryptedSigningPrivateKey));
  } catch {
    throw new UnlockError("wrong password: the private keys do not open");
  }
  const keys: AccountKeys = {
    stretchedKey,
    rsaPrivateKey: await importRsaPrivateKey(rsaPkcs8),
    signingPrivateKey: await importEd25519PrivateKey(edPkcs8),
    publicKeyDer: fromBase64(stored.publicKey),
    signingPublicKeyRaw: fromBase64(stored.signingPublicKey),
  };
  const probe = randomBytes(32);
  const signed = await ed25519Verify(keys.signingPublicKeyRaw, probe, await ed25519Sign(keys.signingPrivateKey, probe));
  let unwrapped = false;
  try {
    unwrapped = equalBytes(await rsaOaepUnwrap(keys.rsaPrivateKey, await rsaOaepWrap(keys.publicKeyDer, probe)), probe);
  } catch {
    unwrapped = false;
  }
  if (!signed || !unwrapped)
    throw new SecurityError("INCONSISTENT", "the server's copy of your public keys does not match your private keys");
  return keys;
}

/**
 * The private keys sealed under a new stretched key (a master password change): opened with the
 * current one (`UnlockError` when it is not), sealed again with the new, never leaving memory.
 */
export async function resealAccountKeys(
  currentStretchedKey: Bytes,
  newStretchedKey: Bytes,
  stored: Pick<StoredAccountKeys, "encryptedPrivateKey" | "encryptedSigningPrivateKey">,
): Promise<Pick<StoredAccountKeys, "encryptedPrivateKey" | "encryptedSigningPrivateKey">> {
  let rsaPkcs8: Bytes, edPkcs8: Bytes;
  try {
    rsaPkcs8 = await gcmDecrypt(currentStretchedKey, fromBase64(stored.encryptedPrivateKey));
    edPkcs8 = await gcmDecrypt(currentStretchedKey, fromBase64(stored.encryptedSigningPrivateKey));
  } catch {
    throw new UnlockError("wrong password: the private keys do not open");
  }
  return {
    encryptedPrivateKey: toBase64(await gcmEncrypt(newStretchedKey, rsaPkcs8)),
    encryptedSigningPrivateKey: toBase64(await gcmEncrypt(newStretchedKey, edPkcs8)),
  };
}

/** The bundle's self-signature: its Ed25519 key signed its RSA key (SPKI DER bytes). */
export async function bundleSelfSignatureVerifies(bundle: PublicKeyBundle): Promise<boolean> {
  try {
    return await ed25519Verify(fromBase64(bundle.signingPublicKey), fromBase64(bundle.publicKey), fromBase64(bundle.publicKeySignature));
  } catch {
    return false;
  }
}

/**
 * SHA-256 over both public keys (the RSA key's SPKI DER, then the 32 raw Ed25519 bytes), in
 * lower-case hex: how a signed roster names a member's keys.
 */
export async function keyFingerprint(bundle: Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">): Promise<string> {
  return toHex(await sha256(concatBytes(fromBase64(bundle.publicKey), fromBase64(bundle.signingPublicKey))));
}

/**
 * The same fingerprint in groups of four hex digits: what two people compare out of band to be
 * sure the server did not hand either of them a substitute.
 */
export async function bundleFingerprint(bundle: Pick<PublicKeyBundle, "publicKey" | "signingPublicKey">): Promise<string> {
  return groupedFingerprint(await keyFingerprint(bundle));
}

export const groupedFingerprint = (hex: string): string => hex.match(/.{4}/g)!.join(" ");
