/**
 * A passkey as an item holds it, sealed in the item's ciphertext like its password: the WebAuthn
 * credential's id, the relying party it belongs to, the account at that site, the private key, and
 * the signature counter. It rides on a login (`ItemContent.passkeys`), as Bitwarden's
 * `fido2Credentials` and KeePassXC's `KPEX_PASSKEY_*` attributes do, so one site's password,
 * one-time code and passkey stay in one item, and a team shares it as it shares any item.
 */
import { fromBase64Url, toBase64Url } from "../../protocol/encoding";

/** The two signature algorithms a passkey here can hold, by their COSE names: ES256 (P-256) and EdDSA (Ed25519). */
export const PASSKEY_ALGORITHMS = ["ES256", "EdDSA"] as const;
export type PasskeyAlgorithm = (typeof PASSKEY_ALGORITHMS)[number];

/** COSE algorithm identifiers (RFC 9053), as `pubKeyCredParams` name them. */
export const COSE_ALGORITHM: Record<PasskeyAlgorithm, number> = { ES256: -7, EdDSA: -8 };

export interface Passkey {
  /** The credential id, base64url (no padding). */
  credentialId: string;
  /** The relying party id: the site's domain the credential is scoped to (`github.com`). */
  rpId: string;
  /** The relying party's name as the site gave it (shown only). */
  rpName: string;
  /** The site's id for the account (`user.id`), base64url; empty when the source had none. */
  userHandle: string;
  /** The account at the site (`user.name`). */
  userName: string;
  /** `user.displayName` as the site gave it (shown only). */
  userDisplayName: string;
  algorithm: PasskeyAlgorithm;
  /** The private key: PKCS #8, DER, base64url (Bitwarden's `keyValue`). */
  privateKey: string;
  /** The signature counter last used; 0 for a passkey that keeps none. */
  counter: number;
  /** Whether the site may find it without naming it (a "resident key"): sign-in without typing a username. */
  discoverable: boolean;
  /**
   * The BE and BS flags it signs with. A site may refuse a credential whose BE flag changes, so they
   * stay as the passkey was made: true for one made here (synced), false for one KeePassXC made
   * before 2.7.12 (`KPEX_PASSKEY_FLAG_BE` absent).
   */
  backupEligible: boolean;
  backupState: boolean;
  /** When it was made, ISO 8601. */
  createdAt: string;
}

/** At most this many passkeys on one item: a login is one account, and a site rarely gives an account more. */
export const MAX_PASSKEYS = 20;

const isBase64Url = (text: string, allowEmpty = false): boolean => {
  if (text === "") return allowEmpty;
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return false;
  try {
    return toBase64Url(fromBase64Url(text)) === text;
  } catch {
    return false;
  }
};

/** A passkey as sealed data holds it, checked field by field; throws (the item's reader names the item) when it is not one. */
export function checkedPasskey(value: unknown): Passkey {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("a passkey is not an object");
  const v = value as Record<string, unknown>;
  const text = (key: keyof Passkey, max = 1024): string => {
    const x = v[key];
    if (typeof x !== "string" || x.length > max) throw new Error(`a passkey's ${key} is not text of at most ${max} characters`);
    return x;
  };
  const passkey: Passkey = {
    credentialId: text("credentialId"),
    rpId: text("rpId", 253),
    rpName: text("rpName"),
    userHandle: text("userHandle"),
    userName: text("userName"),
    userDisplayName: text("userDisplayName"),
    algorithm: v.algorithm as PasskeyAlgorithm,
    privateKey: text("privateKey", 4096),
    counter: v.counter as number,
    discoverable: v.discoverable as boolean,
    backupEligible: v.backupEligible as boolean,
    backupState: v.backupState as boolean,
    createdAt: text("createdAt", 64),
  };
  if (!isBase64Url(passkey.credentialId)) throw new Error("a passkey's credentialId is not base64url");
  if (!isBase64Url(passkey.userHandle, true)) throw new Error("a passkey's userHandle is not base64url");
  if (!isBase64Url(passkey.privateKey)) throw new Error("a passkey's privateKey is not base64url");
  if (passkey.rpId === "") throw new Error("a passkey has no rpId");
  if (!PASSKEY_ALGORITHMS.includes(passkey.algorithm))
    throw new Error(`a passkey's algorithm ${String(v.algorithm)} is not one of ES256, EdDSA`);
  if (!Number.isSafeInteger(passkey.counter) || passkey.counter < 0 || passkey.counter > 0xffffffff)
    throw new Error("a passkey's counter is not a 32-bit count");
  for (const flag of ["discoverable", "backupEligible", "backupState"] as const)
    if (typeof passkey[flag] !== "boolean") throw new Error(`a passkey's ${flag} is not true or false`);
  if (passkey.backupState && !passkey.backupEligible) throw new Error("a passkey backed up (BS) that is not backup-eligible (BE)");
  return passkey;
}

/** An item's passkeys as sealed data holds them; throws past MAX_PASSKEYS or on two with one credential id. */
export function checkedPasskeys(value: unknown): Passkey[] {
  if (!Array.isArray(value)) throw new Error("passkeys is not a list");
  if (value.length > MAX_PASSKEYS) throw new Error(`more than ${MAX_PASSKEYS} passkeys on one item`);
  const out = value.map(checkedPasskey);
  const ids = new Set(out.map((p) => `${p.rpId} ${p.credentialId}`));
  if (ids.size !== out.length) throw new Error("two passkeys with one credential id");
  return out;
}
