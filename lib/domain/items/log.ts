/**
 * The server's check of a signed item-log link (the protocol: protocol/formats/item-log.ts, the code clients
 * follow logs with). It adds what only the server can check: the caller signed the link, it is
 * the next one on the vault's head, and it describes exactly the write the request makes (the
 * item, its revision, the SHA-256 of its ciphertexts before and after; for a rekey or checkpoint,
 * the digest of the whole item set). Synchronous (node:crypto), so the adapters call it inside
 * their write transactions, after the vault's lock.
 *
 * Refusals: `itemLinkRefused`, `400 INVALID` naming the link's field (`itemLink.sha256`);
 * `itemLinkRaced`, `409 CONFLICT` when the log or the item moved on since the client read it
 * (`itemLink.seq`, `itemLink.revision`): the SDK reads the new head and signs again.
 */
import { itemLinkMissing, itemLinkRaced, itemLinkRefused, itemLogWithoutRoster } from "./refusals";
import type { UserId } from "../ids";
import {
  applyItemLink,
  ITEM_LINK_FIELD,
  itemDigestBytes,
  ItemLinkError,
  itemLinkBytes,
  itemLinkSigningBytes,
  itemSetBytes,
  parseItemLink,
  type ItemLink,
  type ItemLogHead,
  type ItemState,
} from "../../../protocol/formats/item-log";
import { canonicalJson } from "../../../protocol/canonical";
import { signatureVerifies } from "../accounts/keys";
import { sha256Hex } from "../vaults/roster";

export type { ItemLink, ItemLogHead, ItemState };
export { ITEM_LINK_FIELD };

/** Links per page of GET /vaults/:vaultId/item-log: `limit`'s default and most. */
export const DEFAULT_ITEM_LOG_PAGE = 2_000;
export const MAX_ITEM_LOG_PAGE = 5_000;

/** A link that was right when the client signed it, but the log, the item or the roster moved on since (409: sign again). */
class RacedLinkError extends ItemLinkError {}

/** A request's item link, checked for form; undefined when there is none. */
export function parseRequestItemLink(raw: unknown): ItemLink | undefined {
  if (raw === undefined || raw === null) return undefined;
  return asRefusal(() => parseItemLink(raw));
}

/** SHA-256 (hex) of an item's ciphertexts, as links name them. */
export const itemDigestOf = (item: { encryptedName: string; encryptedData: string }): string => sha256Hex(itemDigestBytes(item));

/** The digest of an item set, as checkpoint and rekey links name it. */
export const itemSetDigestOf = (items: Iterable<readonly [string, ItemState]>): string => sha256Hex(itemSetBytes(items));

/** The write a request makes, which its link must describe exactly. */
export type ItemChange =
  | { op: "create"; itemId: string; after: ItemState }
  | { op: "update"; itemId: string; before: ItemState; after: ItemState }
  | { op: "delete"; itemId: string; before: ItemState }
  | { op: "restore"; itemId: string; after: ItemState }
  | { op: "checkpoint" | "rekey"; count: number; setDigest: string }
  | { op: "import"; count: number; setDigest: string; added: number };

/** What an item write reads under the vault's lock for its step in the item log. */
export interface LockedForItemLog {
  keyVersion: number;
  itemLog: ItemLogHead | null;
  roster: { seq: number; hash: string } | null;
  /** The caller's registered signing key. */
  signingPublicKey: string;
}

/** The step an item write (create, update, delete, checkpoint) takes in the log of a vault locked as `locked`. */
export function decideItemWriteStep(
  args: { vaultId: string; actorId: UserId; itemLink?: ItemLink },
  locked: LockedForItemLog,
  change: ItemChange,
): ItemLogEntry | undefined {
  return decideItemLinkStep(args.itemLink, {
    vaultId: args.vaultId,
    head: locked.itemLog,
    roster: locked.roster,
    keyVersionAfter: locked.keyVersion,
    actor: { userId: args.actorId, signingPublicKey: locked.signingPublicKey },
    change,
  });
}

/** A rekey's step: every item re-encrypted (`items`, checked to be exactly the vault's) at its current revision plus one. */
export function rekeyItemChange(
  current: ReadonlyMap<string, number>,
  items: ReadonlyArray<{ itemId: string; encryptedName: string; encryptedData: string }>,
): ItemChange {
  const set = items.map((i): [string, ItemState] => [i.itemId, { revision: (current.get(i.itemId) ?? 0) + 1, sha256: itemDigestOf(i) }]);
  return { op: "rekey", count: set.length, setDigest: itemSetDigestOf(set) };
}

/** The step a rekey takes in the vault's item log, after its roster step (the link may name the roster's new head). */
export function decideRekeyItemStep(
  link: ItemLink | undefined,
  args: {
    vaultId: string;
    head: ItemLogHead | null;
    rosterAfter: { seq: number; hash: string } | null;
    keyVersionAfter: number;
    actor: { userId: UserId; signingPublicKey: string };
    current: ReadonlyMap<string, number>;
    items: ReadonlyArray<{ itemId: string; encryptedName: string; encryptedData: string }>;
  },
): ItemLogEntry | undefined {
  if (!link && !args.head) return undefined;
  return decideItemLinkStep(link, {
    vaultId: args.vaultId,
    head: args.head,
    roster: args.rosterAfter,
    keyVersionAfter: args.keyVersionAfter,
    actor: args.actor,
    change: rekeyItemChange(args.current, args.items),
  });
}

/** What is stored: the link's canonical JSON (signature included) and the vault's new head. */
export interface ItemLogEntry {
  head: ItemLogHead;
  json: string;
}

export interface ItemLinkCheck {
  vaultId: string;
  /** The vault's item-log head, null when it has none yet. */
  head: ItemLogHead | null;
  /** The vault's roster head (null: no signed roster, so no item log). */
  roster: { seq: number; hash: string } | null;
  /** The vault's key version once the write is made. */
  keyVersionAfter: number;
  actor: { userId: UserId; signingPublicKey: string };
  change: ItemChange;
}

function asRefusal<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ItemLinkError) {
      const field = err.field === ITEM_LINK_FIELD ? ITEM_LINK_FIELD : `${ITEM_LINK_FIELD}.${err.field}`;
      if (err instanceof RacedLinkError) throw itemLinkRaced(field, err.message);
      throw itemLinkRefused(field, err.message);
    }
    throw err;
  }
}

const mismatch = (field: string, message: string) => new ItemLinkError(field, message);

/**
 * The step a write takes in the vault's item log: none for a vault without one and a request
 * without a link; `400 itemLink` for a write without its link on a vault that keeps a log, or a
 * link on a vault without a signed roster; else the checked link, to store with the write.
 */
export function decideItemLinkStep(link: ItemLink | undefined, check: ItemLinkCheck): ItemLogEntry | undefined {
  if (!link) {
    if (check.head) throw itemLinkMissing(ITEM_LINK_FIELD);
    return undefined;
  }
  if (check.roster === null) throw itemLogWithoutRoster(ITEM_LINK_FIELD);
  return checkItemLink(link, check);
}

/**
 * Checks a link against the vault's head and the request: the caller signed it, it follows the
 * head under the protocol's rules, it names the roster the vault has (not a later one) and it
 * describes this write.
 */
export function checkItemLink(link: ItemLink, check: ItemLinkCheck): ItemLogEntry {
  return asRefusal(() => {
    const { change, actor, head } = check;
    if (link.vaultId !== check.vaultId) throw mismatch("vaultId", `the link names vault ${link.vaultId}`);
    if (head && link.seq <= head.seq) throw new RacedLinkError("seq", `the item log is at seq ${head.seq}, the link at ${link.seq}`);
    if (!head && change.op !== "checkpoint") throw mismatch("op", "this vault's item log has not started: it starts with a checkpoint");
    if (link.op !== change.op) throw mismatch("op", `the request is a ${change.op}, the link a ${link.op}`);
    if (link.actorId !== actor.userId) throw mismatch("actorId", "the link's actor is not the caller");
    if (!signatureVerifies(Buffer.from(itemLinkSigningBytes(link)), Buffer.from(link.sig, "base64"), actor.signingPublicKey))
      throw mismatch("sig", "the signature does not verify with the caller's signing key");
    // The roster head the vault has now, exactly: the server vouches that the actor is a member there, as clients check.
    const roster = check.roster!;
    if (link.rosterSeq > roster.seq) throw mismatch("rosterSeq", `the vault's roster is at seq ${roster.seq}, not ${link.rosterSeq}`);
    if (link.rosterSeq < roster.seq)
      throw new RacedLinkError("rosterSeq", `the vault's roster moved on to seq ${roster.seq} since link ${link.rosterSeq}`);
    if (link.rosterHead !== roster.hash)
      throw mismatch("rosterHead", `rosterHead is not the hash of the vault's roster link ${roster.seq}`);
    const hash = sha256Hex(itemLinkBytes(link));
    const after = applyItemLink(head, link, hash);
    if (link.keyVersion !== check.keyVersionAfter)
      throw mismatch("keyVersion", `the vault's key version after this write is ${check.keyVersionAfter}, not ${link.keyVersion}`);
    describesChange(link, change);
    return { head: after, json: canonicalJson(link) };
  });
}

function describesChange(link: ItemLink, change: ItemChange): void {
  if (!("itemId" in change)) {
    if (change.op === "import" && link.added !== change.added)
      throw mismatch("added", `the request adds ${change.added} items, not ${link.added}`);
    if (link.count !== change.count) throw mismatch("count", `the vault holds ${change.count} items after this, not ${link.count}`);
    if (link.setDigest !== change.setDigest) throw mismatch("setDigest", "setDigest is not the digest of the vault's items after this");
    return;
  }
  if (link.itemId !== change.itemId) throw mismatch("itemId", "the link names another item than the request");
  if ("before" in change) {
    if (link.revision !== (change.op === "update" ? change.before.revision + 1 : change.before.revision))
      throw new RacedLinkError("revision", `the item is at revision ${change.before.revision}`);
    if (link.prevSha256 !== change.before.sha256)
      throw new RacedLinkError("prevSha256", "prevSha256 is not the digest of the item as stored");
  }
  if (change.op === "restore" && link.revision !== change.after.revision)
    throw mismatch("revision", `the item comes back out of the trash at revision ${change.after.revision}, not ${link.revision}`);
  if ("after" in change && link.sha256 !== change.after.sha256)
    throw mismatch("sha256", "sha256 is not the digest of the request's encryptedName and encryptedData");
}
