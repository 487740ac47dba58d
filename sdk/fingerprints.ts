/**
 * Short fingerprints of what a client verified, for two people to compare by phone: a server that
 * shows them two different histories (a fork), each consistent on its own, cannot give both the
 * same fingerprint. A vault's covers its roster head and its item-log head; an organization's,
 * its audit head. Each is the first 20 hex digits (80 bits) of a SHA-256, in groups of four.
 *
 *   vault:  SHA-256(UTF-8("vault-state/v1\n" + canonicalJson({ vaultId, roster: {seq, head}, items?: {seq, head} })))
 *   audit:  SHA-256(UTF-8("vault-audit-state/v1\n" + canonicalJson({ orgId, seq, head })))
 */
import { canonicalJson } from "../protocol/canonical";
import { toHex, utf8 } from "../protocol/encoding";
import { sha256 } from "../protocol/crypto/primitives";

export interface Head {
  seq: number;
  head: string;
}

const short = async (text: string) =>
  toHex(await sha256(utf8(text)))
    .slice(0, 20)
    .match(/.{4}/g)!
    .join(" ");

export function vaultStateFingerprint(vaultId: string, roster: Head, items: Head | null): Promise<string> {
  return short(`vault-state/v1\n${canonicalJson({ vaultId, roster, ...(items && { items }) })}`);
}

export function auditStateFingerprint(orgId: string, head: Head): Promise<string> {
  return short(`vault-audit-state/v1\n${canonicalJson({ orgId, seq: head.seq, head: head.head })}`);
}

/** The same fingerprint, however it was typed: case, spaces and dashes do not count. */
export const sameFingerprint = (a: string, b: string): boolean =>
  a.replace(/[\s-]/g, "").toLowerCase() === b.replace(/[\s-]/g, "").toLowerCase();
