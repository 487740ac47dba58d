// Emergency access: a member (the grantor) lets another (the grantee) into the account after a wait
// the grantor can stop. Design: docs/design/emergency-access.md
//
// The grantor's device wraps the account's stretched key (what opens its sealed private keys) with
// RSA-OAEP-SHA256 to the grantee's public key, as the grantor's device has it pinned and verified,
// never as the server states it; and signs, with the account's Ed25519 key, what the grant is:
//   "vault-emergency-grant/v1\n" || canonicalJson(GrantStatement)
// The statement names both people by id and keys, the level and the wait (so neither the server nor
// the grantee can change them after the fact), the account state it was made under (the account's
// keys and the version of its signed KDF statement: a password change or key rotation since leaves
// the grant stale until the grantor's device makes it again), and the SHA-256 of the wrapped key.
import { canonicalJson } from "../canonical";
import { fromBase64, toHex, utf8, type Bytes } from "../encoding";
import { sha256 } from "../crypto/primitives";

export const GRANT_CONTEXT = "vault-emergency-grant/v1\n";

/** What the grantee may do once the wait is over: read the account's vaults, or take it over (a new master password, new keys). */
export const EMERGENCY_LEVELS = ["read", "takeover"] as const;
export type EmergencyLevel = (typeof EMERGENCY_LEVELS)[number];

/** The shortest and longest waits, in hours: an hour to 90 days (Bitwarden's longest). */
export const MIN_WAIT_HOURS = 1;
export const MAX_WAIT_HOURS = 90 * 24;

/** What the grantor signs. Fingerprints are `keyFingerprint` (protocol/crypto/keys.ts), hex. */
export interface GrantStatement {
  grantId: string;
  grantorId: string;
  granteeId: string;
  /** The grantee's keys the stretched key is wrapped to. */
  granteeKeys: string;
  level: EmergencyLevel;
  waitHours: number;
  /** The grantor's account keys when the grant was made. */
  keys: string;
  /** The version of the grantor's signed KDF statement when the grant was made (1: none signed yet). */
  kdfVersion: number;
  /** SHA-256 (hex) of the wrapped key's bytes. */
  wrapped: string;
}

export const grantBytes = (s: GrantStatement): Bytes => utf8(GRANT_CONTEXT + canonicalJson(s));

/** SHA-256 (hex) of a base64 value's bytes. */
export const wrappedHashOf = async (wrappedKey: string): Promise<string> => toHex(await sha256(fromBase64(wrappedKey)));

/** A grant's statement alone, from anything that carries its fields (a served grant, a form): nothing else is signed. */
export const grantStatement = (g: GrantStatement): GrantStatement => ({
  grantId: g.grantId,
  grantorId: g.grantorId,
  granteeId: g.granteeId,
  granteeKeys: g.granteeKeys,
  level: g.level,
  waitHours: g.waitHours,
  keys: g.keys,
  kdfVersion: g.kdfVersion,
  wrapped: g.wrapped,
});

/** The statement of a grant as it is stored and served: its fields, with the wrapped key's hash computed. */
export async function grantStatementOf(g: Omit<GrantStatement, "wrapped"> & { wrappedKey: string }): Promise<GrantStatement> {
  return grantStatement({ ...g, wrapped: await wrappedHashOf(g.wrappedKey) });
}
