/**
 * The server's check of a signed-roster link. The protocol (fields, canonical bytes, the rules a
 * link follows from the state before it) is `protocol/formats/roster.ts`, the very code clients replay chains
 * with; this adds what only the server can check: the link is signed by the caller and describes
 * exactly the change the request makes. Refusals are `rosterLinkRefused` (`400 INVALID`) naming
 * the link's field (`rosterLink.seq`); hashes and signatures here are node:crypto, synchronous, so
 * the adapters can call this inside their transactions.
 */
import type { UserId } from "../ids";
import { createHash } from "node:crypto";
import { rosterLinkRefused } from "./refusals";
import {
  applyLink,
  canonicalJson,
  linkBytes,
  linkSigningBytes,
  memberSetBytes,
  parseLink,
  type RosterLink,
  type RosterMember,
  type RosterState,
} from "../../../protocol/formats/roster";
import { RosterLinkError } from "../../../protocol/formats/links";
import { signatureVerifies } from "../accounts/keys";
import type { VaultRole, VaultType } from "../types";

export type { RosterLink, RosterState };

/** The request field that carries a link. */
export const ROSTER_LINK_FIELD = "rosterLink";

export function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** SHA-256 (hex) over a user's RSA key (SPKI DER) and Ed25519 key (raw): how a roster names their keys. */
export function keyFingerprint(keys: { publicKey: string; signingPublicKey: string }): string {
  return sha256Hex(Buffer.concat([Buffer.from(keys.publicKey, "base64"), Buffer.from(keys.signingPublicKey, "base64")]));
}

function asInvalid<T>(check: () => T, field = ROSTER_LINK_FIELD): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof RosterLinkError) {
      throw rosterLinkRefused(err.field === ROSTER_LINK_FIELD ? field : `${field}.${err.field}`, err.message);
    }
    throw err;
  }
}

const mismatch = (field: string, message: string) => new RosterLinkError(field, message);

/** A request's link, checked for form (a shape error, before any lookup); undefined when there is none (absent or null). `field` names it in a refusal. */
export function parseRosterLink(raw: unknown, field = ROSTER_LINK_FIELD): RosterLink | undefined {
  if (raw === undefined || raw === null) return undefined;
  return asInvalid(() => parseLink(raw), field);
}

/** What is stored with the change: the link's seq, its hash (the vault's new head) and its canonical JSON, signature included. */
export interface RosterEntry {
  seq: number;
  hash: string;
  json: string;
}

/** A vault's roster head as stored; absent for a vault without a signed roster. */
export interface RosterHead {
  seq: number;
  hash: string;
}

export interface WrapOf {
  userId: UserId;
  encryptedVaultKey: string;
}

/** The change a request makes, which its link must describe exactly. */
export type RequestedChange =
  | { op: "create"; vaultType: VaultType; name: string; wraps: WrapOf[] }
  | { op: "adopt"; vaultType: VaultType; name: string; members: RosterMember[]; wraps: WrapOf[] }
  | { op: "add"; subjectId: string; role: VaultRole; subjectKey: string; wraps: WrapOf[] }
  | { op: "role"; subjectId: string; role: VaultRole }
  | { op: "remove"; subjectId: string }
  | { op: "rekey"; wraps: WrapOf[] }
  | { op: "rename"; name: string }
  | { op: "rewrap"; subjectId: string; subjectKey: string; wraps: WrapOf[] }
  | { op: "rotate"; subjectId: string; subjectKey: string; wraps: WrapOf[] };

export interface LinkCheck {
  /** The roster state the vault is in (null when the link starts a chain). */
  before: RosterState | null;
  /** The caller: the link's actor must be them, signing with their registered key. */
  actor: { userId: UserId; publicKey: string; signingPublicKey: string };
  /** The vault's key version once the change is made. */
  keyVersionAfter: number;
  change: RequestedChange;
}

function wrapHashes(wraps: readonly WrapOf[]): string {
  return canonicalJson(
    wraps
      .map((w) => ({ userId: w.userId, sha256: sha256Hex(Buffer.from(w.encryptedVaultKey, "base64")) }))
      .sort((a, b) => (a.userId < b.userId ? -1 : 1)),
  );
}

/**
 * Checks a link against the vault's state and the request: the caller signed it; it follows the
 * stored head under the protocol's rules (seq, prev, the actor's right, the key version, the
 * member digest); it describes this change (subject, role, the subject's keys, the member set,
 * the hash of every wrap the request adds). Returns what to store with the change.
 */
export function checkRosterLink(link: RosterLink, check: LinkCheck): RosterEntry {
  return asInvalid(() => {
    const { change, actor } = check;
    if (link.op !== change.op) throw mismatch("op", `the request is a ${change.op}, the link a ${link.op}`);
    if (link.actorId !== actor.userId) throw mismatch("actorId", "the link's actor is not the caller");
    if (!signatureVerifies(Buffer.from(linkSigningBytes(link)), Buffer.from(link.sig, "base64"), actor.signingPublicKey)) {
      throw mismatch("sig", "the signature does not verify with the caller's signing key");
    }
    const hash = sha256Hex(linkBytes(link));
    const digest =
      link.op === "rekey" && check.before
        ? sha256Hex(memberSetBytes([...check.before.members].map(([userId, m]) => ({ userId, ...m }))))
        : undefined;
    applyLink(check.before, link, hash, digest);
    if (link.keyVersion !== check.keyVersionAfter)
      throw mismatch("keyVersion", `the vault's key version after this change is ${check.keyVersionAfter}, not ${link.keyVersion}`);
    describesChange(link, change, keyFingerprint(actor));
    return { seq: link.seq, hash, json: canonicalJson(link) };
  });
}

function describesChange(link: RosterLink, change: RequestedChange, actorKey: string): void {
  if ("subjectId" in change && link.subjectId !== change.subjectId)
    throw mismatch("subjectId", "the link names another user than the request");
  if ("role" in change && link.role !== change.role) throw mismatch("role", `the request gives role ${change.role}, the link ${link.role}`);
  if ("vaultType" in change && link.vaultType !== change.vaultType)
    throw mismatch("vaultType", `the vault is ${change.vaultType}, the link says ${link.vaultType}`);
  // A create or adopt link may leave the name out (links made before names were bound); a rename names it.
  if ("name" in change && (link.name !== undefined || change.op === "rename") && link.name !== change.name)
    throw mismatch("name", "the link names the vault otherwise than the request");
  if (change.op === "create" && link.subjectKey !== actorKey)
    throw mismatch("subjectKey", "subjectKey is not the fingerprint of the caller's registered keys");
  if ((change.op === "add" || change.op === "rewrap" || change.op === "rotate") && link.subjectKey !== change.subjectKey)
    throw mismatch("subjectKey", "subjectKey is not the fingerprint of the recipient's registered keys");
  if (
    change.op === "adopt" &&
    canonicalJson(link.members) !== canonicalJson([...change.members].sort((a, b) => (a.userId < b.userId ? -1 : 1)))
  ) {
    throw mismatch("members", "members is not the vault's current member set (user, role, key fingerprint)");
  }
  // The hashes only: a personal wrap's label (the account state it was made under) is its signer's word, checked by their devices.
  if ("wraps" in change && canonicalJson(link.wraps.map((w) => ({ userId: w.userId, sha256: w.sha256 }))) !== wrapHashes(change.wraps)) {
    throw mismatch("wraps", "wraps does not hold the SHA-256 of exactly the wraps of the request");
  }
}
