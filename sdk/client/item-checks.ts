/**
 * What a client holds the server's answers against once it followed a vault's item log
 * (./item-log.ts): who could sign a link at a roster seq, a listing and a single item against
 * the log, each refusal naming the item and what was wrong.
 */
import { fromBase64, type Bytes } from "../../protocol/encoding";
import { SecurityError } from "../errors";
import { keyFingerprint } from "../../protocol/crypto/keys";
import { linkHash } from "../../protocol/formats/roster";
import { mayDo } from "../../protocol/vault-roles";
import {
  expectedAfter,
  itemLinkSignatureVerifies,
  itemSetDigest,
  setAtBase,
  type ItemLink,
  type ItemLogHead,
  type ItemState,
} from "../../protocol/formats/item-log";
import type { VaultRole } from "../../protocol/vault-roles";
import type { Rosters } from "./roster";
import type { Trust } from "./trust";
import type { VerifiedRoster } from "./types";

/** A log as this client verified it. */
export interface FollowedLog {
  head: ItemLogHead;
  /** The last checkpoint or rekey link, and every link after it, in order. */
  base: ItemLink;
  sinceBase: ItemLink[];
  /** The whole item set at the head, once a listing was checked against the log. */
  items?: Map<string, ItemState>;
  /**
   * When the base is an import this client followed from a known set: that set. An import only
   * adds: the listing after it must hold every one of these as it was (or as the links since left
   * it), and nothing else but new items at revision 1.
   */
  importedOver?: Map<string, ItemState>;
}

/** The log itself does not hold together (`ITEM_LOG_BROKEN`). */
export const broken = (vaultId: string, message: string) =>
  new SecurityError("ITEM_LOG_BROKEN", `the item log of vault ${vaultId}: ${message}`);

/** Each member's recorded key and role over the roster's seqs: who could sign an item link at a given roster seq. */
function membershipAt(roster: VerifiedRoster): (userId: string, rosterSeq: number) => { key: string; role: VaultRole } | undefined {
  const spans = new Map<string, Array<{ from: number; to: number; key: string; role: VaultRole }>>();
  const open = (userId: string, seq: number, key: string, role: VaultRole) => {
    close(userId, seq);
    const list = spans.get(userId) ?? [];
    list.push({ from: seq, to: Infinity, key, role });
    spans.set(userId, list);
  };
  const close = (userId: string, seq: number) => {
    const last = spans.get(userId)?.at(-1);
    if (last && last.to === Infinity) last.to = seq;
  };
  for (const link of roster.links) {
    if (link.op === "create" || link.op === "add") open(link.subjectId!, link.seq, link.subjectKey!, link.role!);
    else if (link.op === "adopt") for (const m of link.members!) open(m.userId, link.seq, m.key, m.role);
    else if (link.op === "role") open(link.subjectId!, link.seq, link.subjectKey!, link.role!);
    else if (link.op === "remove") close(link.subjectId!, link.seq);
    else if (link.op === "rotate") {
      // Their keys from this link on: the role goes on.
      const role = spans.get(link.subjectId!)?.at(-1)?.role;
      if (role) open(link.subjectId!, link.seq, link.subjectKey!, role);
    }
  }
  return (userId, rosterSeq) => {
    const span = spans.get(userId)?.find((s) => s.from <= rosterSeq && rosterSeq < s.to);
    return span && { key: span.key, role: span.role };
  };
}

/** Each link's actor was a member at the roster seq it names (an owner or admin for a rekey), and signed it with the key the roster recorded. */
export async function checkSigners(
  trust: Trust,
  rosters: Rosters,
  vaultId: string,
  links: readonly ItemLink[],
  given: VerifiedRoster,
): Promise<void> {
  let roster = given;
  // A link signed against a newer roster than the one given (a change landed meanwhile): the roster is read once more.
  if (links.some((l) => l.rosterSeq > roster.state.seq)) roster = (await rosters.verifiedRoster(vaultId)) ?? roster;
  const memberAt = membershipAt(roster);
  // Each link names the roster link it was signed on by its hash: one this client's verified roster does not have there is another history.
  const rosterHashes = new Map<number, string>();
  for (const seq of new Set(links.map((l) => l.rosterSeq))) {
    const rosterLink = roster.links[seq];
    if (rosterLink) rosterHashes.set(seq, await linkHash(rosterLink));
  }
  const verifiedKeys = new Map<string, Bytes>();
  const signed: Array<{ link: ItemLink; key: Bytes }> = [];
  for (const link of links) {
    if (link.rosterSeq > roster.state.seq)
      throw broken(vaultId, `link ${link.seq} names roster link ${link.rosterSeq}, past the roster's head ${roster.state.seq}`);
    if (link.rosterHead !== rosterHashes.get(link.rosterSeq))
      throw new SecurityError(
        "ROSTER_ROLLBACK",
        `item link ${link.seq} of vault ${vaultId} was signed on another roster link ${link.rosterSeq} than the one this client verified: the server shows members different rosters (a fork)`,
      );
    const member = memberAt(link.actorId, link.rosterSeq);
    if (!member) throw broken(vaultId, `link ${link.seq} is by ${link.actorId}, not a member at roster link ${link.rosterSeq}`);
    if (link.op === "rekey" && !mayDo(member.role, "rekey"))
      throw broken(vaultId, `link ${link.seq} is a rekey by a vault ${member.role}, who may not rekey`);
    let key = verifiedKeys.get(`${link.actorId}/${member.key}`);
    if (!key) {
      const keys = await trust.signerKeysOf(link.actorId, member.key);
      if ((await keyFingerprint(keys)) !== member.key)
        throw new SecurityError(
          "KEY_CHANGED",
          `item link ${link.seq} of vault ${vaultId}: the signer's keys are not the ones the roster recorded`,
          link.actorId,
        );
      key = fromBase64(keys.signingPublicKey);
      verifiedKeys.set(`${link.actorId}/${member.key}`, key);
    }
    signed.push({ link, key });
  }
  // The signatures, checked side by side (WebCrypto runs them off the main thread), the first bad one named.
  const verdicts = await Promise.all(signed.map(({ link, key }) => itemLinkSignatureVerifies(link, key)));
  const bad = verdicts.indexOf(false);
  if (bad >= 0) {
    const { link } = signed[bad]!;
    throw new SecurityError(
      "BAD_SIGNATURE",
      `item link ${link.seq} of vault ${vaultId} is not signed by its actor ${link.actorId}`,
      link.actorId,
    );
  }
}

/**
 * A listing (`listed`: each item's revision and digest) against the log followed at `followed`:
 * every item the links after the base touched must be there at the revision and digest of the
 * last such link, or absent if it deleted them; the rest, with the states the links found their
 * items in, must give the base's digest. Where the whole set is known, it must be exactly that.
 */
export async function checkListed(vaultId: string, followed: FollowedLog, listed: ReadonlyMap<string, ItemState>): Promise<void> {
  if (followed.items) {
    for (const [id, state] of followed.items) compareItem(vaultId, id, state, listed.get(id), "the log");
    for (const id of listed.keys()) if (!followed.items.has(id)) throw notInLog(vaultId, id, followed.sinceBase);
    return;
  }
  const expected = expectedAfter(followed.sinceBase);
  for (const [id, state] of expected.touched) compareItem(vaultId, id, state, listed.get(id), `link ${lastTouch(followed, id)}`);
  if (followed.importedOver) {
    // An import adds only: every item of the set it was made over, where no link since touched it, as it was; the rest new.
    for (const [id, state] of followed.importedOver)
      if (!expected.touched.has(id)) compareItem(vaultId, id, state, listed.get(id), `the set import ${followed.base.seq} was made over`);
    for (const [id, state] of listed)
      if (!expected.touched.has(id) && !followed.importedOver.has(id) && state.revision !== 1)
        throw new SecurityError(
          "ITEM_SET_MISMATCH",
          `the server lists item ${id} of vault ${vaultId} at revision ${state.revision}, which neither the set import ${followed.base.seq} was made over nor the import itself holds`,
        );
  }
  const base = setAtBase(listed, expected);
  if (base.size !== followed.base.count || (await itemSetDigest(base)) !== followed.base.setDigest)
    throw new SecurityError(
      "ITEM_SET_MISMATCH",
      `the items the server lists for vault ${vaultId} are not the ones its signed ${followed.base.op} (link ${followed.base.seq}) and the links after it give: an item was dropped, added back, or served at another revision`,
    );
}

function lastTouch(followed: FollowedLog, itemId: string): number {
  return followed.sinceBase.findLast((l) => l.itemId === itemId)?.seq ?? followed.base.seq;
}

function notInLog(vaultId: string, itemId: string, sinceBase: readonly ItemLink[]): SecurityError {
  const deleted = sinceBase.findLast((l) => l.itemId === itemId && l.op === "delete");
  return new SecurityError(
    "ITEM_RESURRECTED",
    deleted
      ? `the server lists item ${itemId} of vault ${vaultId}, which link ${deleted.seq} of its signed item log deleted`
      : `the server lists item ${itemId} of vault ${vaultId}, which its signed item log does not hold (never created, or deleted)`,
  );
}

/** One item of a listing against the state the log gives it (null: deleted). */
function compareItem(vaultId: string, itemId: string, logged: ItemState | null, listed: ItemState | undefined, where: string): void {
  if (logged === null) {
    if (listed)
      throw new SecurityError(
        "ITEM_RESURRECTED",
        `the server lists item ${itemId} of vault ${vaultId}, which ${where} of its signed item log deleted`,
      );
    return;
  }
  if (!listed)
    throw new SecurityError(
      "ITEM_DROPPED",
      `the server leaves item ${itemId} out of vault ${vaultId}, which its signed item log holds (${where}, revision ${logged.revision})`,
    );
  if (listed.revision !== logged.revision)
    throw new SecurityError(
      "ITEM_STALE",
      `the server shows item ${itemId} of vault ${vaultId} at revision ${listed.revision}, but its signed item log is at revision ${logged.revision} (${where}): an older or other version`,
    );
  if (listed.sha256 !== logged.sha256)
    throw new SecurityError(
      "ITEM_HASH_MISMATCH",
      `the server's ciphertext of item ${itemId} of vault ${vaultId} is not the one its signed item log names for revision ${logged.revision} (${where}): another revision's, labelled as this one`,
    );
}

/** A single item against the log (getItem): its state in the known set. */
export function checkItemAgainst(vaultId: string, followed: FollowedLog, itemId: string, listed: ItemState): void {
  const logged = followed.items!.get(itemId);
  if (!logged) throw notInLog(vaultId, itemId, followed.sinceBase);
  compareItem(vaultId, itemId, logged, listed, "the log");
}
