// The signed vault roster: a link's bytes, hash and signature, and the rules each link follows.
// Design: docs/design/signed-roster.md
import { canonicalJson } from "../canonical";
import { fromBase64, utf8, type Bytes } from "../encoding";
import type { CryptoKey } from "../crypto/primitives";
import { mayDo, mayRemoveMember, ownersAfter, rekeyRequiredAfterRemoval, type VaultRole, type VaultType } from "../vault-roles";
import { fail, linkSig, linkSigVerifies, sha256Hex } from "./links";
import type { RosterLink, RosterMember, RosterOp, RosterWrap, UnsignedLink, WrapLabel } from "./roster-format";

export { canonicalJson } from "../canonical";
export {
  MAX_LINK_MEMBERS,
  parseLink,
  ROSTER_OPS,
  type RosterLink,
  type RosterMember,
  type RosterOp,
  type RosterWrap,
  type UnsignedLink,
  type WrapLabel,
} from "./roster-format";

/** Prepended to a link's canonical bytes before signing: a link signature is never valid as anything else. */
export const LINK_SIGNING_CONTEXT = "vault-roster-link/v1\n";
/** The `prev` of a chain's first link. */
export const GENESIS_PREV = "0".repeat(64);

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

/** The wraps of a change, as a link names them: `{ userId, sha256 }` sorted by userId; a personal wrap with its `label`. */
export async function rosterWraps(
  wraps: ReadonlyArray<{ userId: string; encryptedVaultKey: string }>,
  label?: WrapLabel,
): Promise<RosterWrap[]> {
  const named = await Promise.all(
    wraps.map(async (w) => ({ userId: w.userId, sha256: await sha256Hex(fromBase64(w.encryptedVaultKey)), ...label })),
  );
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
  wraps: Map<string, WrapEntry>;
  /** A member was removed from a shared vault since the last rekey. */
  rekeyRequired: boolean;
  /** The vault's name as its latest naming link (create, adopt, rename) gives it; undefined when no link names it. */
  name?: string;
}

/** A member's current wrap: its hash, the vault key version, its sender, and (a personal wrap) its label. */
export interface WrapEntry extends Partial<WrapLabel> {
  sha256: string;
  keyVersion: number;
  senderId?: string;
}

/** The entry a link's wrap makes, its label kept. */
function entryOf(w: RosterWrap, keyVersion: number, senderId?: string): WrapEntry {
  return {
    sha256: w.sha256,
    keyVersion,
    ...(senderId !== undefined && { senderId }),
    ...(w.kdfVersion !== undefined && { kdfVersion: w.kdfVersion, keyLogVersion: w.keyLogVersion }),
  };
}

/** Only a personal vault's wraps (under a stretched key) name the account state they were made under. */
function checkLabels(vaultType: VaultType, link: RosterLink): void {
  if (vaultType !== "personal" && link.wraps.some((w) => w.kdfVersion !== undefined))
    fail("wraps", "only a personal vault's wrap names the KDF statement and key log it was made under");
}

function sameUsers(wraps: readonly RosterWrap[], userIds: readonly string[]): boolean {
  const sorted = [...userIds].sort();
  return wraps.length === sorted.length && wraps.every((w, i) => w.userId === sorted[i]);
}

function countOwners(members: ReadonlyMap<string, { role: VaultRole }>): number {
  return [...members.values()].filter((m) => m.role === "owner").length;
}

/** What a link changes: the state before it, copied, then changed by the link's op. */
interface Draft {
  members: RosterState["members"];
  wraps: RosterState["wraps"];
  keyVersion: number;
  rekeyRequired: boolean;
  name?: string;
}

/** What an op's rules read: the link, its actor as the state before it holds them, and that state. */
interface Change {
  link: RosterLink;
  actor: { role: VaultRole; key: string };
  before: RosterState;
  beforeMemberDigest?: string;
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
  if (before === null) return applyFirst(link, hash);
  const actor = checkFollows(before, link);
  checkLabels(before.vaultType, link);
  const draft: Draft = {
    members: new Map(before.members),
    wraps: new Map(before.wraps),
    keyVersion: before.keyVersion,
    rekeyRequired: before.rekeyRequired,
    name: before.name,
  };
  // add, role and remove are one branch in the rules' order: anything else reads as a remove.
  const rules = Object.hasOwn(CHANGES, link.op) ? CHANGES[link.op as ChainOp] : CHANGES.remove;
  rules(draft, { link, actor, before, beforeMemberDigest });
  return {
    vaultId: before.vaultId,
    vaultType: before.vaultType,
    seq: link.seq,
    head: hash,
    keyVersion: draft.keyVersion,
    members: draft.members,
    wraps: draft.wraps,
    rekeyRequired: draft.rekeyRequired,
    ...(draft.name !== undefined && { name: draft.name }),
  };
}

/** A chain's first link: seq 0, the genesis prev, and a create or an adopt. */
function applyFirst(link: RosterLink, hash: string): RosterState {
  if (link.seq !== 0) fail("seq", `the chain starts at seq 0, not ${link.seq}`);
  if (link.prev !== GENESIS_PREV) fail("prev", "the first link's prev must be 64 zeros");
  if (link.vaultType !== undefined) checkLabels(link.vaultType, link);
  if (link.op === "create") return applyCreate(link, hash);
  if (link.op === "adopt") return applyAdopt(link, hash);
  fail("op", `a chain starts with create or adopt, not ${link.op}`);
}

/** A later link follows its chain (vault, seq, prev), and its actor is a member: the actor. */
function checkFollows(before: RosterState, link: RosterLink): Change["actor"] {
  if (link.vaultId !== before.vaultId) fail("vaultId", `the link names vault ${link.vaultId}, not ${before.vaultId}`);
  if (link.seq !== before.seq + 1) fail("seq", `the next link's seq is ${before.seq + 1}, not ${link.seq}`);
  if (link.prev !== before.head) fail("prev", `prev is not the hash of link ${before.seq}`);
  if (link.op === "create" || link.op === "adopt") fail("op", `${link.op} only starts a chain`);
  const actor = before.members.get(link.actorId);
  if (!actor) fail("actorId", `${link.actorId} is not a member of the vault`);
  return actor;
}

function sameKeyVersion({ link, before }: Change): void {
  if (link.keyVersion !== before.keyVersion) fail("keyVersion", `the vault's key version is ${before.keyVersion}, not ${link.keyVersion}`);
}

/** The member a role change or a removal names, holding the key the link names. */
function namedMember(draft: Draft, { link }: Change): { role: VaultRole; key: string } {
  const subject = draft.members.get(link.subjectId!);
  if (!subject) fail("subjectId", `${link.subjectId!} is not a member`);
  if (link.subjectKey !== subject.key) fail("subjectKey", "subjectKey is not the key the roster holds for the member");
  if (link.wraps.length !== 0) fail("wraps", `a ${link.op} adds no wrap`);
  return subject;
}

type ChainOp = Exclude<RosterOp, "create" | "adopt">;

/** Each op after the first link: its rules, and what it changes. */
const CHANGES: Record<ChainOp, (draft: Draft, change: Change) => void> = {
  rename(draft, change) {
    const { link, actor } = change;
    if (!mayDo(actor.role, "rename")) fail("actorId", `a vault ${actor.role} may not rename`);
    sameKeyVersion(change);
    if (link.wraps.length !== 0) fail("wraps", "a rename adds no wrap");
    draft.name = link.name;
  },

  // A member wraps the key they hold again for themselves (a new master password, for a personal vault): their own wrap only.
  rewrap(draft, change) {
    const { link, actor } = change;
    if (link.subjectId !== link.actorId) fail("subjectId", "a member re-wraps only their own wrap");
    if (link.subjectKey !== actor.key) fail("subjectKey", "subjectKey is not the key the roster holds for the member");
    sameKeyVersion(change);
    if (!sameUsers(link.wraps, [link.actorId])) fail("wraps", "a rewrap carries exactly the actor's new wrap");
    draft.wraps.set(link.actorId, entryOf(link.wraps[0]!, draft.keyVersion, link.actorId));
  },

  // A member moves to new keys (a key rotation, followed through their signed key log): signed with
  // the key the roster holds for them, naming the new one, with the vault's key wrapped to it.
  // Their links after this one are signed with the new key.
  rotate(draft, change) {
    const { link, actor } = change;
    if (link.subjectId !== link.actorId) fail("subjectId", "a member rotates only their own keys");
    if (link.subjectKey === actor.key) fail("subjectKey", "subjectKey is the key the roster already holds for the member");
    sameKeyVersion(change);
    if (!sameUsers(link.wraps, [link.actorId])) fail("wraps", "a rotate carries exactly the actor's new wrap");
    draft.members.set(link.actorId, { ...actor, key: link.subjectKey! });
    draft.wraps.set(link.actorId, entryOf(link.wraps[0]!, draft.keyVersion, link.actorId));
  },

  rekey(draft, { link, actor, before, beforeMemberDigest }) {
    if (!mayDo(actor.role, "rekey")) fail("actorId", `a vault ${actor.role} may not rekey`);
    if (link.keyVersion !== before.keyVersion + 1)
      fail("keyVersion", `a rekey makes key version ${before.keyVersion + 1}, not ${link.keyVersion}`);
    if (beforeMemberDigest === undefined || link.memberDigest !== beforeMemberDigest)
      fail("memberDigest", "memberDigest is not the digest of the vault's members");
    if (!sameUsers(link.wraps, [...draft.members.keys()])) fail("wraps", "a rekey wraps the new key for exactly the vault's members");
    draft.keyVersion = link.keyVersion;
    for (const w of link.wraps) draft.wraps.set(w.userId, entryOf(w, draft.keyVersion, link.actorId));
    draft.rekeyRequired = false;
  },

  add(draft, change) {
    const { link, actor, before } = change;
    sameKeyVersion(change);
    const subjectId = link.subjectId!;
    if (!mayDo(actor.role, "addMember")) fail("actorId", `a vault ${actor.role} may not add members`);
    if (before.vaultType === "personal") fail("op", "a personal vault cannot be shared");
    if (draft.members.get(subjectId)) fail("subjectId", `${subjectId} is already a member`);
    if (link.role === "owner") fail("role", "a new member's role is admin or member");
    if (!sameUsers(link.wraps, [subjectId])) fail("wraps", "an add carries exactly the new member's wrap");
    draft.members.set(subjectId, { role: link.role!, key: link.subjectKey! });
    draft.wraps.set(subjectId, entryOf(link.wraps[0]!, draft.keyVersion, link.actorId));
  },

  role(draft, change) {
    const { link, actor, before } = change;
    sameKeyVersion(change);
    const subject = namedMember(draft, change);
    if (!mayDo(actor.role, "changeRole")) fail("actorId", `a vault ${actor.role} may not change roles`);
    if (before.vaultType === "personal" && link.role !== "owner") fail("role", "the owner of a personal vault stays its owner");
    if (ownersAfter(countOwners(draft.members), subject.role, link.role!) < 1) fail("role", "the last owner cannot be demoted");
    draft.members.set(link.subjectId!, { ...subject, role: link.role! });
  },

  remove(draft, change) {
    const { link, actor, before } = change;
    sameKeyVersion(change);
    const subjectId = link.subjectId!;
    const subject = namedMember(draft, change);
    if (!mayRemoveMember(actor.role, subject.role, subjectId === link.actorId))
      fail("actorId", `a vault ${actor.role} may not remove a vault ${subject.role}`);
    if (ownersAfter(countOwners(draft.members), subject.role, null) < 1) fail("subjectId", "the last owner cannot be removed");
    draft.members.delete(subjectId);
    draft.wraps.delete(subjectId);
    draft.rekeyRequired ||= rekeyRequiredAfterRemoval(before.vaultType, draft.members.size);
  },
};

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
    wraps: new Map([[link.actorId, entryOf(link.wraps[0]!, 1, link.actorId)]]),
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
    wraps: new Map(link.wraps.map((w) => [w.userId, entryOf(w, link.keyVersion)])),
    rekeyRequired: false,
    ...(link.name !== undefined && { name: link.name }),
  };
}
