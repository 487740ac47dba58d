// Passkey unlock: what a sign-in passkey with the WebAuthn PRF extension keeps on the server, so that
// signing in with it opens the account without the master password. Design: docs/design/passkey-unlock.md
//
// Three wraps per passkey, all AES-256-GCM with the context, the account, the credential (and for the
// stretched key the account version) bound in as associated data:
//   prfWrappedKey       the passkey's credential key K, under a key derived from the PRF output;
//   wrappedStretchedKey the account's stretched key, under K (opens everything the password opens);
//   keptWrappedKey      K again, under a key derived from the stretched key, so that a password
//                       change or key rotation re-wraps without the authenticator at hand.
// The server holds all three and can open none: it never sees the PRF output or the stretched key.
import { fromBase64, toBase64, utf8, type Bytes } from "../encoding";
import { SecurityError } from "../errors";
import { gcmDecrypt, gcmEncrypt, hkdfSha256, randomBytes, sha256 } from "../crypto/primitives";

export const PASSKEY_UNLOCK_CONTEXT = "vault-passkey-unlock/v1";

/** The PRF input every client asks the authenticator for: fixed, so the server has no say in it. */
export const prfSalt = (): Promise<Bytes> => sha256(utf8(`${PASSKEY_UNLOCK_CONTEXT}\nprf-salt`));

/** The three wraps, base64, as the server stores and answers them. */
export interface PasskeyUnlockWraps {
  prfWrappedKey: string;
  wrappedStretchedKey: string;
  keptWrappedKey: string;
}

/** What the wraps are bound to: the account, the passkey (its credential id, base64url) and, for the stretched key, the account version. */
export interface PasskeyUnlockBinding {
  userId: string;
  credentialId: string;
  accountVersion: number;
}

type Part = "credential-key" | "kept-key" | "stretched-key";

/** The associated data of one wrap: the context, the part, the account and the passkey; the stretched key's also the account version. */
export function unlockAad(part: Part, b: PasskeyUnlockBinding): Bytes {
  const tail = part === "stretched-key" ? `\n${b.accountVersion}` : "";
  return utf8(`${PASSKEY_UNLOCK_CONTEXT}\n${part}\n${b.userId}\n${b.credentialId}${tail}`);
}

const prfKey = (prf: Bytes) => hkdfSha256(prf, new Uint8Array(0), utf8(`${PASSKEY_UNLOCK_CONTEXT}\nprf-key`), 32);
const keepKey = (stretchedKey: Bytes) => hkdfSha256(stretchedKey, new Uint8Array(0), utf8(`${PASSKEY_UNLOCK_CONTEXT}\nkeep-key`), 32);

/** New wraps for a passkey whose authenticator answered `prf`: a fresh credential key, wrapped each way. */
export async function newPasskeyUnlock(prf: Bytes, stretchedKey: Bytes, b: PasskeyUnlockBinding): Promise<PasskeyUnlockWraps> {
  if (prf.length < 32) throw new SecurityError("PASSKEY_UNLOCK_MISMATCH", "the authenticator's PRF answer is shorter than 32 bytes");
  const credentialKey = randomBytes(32);
  return {
    prfWrappedKey: toBase64(await gcmEncrypt(await prfKey(prf), credentialKey, unlockAad("credential-key", b))),
    ...(await wrapWithCredentialKey(credentialKey, stretchedKey, b)),
  };
}

/** The wraps a password change or key rotation makes again: the credential key opened with the old stretched key, re-wrapped for the new state. */
export async function rewrapPasskeyUnlock(
  keptWrappedKey: string,
  oldStretchedKey: Bytes,
  newStretchedKey: Bytes,
  b: PasskeyUnlockBinding,
): Promise<Pick<PasskeyUnlockWraps, "keptWrappedKey" | "wrappedStretchedKey">> {
  const credentialKey = await open(await keepKey(oldStretchedKey), keptWrappedKey, unlockAad("kept-key", b), "kept");
  return wrapWithCredentialKey(credentialKey, newStretchedKey, b);
}

/**
 * The stretched key, opened with the authenticator's PRF answer. A wrap made for another passkey,
 * account or account version, or by anyone without the PRF output, fails: `PASSKEY_UNLOCK_MISMATCH`.
 */
export async function openPasskeyUnlock(
  prf: Bytes,
  wraps: Pick<PasskeyUnlockWraps, "prfWrappedKey" | "wrappedStretchedKey">,
  b: PasskeyUnlockBinding,
): Promise<Bytes> {
  const credentialKey = await open(await prfKey(prf), wraps.prfWrappedKey, unlockAad("credential-key", b), "credential");
  return open(credentialKey, wraps.wrappedStretchedKey, unlockAad("stretched-key", b), "stretched");
}

async function wrapWithCredentialKey(credentialKey: Bytes, stretchedKey: Bytes, b: PasskeyUnlockBinding) {
  return {
    wrappedStretchedKey: toBase64(await gcmEncrypt(credentialKey, stretchedKey, unlockAad("stretched-key", b))),
    keptWrappedKey: toBase64(await gcmEncrypt(await keepKey(stretchedKey), credentialKey, unlockAad("kept-key", b))),
  };
}

async function open(key: Bytes, blob: string, aad: Bytes, which: "credential" | "stretched" | "kept"): Promise<Bytes> {
  try {
    return await gcmDecrypt(key, fromBase64(blob), aad);
  } catch {
    const what = {
      credential: "the passkey's key does not open with what the authenticator answered",
      stretched: "the account key kept for this passkey does not open with the passkey's key",
      kept: "this passkey's key, as the server keeps it, does not open with your account's key",
    }[which];
    throw new SecurityError("PASSKEY_UNLOCK_MISMATCH", `${what}: it was not made for this passkey, account and account version`);
  }
}
