/**
 * Passkeys as other managers write them, to and from the vault's own (sdk/passkeys/passkey.ts):
 *
 * - Bitwarden's `login.fido2Credentials` (JSON export): `credentialId` a GUID (its 16 bytes) or
 *   `b64.` and base64url for any other id; `keyValue` PKCS #8 in base64url; `counter` and
 *   `discoverable` as text. Bitwarden holds only ECDSA P-256 keys, always backup-eligible and
 *   backed up (BE and BS set): a passkey of another kind is listed, not written.
 * - KeePassXC's entry attributes `KPEX_PASSKEY_*`: the credential id and user handle in base64url,
 *   the private key as PKCS #8 PEM (its algorithm read from the key), the relying party, the user
 *   name, and since 2.7.12 the BE and BS flags (`KPEX_PASSKEY_FLAG_BE`/`_BS`, "1" or "0"; absent,
 *   they were false, as KeePassXC made them before). KeePassXC keeps no counter or creation time:
 *   the counter starts at 0 and the entry's creation time stands in.
 *
 * Each reader answers a passkey or the reason it cannot carry one, for the import's report.
 */
import { fromBase64, fromBase64Url, toBase64, toBase64Url } from "../../protocol/encoding";
import { checkedPasskey, type Passkey, type PasskeyAlgorithm } from "../passkeys/passkey";

type Raw = { readonly [key: string]: unknown };
const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Bitwarden's credential id text as the id's bytes, base64url. */
function bitwardenCredentialId(text: string): string {
  if (text.startsWith("b64.")) return toBase64Url(fromBase64Url(text.slice(4)));
  if (!GUID.test(text)) throw new Error(`the credential id "${text}" is neither a GUID nor b64.`);
  return toBase64Url(
    new Uint8Array(
      text
        .replace(/-/g, "")
        .match(/../g)!
        .map((h) => parseInt(h, 16)),
    ),
  );
}

/** The id's bytes as Bitwarden writes them: a GUID for 16 bytes, as its clients make ids, else `b64.`. */
function bitwardenIdText(credentialId: string): string {
  const bytes = fromBase64Url(credentialId);
  if (bytes.length !== 16) return `b64.${credentialId}`;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** One of Bitwarden's `fido2Credentials`, or why it cannot be carried. */
export function passkeyFromBitwarden(raw: Raw): Passkey | string {
  if (str(raw.keyAlgorithm) !== "ECDSA" || str(raw.keyCurve) !== "P-256")
    return `a ${str(raw.keyAlgorithm) || "?"} ${str(raw.keyCurve)} key, which passkeys here do not hold`;
  try {
    return checkedPasskey({
      credentialId: bitwardenCredentialId(str(raw.credentialId)),
      rpId: str(raw.rpId),
      rpName: str(raw.rpName),
      userHandle: str(raw.userHandle),
      userName: str(raw.userName),
      userDisplayName: str(raw.userDisplayName),
      algorithm: "ES256",
      privateKey: str(raw.keyValue),
      counter: Number(str(raw.counter) || "0"),
      discoverable: str(raw.discoverable) === "true",
      backupEligible: true,
      backupState: true,
      createdAt: str(raw.creationDate),
    });
  } catch (err) {
    return (err as Error).message;
  }
}

/** A passkey as Bitwarden's JSON holds it, or why Bitwarden cannot hold it. */
export function passkeyToBitwarden(p: Passkey): Record<string, string> | string {
  if (p.algorithm !== "ES256") return `Bitwarden holds only ES256 passkeys, not ${p.algorithm}`;
  if (!p.backupEligible) return "Bitwarden signs every passkey as backup-eligible, and a site may refuse this one's changed BE flag";
  return {
    credentialId: bitwardenIdText(p.credentialId),
    keyType: "public-key",
    keyAlgorithm: "ECDSA",
    keyCurve: "P-256",
    keyValue: p.privateKey,
    rpId: p.rpId,
    userHandle: p.userHandle,
    userName: p.userName,
    counter: String(p.counter),
    rpName: p.rpName,
    userDisplayName: p.userDisplayName,
    discoverable: String(p.discoverable),
    creationDate: p.createdAt,
  };
}

// The algorithm identifiers a PKCS #8 key names (DER, tag and length included).
const OID_EC_P256 = "06072a8648ce3d020106082a8648ce3d030107"; // id-ecPublicKey, then prime256v1
const OID_ED25519 = "06032b6570";

/** A PKCS #8 key's algorithm, read from its DER; undefined for one passkeys here do not hold (RSA, another curve). */
function pkcs8Algorithm(der: Uint8Array): PasskeyAlgorithm | undefined {
  const hex = [...der.subarray(0, 40)].map((b) => b.toString(16).padStart(2, "0")).join("");
  if (hex.includes(OID_EC_P256)) return "ES256";
  if (hex.includes(OID_ED25519)) return "EdDSA";
  return undefined;
}

const PEM = /^-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----\s*$/;

export const KEEPASSXC_PASSKEY = {
  credentialId: "KPEX_PASSKEY_CREDENTIAL_ID",
  privateKey: "KPEX_PASSKEY_PRIVATE_KEY_PEM",
  rpId: "KPEX_PASSKEY_RELYING_PARTY",
  userName: "KPEX_PASSKEY_USERNAME",
  userHandle: "KPEX_PASSKEY_USER_HANDLE",
  backupEligible: "KPEX_PASSKEY_FLAG_BE",
  backupState: "KPEX_PASSKEY_FLAG_BS",
} as const;

/** Whether an entry's attributes hold a passkey (its private key). */
export const hasKeePassXCPasskey = (get: (key: string) => string): boolean => get(KEEPASSXC_PASSKEY.privateKey) !== "";

/** The passkey of a KeePassXC entry (`get` reads its attributes), or why it cannot be carried. */
export function passkeyFromKeePassXC(get: (key: string) => string, createdAt: Date | undefined): Passkey | string {
  const pem = PEM.exec(get(KEEPASSXC_PASSKEY.privateKey).replace(/\\n/g, "\n"));
  if (!pem) return "its private key is not PKCS #8 PEM";
  let der: Uint8Array;
  try {
    der = fromBase64(pem[1]!.replace(/\s+/g, ""));
  } catch {
    return "its private key is not PKCS #8 PEM";
  }
  const algorithm = pkcs8Algorithm(der);
  if (!algorithm) return "its key is RSA or another kind passkeys here do not hold (ES256 and EdDSA)";
  const flag = (key: string) => get(key) === "1";
  try {
    return checkedPasskey({
      credentialId: get(KEEPASSXC_PASSKEY.credentialId),
      rpId: get(KEEPASSXC_PASSKEY.rpId),
      rpName: get(KEEPASSXC_PASSKEY.rpId),
      userHandle: get(KEEPASSXC_PASSKEY.userHandle),
      userName: get(KEEPASSXC_PASSKEY.userName),
      userDisplayName: get(KEEPASSXC_PASSKEY.userName),
      algorithm,
      privateKey: toBase64Url(der),
      counter: 0,
      discoverable: true,
      backupEligible: flag(KEEPASSXC_PASSKEY.backupEligible),
      backupState: flag(KEEPASSXC_PASSKEY.backupState),
      createdAt: (createdAt ?? new Date(0)).toISOString(),
    });
  } catch (err) {
    return (err as Error).message;
  }
}

/** The attributes KeePassXC reads a passkey from (the flags always written, so 2.7.12 and later sign as it was made). */
export function passkeyToKeePassXC(p: Passkey): Record<string, string> {
  const body = toBase64(fromBase64Url(p.privateKey))
    .replace(/(.{64})/g, "$1\n")
    .replace(/\n$/, "");
  return {
    [KEEPASSXC_PASSKEY.credentialId]: p.credentialId,
    [KEEPASSXC_PASSKEY.privateKey]: `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`,
    [KEEPASSXC_PASSKEY.rpId]: p.rpId,
    [KEEPASSXC_PASSKEY.userName]: p.userName,
    [KEEPASSXC_PASSKEY.userHandle]: p.userHandle,
    [KEEPASSXC_PASSKEY.backupEligible]: p.backupEligible ? "1" : "0",
    [KEEPASSXC_PASSKEY.backupState]: p.backupState ? "1" : "0",
  };
}
