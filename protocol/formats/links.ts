/**
 * What every signed link shares, roster links (protocol/formats/roster.ts) and item links (protocol/formats/item-log.ts):
 * the refusal that names the field at fault, the checks of a field's form, the signature over a
 * link's signing bytes, and the audit head a signer may add (`AuditClaim`). Pure: WebCrypto only.
 */
import { CANONICAL_UUID } from "../ids";
import { fromBase64, toBase64, toHex, type Bytes } from "../encoding";
import { ed25519Sign, ed25519Verify, sha256, type CryptoKey } from "../crypto/primitives";

/** A link (of a roster or an item log, protocol/formats/item-log.ts) that breaks the format or the rules; `field` is the link's field at fault. */
export class RosterLinkError extends Error {
  override readonly name = "RosterLinkError";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export const UUID_LOWER = CANONICAL_UUID;
export const HEX64 = /^[0-9a-f]{64}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const ED25519_SIG = /^[A-Za-z0-9+/]{86}==$/;

export function fail(field: string, message: string): never {
  throw new RosterLinkError(field, message);
}

export function str(o: Record<string, unknown>, field: string, pattern: RegExp, what: string): string {
  const v = o[field];
  if (typeof v !== "string" || !pattern.test(v)) fail(field, `${field} must be ${what}`);
  return v;
}

export function int(o: Record<string, unknown>, field: string, min: number): number {
  const v = o[field];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) fail(field, `${field} must be an integer of at least ${min}`);
  return v;
}

export function oneOf<T extends string>(o: Record<string, unknown>, field: string, values: readonly string[]): T {
  const v = o[field];
  if (typeof v !== "string" || !values.includes(v)) fail(field, `${field} must be one of ${values.join(", ")}`);
  return v as T;
}

export function exactKeys(o: Record<string, unknown>, keys: readonly string[], field: string): void {
  for (const k of Object.keys(o))
    if (!keys.includes(k)) fail(field === "" ? k : field, `unknown field ${field === "" ? k : `${field}.${k}`}`);
}

/** A link's `at` is a real date in its one form, and its `sig` 64 bytes. */
export function checkAtAndSig(link: { at: string; sig: string }): void {
  if (Number.isNaN(Date.parse(link.at)) || new Date(link.at).toISOString() !== link.at) fail("at", "at is not a real date");
  if (fromBase64Safe(link.sig)?.length !== 64) fail("sig", "sig must be a base64 Ed25519 signature (64 bytes)");
}

function fromBase64Safe(text: string): Bytes | undefined {
  try {
    return fromBase64(text);
  } catch {
    return undefined;
  }
}

export async function sha256Hex(bytes: Bytes): Promise<string> {
  return toHex(await sha256(bytes));
}

/** A link's `sig`: Ed25519 over its signing bytes (context and canonical bytes), base64. */
export async function linkSig(signingBytes: Bytes, signingPrivateKey: CryptoKey): Promise<string> {
  return toBase64(await ed25519Sign(signingPrivateKey, signingBytes));
}

/** Whether a link's `sig` (base64) verifies over its signing bytes; false for one that is not even base64. */
export async function linkSigVerifies(signingBytes: Bytes, sig: string, signingPublicKeyRaw: Bytes): Promise<boolean> {
  try {
    return await ed25519Verify(signingPublicKeyRaw, signingBytes, fromBase64(sig));
  } catch {
    return false;
  }
}

/**
 * What a signer says of the organization's audit log: the head (seq and record hash) it last
 * verified itself. Roster and item links carry it, both fields or neither (a signer that never
 * checked the audit log, such as a plain member, carries none). The server refuses a head its log
 * does not have; a client that checked the log refuses a head that differs from its own at that
 * seq (`AUDIT_FORK`): two members shown two audit histories are caught when one reads a link the
 * other signed.
 */
export interface AuditClaim {
  auditSeq?: number;
  auditHead?: string;
}
export const AUDIT_CLAIM_FIELDS: readonly string[] = ["auditSeq", "auditHead"];

/** The claim of a link as received, both fields or neither, onto `link`. */
export function parseAuditClaim(o: Record<string, unknown>, link: AuditClaim): void {
  if (o.auditSeq === undefined && o.auditHead === undefined) return;
  if (o.auditSeq === undefined) fail("auditSeq", "a link with auditHead needs auditSeq");
  if (o.auditHead === undefined) fail("auditHead", "a link with auditSeq needs auditHead");
  link.auditSeq = int(o, "auditSeq", 1);
  link.auditHead = str(o, "auditHead", HEX64, "64 lower-case hex digits");
}
