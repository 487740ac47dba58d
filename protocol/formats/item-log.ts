// The signed item log: a vault's contents, hash-chained and signed; its rules, for the SDK and the server.
// Design: docs/design/item-log-format.md
import { canonicalJson } from "../canonical";
import { utf8, type Bytes } from "../encoding";
import type { CryptoKey } from "../crypto/primitives";
import { GENESIS_PREV } from "./roster";
// What every signed link shares (protocol/formats/links.ts): field checks (fmt.str, fmt.int, ...), hash and signature.
import * as fmt from "./links";

export { RosterLinkError as ItemLinkError } from "./links";

export const ITEM_LINK_OPS = ["checkpoint", "create", "update", "delete", "restore", "rekey", "import"] as const;
export type ItemLinkOp = (typeof ITEM_LINK_OPS)[number];

/** Prepended to a link's canonical bytes before signing: an item link's signature is never valid as anything else. */
export const ITEM_LINK_CONTEXT = "vault-item-link/v1\n";
/** How many links after the last base link make a client that holds the whole item set sign a checkpoint. */
export const CHECKPOINT_EVERY = 1_000;
/** The request field that carries an item link. */
export const ITEM_LINK_FIELD = "itemLink";

/** An item as the log knows it: its revision and the SHA-256 (hex) of its ciphertexts (`itemDigest`). */
export interface ItemState {
  revision: number;
  sha256: string;
}

export interface UnsignedItemLink {
  vaultId: string;
  seq: number;
  /** SHA-256 (hex) of the previous link's canonical bytes; GENESIS_PREV at seq 0. */
  prev: string;
  op: ItemLinkOp;
  actorId: string;
  /** When the actor signed it: the signer's claim, not checked against a clock. */
  at: string;
  /** The vault's key version after the link (a rekey's is one more than the link before's). */
  keyVersion: number;
  /** The roster head's seq the actor signed against: never lower than the link before's. */
  rosterSeq: number;
  /**
   * That roster link's hash: the item log names the membership history it was written under, so
   * a server that shows members two different rosters (each consistent) is caught as soon as one
   * of them reads an item link the other signed.
   */
  rosterHead: string;
  /** create, update, delete: the item. */
  itemId?: string;
  /** create (1), update, restore: the item's revision after the link (a restore's: the revision its delete removed, plus one); delete: the revision deleted. */
  revision?: number;
  /** create, update, restore: `itemDigest` of the new ciphertexts (a restore's: those the item was deleted with, unchanged). */
  sha256?: string;
  /** update, delete: `itemDigest` of the ciphertexts the item had before (delete's tombstone names what it deleted). */
  prevSha256?: string;
  /** checkpoint, rekey, import: how many items the vault holds after the link. */
  count?: number;
  /** checkpoint, rekey, import: `itemSetDigest` of the vault's items after the link. */
  setDigest?: string;
  /** import: how many new items it adds (each at revision 1): the set before it is the set after it without them. */
  added?: number;
  /** Optional, any op: the head of the organization's audit log the signer last verified (`AuditClaim`, protocol/formats/roster.ts). */
  auditSeq?: number;
  auditHead?: string;
}

export interface ItemLink extends UnsignedItemLink {
  /** Ed25519 by the actor over ITEM_LINK_CONTEXT + the canonical bytes, base64. */
  sig: string;
}

const COMMON_FIELDS = ["vaultId", "seq", "prev", "op", "actorId", "at", "keyVersion", "rosterSeq", "rosterHead", "sig"];
const OP_FIELDS: Record<ItemLinkOp, readonly string[]> = {
  checkpoint: ["count", "setDigest"],
  rekey: ["count", "setDigest"],
  // Items added in one bulk request (an import): a base link, the whole item set after it, and how many it adds.
  import: ["count", "setDigest", "added"],
  create: ["itemId", "revision", "sha256"],
  update: ["itemId", "revision", "sha256", "prevSha256"],
  delete: ["itemId", "revision", "prevSha256"],
  // An item taken back out of the vault's trash, with the ciphertexts it was deleted with.
  restore: ["itemId", "revision", "sha256"],
};

/** A base link fixes the whole item set (its digest): reading starts from the last one. */
export const isBase = (link: UnsignedItemLink): boolean => link.op === "checkpoint" || link.op === "rekey" || link.op === "import";

// ---- Bytes and digests -------------------------------------------------------------------------

function canonicalBody(link: UnsignedItemLink): string {
  const { sig: _sig, ...body } = link as ItemLink;
  return canonicalJson(body);
}

/** The link without its signature, canonically encoded: what its hash covers. */
export const itemLinkBytes = (link: UnsignedItemLink): Bytes => utf8(canonicalBody(link));
/** What the actor signs: the context string, then the canonical bytes. */
export const itemLinkSigningBytes = (link: UnsignedItemLink): Bytes => utf8(ITEM_LINK_CONTEXT + canonicalBody(link));
export const itemLinkHash = (link: UnsignedItemLink): Promise<string> => fmt.sha256Hex(itemLinkBytes(link));

/** The bytes an item's digest covers: its two ciphertexts as stored (canonical base64), name first, joined by "." (not a base64 character). */
export const itemDigestBytes = (item: { encryptedName: string; encryptedData: string }): Bytes =>
  utf8(`${item.encryptedName}.${item.encryptedData}`);
export const itemDigest = (item: { encryptedName: string; encryptedData: string }): Promise<string> => fmt.sha256Hex(itemDigestBytes(item));

/** Items as the log names them, by id: each one's revision and the digest of its ciphertexts (computed side by side). */
export async function itemStatesOf(
  items: ReadonlyArray<{ itemId: string; revision: number; encryptedName: string; encryptedData: string }>,
): Promise<Map<string, ItemState>> {
  const digests = await Promise.all(items.map((i) => itemDigest(i)));
  return new Map(items.map((i, n): [string, ItemState] => [i.itemId, { revision: i.revision, sha256: digests[n]! }]));
}

/** The bytes a set digest covers: `[{itemId, revision, sha256}, ...]` sorted by itemId, canonical JSON. */
export function itemSetBytes(items: Iterable<readonly [string, ItemState]>): Bytes {
  const entries = [...items].map(([itemId, s]) => ({ itemId, revision: s.revision, sha256: s.sha256 }));
  entries.sort((a, b) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0));
  return utf8(canonicalJson(entries));
}
export const itemSetDigest = (items: Iterable<readonly [string, ItemState]>): Promise<string> => fmt.sha256Hex(itemSetBytes(items));

export async function signItemLink(link: UnsignedItemLink, signingPrivateKey: CryptoKey): Promise<ItemLink> {
  return { ...link, sig: await fmt.linkSig(itemLinkSigningBytes(link), signingPrivateKey) };
}

export const itemLinkSignatureVerifies = (link: ItemLink, signingPublicKeyRaw: Bytes): Promise<boolean> =>
  fmt.linkSigVerifies(itemLinkSigningBytes(link), link.sig, signingPublicKeyRaw);

// ---- Format ------------------------------------------------------------------------------------

/** A link as received (JSON), checked field by field: exactly the fields its operation carries. Throws `ItemLinkError` naming the field. */
export function parseItemLink(raw: unknown): ItemLink {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) fmt.fail(ITEM_LINK_FIELD, "an item link must be an object");
  const o = raw as Record<string, unknown>;
  const op = fmt.oneOf<ItemLinkOp>(o, "op", ITEM_LINK_OPS);
  const fields = [...COMMON_FIELDS, ...OP_FIELDS[op]];
  fmt.exactKeys(o, [...fields, ...fmt.AUDIT_CLAIM_FIELDS], "");
  for (const f of fields) if (o[f] === undefined) fmt.fail(f, `a ${op} link needs ${f}`);
  const link: ItemLink = {
    vaultId: fmt.str(o, "vaultId", fmt.UUID_LOWER, "a lower-case UUID"),
    seq: fmt.int(o, "seq", 0),
    prev: fmt.str(o, "prev", fmt.HEX64, "64 lower-case hex digits"),
    op,
    actorId: fmt.str(o, "actorId", fmt.UUID_LOWER, "a lower-case UUID"),
    at: fmt.str(o, "at", fmt.TIMESTAMP, "an ISO 8601 UTC timestamp with milliseconds"),
    keyVersion: fmt.int(o, "keyVersion", 1),
    rosterSeq: fmt.int(o, "rosterSeq", 0),
    rosterHead: fmt.str(o, "rosterHead", fmt.HEX64, "64 lower-case hex digits"),
    sig: fmt.str(o, "sig", fmt.ED25519_SIG, "a base64 Ed25519 signature (64 bytes)"),
  };
  fmt.checkAtAndSig(link);
  fmt.parseAuditClaim(o, link);
  if (o.itemId !== undefined) link.itemId = fmt.str(o, "itemId", fmt.UUID_LOWER, "a lower-case UUID");
  if (o.revision !== undefined) link.revision = fmt.int(o, "revision", 1);
  if (o.sha256 !== undefined) link.sha256 = fmt.str(o, "sha256", fmt.HEX64, "64 lower-case hex digits");
  if (o.prevSha256 !== undefined) link.prevSha256 = fmt.str(o, "prevSha256", fmt.HEX64, "64 lower-case hex digits");
  if (o.count !== undefined) link.count = fmt.int(o, "count", 0);
  if (o.setDigest !== undefined) link.setDigest = fmt.str(o, "setDigest", fmt.HEX64, "64 lower-case hex digits");
  if (o.added !== undefined) link.added = fmt.int(o, "added", 1);
  if (op === "create" && link.revision !== 1) fmt.fail("revision", "a created item's revision is 1");
  if (op === "update" && link.revision! < 2) fmt.fail("revision", "an updated item's revision is at least 2");
  if (op === "restore" && link.revision! < 2) fmt.fail("revision", "a restored item's revision is at least 2");
  return link;
}

// ---- Rules -------------------------------------------------------------------------------------

/** Where a log stands: its last link, the vault's key version there, and the last base link's seq. */
export interface ItemLogHead {
  vaultId: string;
  seq: number;
  head: string;
  keyVersion: number;
  rosterSeq: number;
  /** The seq of the last checkpoint or rekey link. */
  baseSeq: number;
}

/**
 * The head after `link`, or `ItemLinkError` when the link does not follow from `before` (null: the
 * log is empty, and starts with a checkpoint). Checks the chain (vault, seq, prev), the key
 * version (a rekey's is the one before's plus one, every other link keeps it) and that the roster
 * seq never goes back. What the link says of items is checked against a known set by
 * `applyToItems`; signatures and the actor's membership are the caller's to check.
 */
export function applyItemLink(before: ItemLogHead | null, link: ItemLink, hash: string): ItemLogHead {
  if (before === null) {
    if (link.seq !== 0) fmt.fail("seq", `the item log starts at seq 0, not ${link.seq}`);
    if (link.prev !== GENESIS_PREV) fmt.fail("prev", "the first link's prev must be 64 zeros");
    if (link.op !== "checkpoint") fmt.fail("op", `an item log starts with a checkpoint, not ${link.op}`);
  } else {
    if (link.vaultId !== before.vaultId) fmt.fail("vaultId", `the link names vault ${link.vaultId}, not ${before.vaultId}`);
    if (link.seq !== before.seq + 1) fmt.fail("seq", `the next link's seq is ${before.seq + 1}, not ${link.seq}`);
    if (link.prev !== before.head) fmt.fail("prev", `prev is not the hash of link ${before.seq}`);
    const keyVersion = link.op === "rekey" ? before.keyVersion + 1 : before.keyVersion;
    if (link.keyVersion !== keyVersion)
      fmt.fail("keyVersion", `the vault's key version at this link is ${keyVersion}, not ${link.keyVersion}`);
    if (link.rosterSeq < before.rosterSeq) fmt.fail("rosterSeq", `rosterSeq goes back from ${before.rosterSeq} to ${link.rosterSeq}`);
  }
  return {
    vaultId: link.vaultId,
    seq: link.seq,
    head: hash,
    keyVersion: link.keyVersion,
    rosterSeq: link.rosterSeq,
    baseSeq: isBase(link) ? link.seq : before!.baseSeq,
  };
}

/**
 * Applies what a create, update, delete or restore link says to a known item set (in place), refusing a
 * link that does not follow from it: a create or restore of an item that exists, an update or delete of one
 * that does not, or at another revision or ciphertext than the set holds. Base links change no
 * entry here (a rekey's set is known only from a listing; a checkpoint's is compared by the caller).
 */
export function applyToItems(items: Map<string, ItemState>, link: ItemLink): void {
  if (isBase(link)) return;
  const id = link.itemId!;
  const now = items.get(id);
  if (link.op === "create" || link.op === "restore") {
    if (now) fmt.fail("itemId", `item ${id} already exists`);
    items.set(id, { revision: link.revision!, sha256: link.sha256! });
    return;
  }
  if (!now) fmt.fail("itemId", `item ${id} does not exist`);
  const revisionBefore = link.op === "update" ? link.revision! - 1 : link.revision!;
  if (now.revision !== revisionBefore)
    fmt.fail("revision", `item ${id} is at revision ${now.revision}, the link follows revision ${revisionBefore}`);
  if (now.sha256 !== link.prevSha256) fmt.fail("prevSha256", `prevSha256 is not the digest of item ${id} as it was`);
  if (link.op === "delete") items.delete(id);
  else items.set(id, { revision: link.revision!, sha256: link.sha256! });
}

/** The item state a link found its item in: absent before a create or restore, else `revision - 1` (update) or `revision` (delete) with `prevSha256`. */
export function stateBefore(link: ItemLink): ItemState | null {
  if (link.op === "create" || link.op === "restore") return null;
  return { revision: link.op === "update" ? link.revision! - 1 : link.revision!, sha256: link.prevSha256! };
}

/** What an item listing must hold, given a base link and the links after it. */
export interface ExpectedItems {
  /** Items the links after the base touched: their state after the last such link, or null (deleted). */
  touched: Map<string, ItemState | null>;
  /** The state the first link after the base found each touched item in (null: it did not exist). */
  atBase: Map<string, ItemState | null>;
}

export function expectedAfter(linksAfterBase: readonly ItemLink[]): ExpectedItems {
  const touched = new Map<string, ItemState | null>();
  const atBase = new Map<string, ItemState | null>();
  // What each delete removed: a restore after it must bring exactly that back, at the next revision.
  const deleted = new Map<string, { state: ItemState; seq: number }>();
  for (const link of linksAfterBase) {
    if (isBase(link)) continue;
    const id = link.itemId!;
    const before = stateBefore(link);
    if (!atBase.has(id)) atBase.set(id, before);
    else if (!sameState(touched.get(id)!, before))
      fmt.fail("prevSha256", `link ${link.seq} does not follow from the state the link before left item ${id} in`);
    const gone = deleted.get(id);
    if (link.op === "restore" && gone && (link.revision !== gone.state.revision + 1 || link.sha256 !== gone.state.sha256))
      fmt.fail("sha256", `restore link ${link.seq} does not bring back item ${id} as link ${gone.seq} deleted it`);
    if (link.op === "delete") deleted.set(id, { state: stateBefore(link)!, seq: link.seq });
    else deleted.delete(id);
    touched.set(id, link.op === "delete" ? null : { revision: link.revision!, sha256: link.sha256! });
  }
  return { touched, atBase };
}

/** What a delete after the base removed, if the item's last link since the base is that delete: the state a restore must bring back. */
export function lastDeleted(linksAfterBase: readonly ItemLink[], itemId: string): { state: ItemState; link: ItemLink } | undefined {
  const last = linksAfterBase.findLast((l) => l.itemId === itemId);
  return last?.op === "delete" ? { state: stateBefore(last)!, link: last } : undefined;
}

/**
 * The digest each revision of an item had, as the links after the base pin it, for the item as it
 * is now (its links since its last create; a purged and re-created id starts again): a create,
 * update or restore names its new revision's, an update the one before's, a delete the one it
 * removed.
 */
export function pinnedRevisions(
  linksAfterBase: readonly ItemLink[],
  itemId: string,
): Map<number, { sha256: string; seq: number; actorId?: string }> {
  const pinned = new Map<number, { sha256: string; seq: number; actorId?: string }>();
  // A revision a later link names as the one before it keeps the pin of the link that wrote it (with its writer), if there was one.
  const pinBefore = (revision: number, l: ItemLink) => {
    if (!pinned.has(revision)) pinned.set(revision, { sha256: l.prevSha256!, seq: l.seq });
  };
  for (const l of linksAfterBase) {
    if (l.itemId !== itemId) continue;
    if (l.op === "create") pinned.clear();
    if (l.op === "update") pinBefore(l.revision! - 1, l);
    if (l.op === "delete") pinBefore(l.revision!, l);
    else pinned.set(l.revision!, { sha256: l.sha256!, seq: l.seq, actorId: l.actorId });
  }
  return pinned;
}

const sameState = (a: ItemState | null, b: ItemState | null): boolean =>
  a === null || b === null ? a === b : a.revision === b.revision && a.sha256 === b.sha256;

/** The item set at the base a listing implies: the untouched items as listed, each touched one as the links found it. */
export function setAtBase(listed: ReadonlyMap<string, ItemState>, expected: ExpectedItems): Map<string, ItemState> {
  const base = new Map<string, ItemState>();
  for (const [id, s] of listed) if (!expected.touched.has(id)) base.set(id, s);
  for (const [id, s] of expected.atBase) if (s) base.set(id, s);
  return base;
}
