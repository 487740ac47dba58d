/**
 * The signed vault roster: an append-only, hash-chained list of links, one per membership change
 * and rekey, each signed by the member who made the change. A client that replays the chain from
 * its first link knows who the members are, with which role and key, and which wrap each holds,
 * without trusting the server's word for any of it.
 *
 * This file is the protocol, once: the link's fields, its canonical bytes, its hash, its signature
 * and the rules a link must follow given the state before it (its form: roster-format.ts). The SDK replays chains with it; the
 * server checks each new link with the same `parseLink` and `applyLink` (lib/domain/roster.ts),
 * so client and server cannot disagree on what a valid link is. The README gives the wire format
 * and test vectors (protocol/vectors/roster-vectors.json).
 *
 * Pure: WebCrypto only for hashing and signatures, no Node API.
 */
import { canonicalJson } from "../canonical";
import { fromBase64, utf8, type Bytes } from "../encoding";

export { canonicalJson } from "../canonical";
import type { CryptoKey } from "../crypto/primitives";
import { mayDo, mayRemoveMember, ownersAfter, rekeyRequiredAfterRemoval, type VaultRole, type VaultType } from "../vault-roles";
import { fail, linkSig, linkSigVerifies, sha256Hex } from "./links";

export { MAX_LINK_MEMBERS, parseLink, ROSTER_OPS, type RosterOp } from "./roster-format";
import type { RosterOp } from "./roster-format";

/** Prepended to a link's canonical bytes before signing: a link signature is never valid as anything else. */
export const LINK_SIGNING_CONTEXT = "vault-roster-link/v1\n";
/** The `prev` of a chain's first link. */
export const GENESIS_PREV = "0".repeat(64);
/** A wrap the link vouches for: its recipient and the SHA-256 (hex) of the wrapped key bytes. */
export interface RosterWrap {
  userId: string;
  sha256: string;
}

/** A member as an `adopt` link lists them: role and key fingerprint (`keyFingerprint`). */
export interface RosterMember {
  userId: string;
  role: VaultRole;
  key: string;
}

/** A link before it is signed. Fields an operation does not use are absent, never null. */
export interface UnsignedLink {
  vaultId: string;
  seq: number;
  /** SHA-256 (hex) of the previous link's canonical bytes; `GENESIS_PREV` at seq 0. */
  prev: string;
  op: RosterOp;
  actorId: string;
  /** When the actor signed it (ISO 8601 UTC with milliseconds): the signer's claim, not checked against a clock. */
  at: string;
  /** The vault's key version after the change. */
  keyVersion: number;
  /** create, adopt */
  vaultType?: VaultType;
  /** create, rewrap and rotate (the actor), add, role, remove */
  subjectId?: string;
  /** create (owner), add, role (the new role) */
  role?: VaultRole;
  /** rename, and optionally create and adopt: the vault's name from this link on (links made before names were bound have none). */
  name?: string;
  /** create, add, role, remove, rewrap: the subject's key fingerprint (`keyFingerprint`); rotate: the actor's new one. */
  subjectKey?: string;
  /** adopt: every member, sorted by userId. */
  members?: RosterMember[];
  /** rekey: `memberDigest` of the member set the new key is wrapped for. */
  memberDigest?: string;
  /** The wraps the change adds, sorted by userId: one for create, add, rewrap and rotate, one per member for rekey and adopt, none otherwise. */
  wraps: RosterWrap[];
  /** Optional, any op: the head of the organization's audit log the signer last verified (`AuditClaim`). */
  auditSeq?: number;
  auditHead?: string;
}

export interface RosterLink extends UnsignedLink {
  /** Ed25519 by the actor over `LINK_SIGNING_CONTEXT` + the canonical bytes, base64. */
  sig: string;
}

// ---- Canonical encoding ------------------------------------------------------------------------

function canonicalBody(link: UnsignedLink): string {
  const { sig: _sig, ...body } = link as RosterLink;
  return canonicalJson(body);
}

/** The link without its signature, canonically encoded: its canonical bytes, what its hash covers. */
export function linkBytes(link: UnsignedLink): Bytes {
  return utf8(canonicalBody(link));
}

/** What the actor signs: the context string, then the canonical bytes. */
export function linkSigningBytes(link: UnsignedLink): Bytes {
  return utf8(LINK_SIGNING_CONTEXT + canonicalBody(link));
}

/** The bytes of a member set whose SHA-256 is a rekey link's `memberDigest`: the members sorted by userId. */
export function memberSetBytes(members: Iterable<RosterMember>): Bytes {
  const sorted = [...members].map((m) => ({ userId: m.userId, role: m.role, key: m.key })).sort(byUserId);
  return utf8(canonicalJson(sorted));
}

const byUserId = (a: { userId: string }, b: { userId: string }) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0);

export const linkHash = (link: UnsignedLink) => sha256Hex(linkBytes(link));

/** A rekey link's `memberDigest` of the members a state holds. */
export function memberDigest(members: ReadonlyMap<string, { role: VaultRole; key: string }>): Promise<string> {
  return sha256Hex(memberSetBytes([...members].map(([userId, m]) => ({ userId, role: m.role, key: m.key }))));
}

export async function signLink(link: UnsignedLink, signingPrivateKey: CryptoKey): Promise<RosterLink> {
  return { ...link, sig: await linkSig(linkSigningBytes(link), signingPrivateKey) };
}

export const linkSignatureVerifies = (link: RosterLink, signingPublicKeyRaw: Bytes): Promise<boolean> =>
  linkSigVerifies(linkSigningBytes(link), link.sig, signingPublicKeyRaw);

/** The wraps of a change, as a link names them: `{ userId, sha256 }` sorted by userId. */
export async function rosterWraps(wraps: ReadonlyArray<{ userId: string; encryptedVaultKey: string }>): Promise<RosterWrap[]> {
  const named = await Promise.all(wraps.map(async (w) => ({ userId: w.userId, sha256: await sha256Hex(fromBase64(w.encryptedVaultKey)) })));
  return named.sort(byUserId);
}

// ---- Rules -------------------------------------------------------------------------------------

/** What a chain says, replayed up to its head. */
export interface RosterState {
  vaultId: string;
  vaultType: VaultType;
  /** The head: the last link's seq and hash. */
  seq: number;
  head: string;
  keyVersion: number;
  members: Map<string, { role: VaultRole; key: string }>;
  /**
   * Each member's current wrap as the chain vouches for it. `senderId` is the link's actor, or
   * undefined for wraps an `adopt` link took over as they were.
   */
  wraps: Map<string, { sha256: string; keyVersion: number; senderId?: string }>;
  /** A member was removed from a shared vault since the last rekey. */
  rekeyRequired: boolean;
  /** The vault's name as its latest naming link (create, adopt, rename) gives it; undefined when no link names it. */
  name?: string;
}

function sameUsers(wraps: readonly RosterWrap[], userIds: readonly string[]): boolean {
  const sorted = [...userIds].sort();
  return wraps.length === sorted.length && wraps.every((w, i) => w.userId === sorted[i]);
}

function countOwners(members: ReadonlyMap<string, { role: VaultRole }>): number {
  return [...members.values()].filter((m) => m.role === "owner").length;
}

/**
 * The state after `link`, or `RosterLinkError` when the link does not follow from `before`
 * (null: the chain is empty). Checks the chain (vault, seq, prev), the actor's right under the
 * contract's role rules in the state before the link, and that the link is whole (key version,
 * subject's recorded key, wraps for exactly the right users, the member digest). `hash` is the
 * link's own hash; `beforeMemberDigest` is `memberDigest(before.members)`, needed for a rekey.
 * Signatures are the caller's to check: this function has no keys.
 */
export function applyLink(before: RosterState | null, link: RosterLink, hash: string, beforeMemberDigest?: string): RosterState {
  if (before === null) {
    if (link.seq !== 0) fail("seq", `the chain starts at seq 0, not ${link.seq}`);
    if (link.prev !== GENESIS_PREV) fail("prev", "the first link's prev must be 64 zeros");
    if (link.op === "create") return applyCreate(link, hash);
    if (link.op === "adopt") return applyAdopt(link, hash);
    fail("op", `a chain starts with create or adopt, not ${link.op}`);
  }
  if (link.vaultId !== before.vaultId) fail("vaultId", `the link names vault ${link.vaultId}, not ${before.vaultId}`);
  if (link.seq !== before.seq + 1) fail("seq", `the next link's seq is ${before.seq + 1}, not ${link.seq}`);
  if (link.prev !== before.head) fail("prev", `prev is not the hash of link ${before.seq}`);
  if (link.op === "create" || link.op === "adopt") fail("op", `${link.op} only starts a chain`);
  const actor = before.members.get(link.actorId);
  if (!actor) fail("actorId", `${link.actorId} is not a member of the vault`);

  const members = new Map(before.members);
  const wraps = new Map(before.wraps);
  let { keyVersion, rekeyRequired, name } = before;

  if (link.op === "rename") {
    if (!mayDo(actor.role, "rename")) fail("actorId", `a vault ${actor.role} may not rename`);
    if (link.keyVersion !== before.keyVersion)
      fail("keyVersion", `the vault's key version is ${before.keyVersion}, not ${link.keyVersion}`);
    if (link.wraps.length !== 0) fail("wraps", "a rename adds no wrap");
    name = link.name;
  } else if (link.op === "rewrap") {
    // A member wraps the key they hold again for themselves (a new master password, for a personal vault): their own wrap only.
    if (link.subjectId !== link.actorId) fail("subjectId", "a member re-wraps only their own wrap");
    if (link.subjectKey !== actor.key) fail("subjectKey", "subjectKey is not the key the roster holds for the member");
    if (link.keyVersion !== before.keyVersion)
      fail("keyVersion", `the vault's key version is ${before.keyVersion}, not ${link.keyVersion}`);
    if (!sameUsers(link.wraps, [link.actorId])) fail("wraps", "a rewrap carries exactly the actor's new wrap");
    wraps.set(link.actorId, { sha256: link.wraps[0]!.sha256, keyVersion, senderId: link.actorId });
  } else if (link.op === "rotate") {
    // A member moves to new keys (a key rotation, followed through their signed key log): signed with
    // the key the roster holds for them, naming the new one, with the vault's key wrapped to it.
    // Their links after this one are signed with the new key.
    if (link.subjectId !== link.actorId) fail("subjectId", "a member rotates only their own keys");
    if (link.subjectKey === actor.key) fail("subjectKey", "subjectKey is the key the roster already holds for the member");
    if (link.keyVersion !== before.keyVersion)
      fail("keyVersion", `the vault's key version is ${before.keyVersion}, not ${link.keyVersion}`);
    if (!sameUsers(link.wraps, [link.actorId])) fail("wraps", "a rotate carries exactly the actor's new wrap");
    members.set(link.actorId, { ...actor, key: link.subjectKey! });
    wraps.set(link.actorId, { sha256: link.wraps[0]!.sha256, keyVersion, senderId: link.actorId });
  } else if (link.op === "rekey") {
    if (!mayDo(actor.role, "rekey")) fail("actorId", `a vault ${actor.role} may not rekey`);
    if (link.keyVersion !== before.keyVersion + 1)
      fail("keyVersion", `a rekey makes key version ${before.keyVersion + 1}, not ${link.keyVersion}`);
    if (beforeMemberDigest === undefined || link.memberDigest !== beforeMemberDigest)
      fail("memberDigest", "memberDigest is not the digest of the vault's members");
    if (!sameUsers(link.wraps, [...members.keys()])) fail("wraps", "a rekey wraps the new key for exactly the vault's members");
    keyVersion = link.keyVersion;
    for (const w of link.wraps) wraps.set(w.userId, { sha256: w.sha256, keyVersion, senderId: link.actorId });
    rekeyRequired = false;
  } else {
    if (link.keyVersion !== before.keyVersion)
      fail("keyVersion", `the vault's key version is ${before.keyVersion}, not ${link.keyVersion}`);
    const subjectId = link.subjectId!;
    const subject = members.get(subjectId);
    if (link.op === "add") {
      if (!mayDo(actor.role, "addMember")) fail("actorId", `a vault ${actor.role} may not add members`);
      if (before.vaultType === "personal") fail("op", "a personal vault cannot be shared");
      if (subject) fail("subjectId", `${subjectId} is already a member`);
      if (link.role === "owner") fail("role", "a new member's role is admin or member");
      if (!sameUsers(link.wraps, [subjectId])) fail("wraps", "an add carries exactly the new member's wrap");
      members.set(subjectId, { role: link.role!, key: link.subjectKey! });
      wraps.set(subjectId, { sha256: link.wraps[0]!.sha256, keyVersion, senderId: link.actorId });
    } else {
      if (!subject) fail("subjectId", `${subjectId} is not a member`);
      if (link.subjectKey !== subject.key) fail("subjectKey", "subjectKey is not the key the roster holds for the member");
      if (link.wraps.length !== 0) fail("wraps", `a ${link.op} adds no wrap`);
      if (link.op === "role") {
        if (!mayDo(actor.role, "changeRole")) fail("actorId", `a vault ${actor.role} may not change roles`);
        if (before.vaultType === "personal" && link.role !== "owner") fail("role", "the owner of a personal vault stays its owner");
        if (ownersAfter(countOwners(members), subject.role, link.role!) < 1) fail("role", "the last owner cannot be demoted");
        members.set(subjectId, { ...subject, role: link.role! });
      } else {
        if (!mayRemoveMember(actor.role, subject.role, subjectId === link.actorId))
          fail("actorId", `a vault ${actor.role} may not remove a vault ${subject.role}`);
        if (ownersAfter(countOwners(members), subject.role, null) < 1) fail("subjectId", "the last owner cannot be removed");
        members.delete(subjectId);
        wraps.delete(subjectId);
        rekeyRequired ||= rekeyRequiredAfterRemoval(before.vaultType, members.size);
      }
    }
  }
  return {
    vaultId: before.vaultId,
    vaultType: before.vaultType,
    seq: link.seq,
    head: hash,
    keyVersion,
    members,
    wraps,
    rekeyRequired,
    ...(name !== undefined && { name }),
  };
}

function applyCreate(link: RosterLink, hash: string): RosterState {
  if (link.subjectId !== link.actorId) fail("subjectId", "the creator is the subject of a create link");
  if (link.role !== "owner") fail("role", "the creator is the vault's owner");
  if (link.keyVersion !== 1) fail("keyVersion", "a new vault's key version is 1");
  if (!sameUsers(link.wraps, [link.actorId])) fail("wraps", "a create link carries exactly the creator's wrap");
  return {
    vaultId: link.vaultId,
    vaultType: link.vaultType!,
    seq: 0,
    head: hash,
    keyVersion: 1,
    members: new Map([[link.actorId, { role: "owner", key: link.subjectKey! }]]),
    wraps: new Map([[link.actorId, { sha256: link.wraps[0]!.sha256, keyVersion: 1, senderId: link.actorId }]]),
    rekeyRequired: false,
    ...(link.name !== undefined && { name: link.name }),
  };
}

function applyAdopt(link: RosterLink, hash: string): RosterState {
  const members = link.members!;
  const actor = members.find((m) => m.userId === link.actorId);
  if (!actor || !mayDo(actor.role, "adoptRoster")) fail("actorId", "only an owner of the vault adopts a roster for it");
  if (link.vaultType === "personal" && members.length !== 1) fail("members", "a personal vault has exactly one member");
  const memberIds = members.map((m) => m.userId);
  if (!sameUsers(link.wraps, memberIds)) fail("wraps", "an adopt link names exactly one wrap per member");
  return {
    vaultId: link.vaultId,
    vaultType: link.vaultType!,
    seq: 0,
    head: hash,
    keyVersion: link.keyVersion,
    members: new Map(members.map((m) => [m.userId, { role: m.role, key: m.key }])),
    wraps: new Map(link.wraps.map((w) => [w.userId, { sha256: w.sha256, keyVersion: link.keyVersion }])),
    rekeyRequired: false,
    ...(link.name !== undefined && { name: link.name }),
  };
}
