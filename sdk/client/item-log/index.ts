/**
 * A vault's signed item log as this client follows, keeps and extends it (the checks: chain.ts,
 * signers.ts, listing.ts). Why and how: docs/design/item-log-following.md.
 */
import { ApiError, SecurityError } from "../../errors";
import {
  applyItemLink,
  applyToItems,
  isBase,
  ItemLinkError,
  itemLinkHash,
  itemSetDigest,
  itemStatesOf,
  parseItemLink,
  signItemLink,
  type ItemLink,
  type ItemLogHead,
  type ItemState,
  type UnsignedItemLink,
} from "../../../protocol/formats/item-log";
import { GENESIS_PREV } from "../../../protocol/formats/roster";
import type { RosterHead } from "../../pins";
import { SerialQueue, type ClientCore } from "../core";
import type { Trust } from "../trust";
import type { Rosters } from "../roster";
import { claimsIn, type Audit } from "../audit";
import type { StoredItem, VerifiedRoster } from "../types";
import { broken, checkItemChains, checkNotBehind, followFromBase, followFromKnown, replayChain, type FollowedLog } from "./chain";
import { checkListed } from "./listing";
import { checkSigners } from "./signers";

/** Most links read to follow one log (pages of the server's size): far above CHECKPOINT_EVERY. */
const MAX_FOLLOWED_LINKS = 1_000_000;
/** Most links one page may hold (the server's MAX_ITEM_LOG_PAGE). */
const MAX_LOG_PAGE = 5_000;

/** The key the seen head is kept under in the device's head store (shared with rosters, by vault id). */
export const itemHeadKey = (vaultId: string) => `items/${vaultId}`;

export type { FollowedLog };

/** The server's refusal of an item link because the log or the item moved on (409 on `itemLink.*`). */
export function itemLogRaced(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409 && (err.field ?? "").startsWith("itemLink");
}

export class ItemLogs {
  private readonly known = new Map<string, FollowedLog>();
  /** Seen heads are compared and moved one follow at a time. */
  private readonly heads = new SerialQueue();

  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly audit: Audit,
  ) {}

  /** Forgets what this client verified of a vault's log (the highest head seen stays). */
  forget(vaultId: string): void {
    this.known.delete(vaultId);
  }

  private async fetch(vaultId: string, from: number | undefined): Promise<{ links: unknown[]; baseSeq: number | null }> {
    const links: unknown[] = [];
    let baseSeq: number | null = null;
    let next: number | null | undefined = from;
    let first = true;
    do {
      const page = await this.core.http.request<{ links: unknown; baseSeq: unknown; next: unknown }>(
        "GET",
        `/vaults/${encodeURIComponent(vaultId)}/item-log`,
        { query: { from: next } },
      );
      if (!Array.isArray(page.links) || page.links.length > MAX_LOG_PAGE)
        throw broken(vaultId, `the server's answer is not a list of at most ${MAX_LOG_PAGE} links`);
      if (first) baseSeq = typeof page.baseSeq === "number" ? page.baseSeq : null;
      first = false;
      links.push(...page.links);
      if (links.length > MAX_FOLLOWED_LINKS) throw broken(vaultId, `more than ${MAX_FOLLOWED_LINKS} links since the last checkpoint`);
      // A next page starts right after this one's last link: a server cannot keep a client reading the same links.
      const lastSeq = (page.links.at(-1) as { seq?: unknown } | undefined)?.seq;
      if (page.next !== null && page.next !== undefined && (typeof lastSeq !== "number" || page.next !== lastSeq + 1))
        throw broken(vaultId, "the server's next page does not follow");
      next = page.next as number | null;
    } while (next !== null && next !== undefined);
    return { links, baseSeq };
  }

  /**
   * The vault's item log, followed and verified from what this client knows (or the last base
   * link), never back from nor forked from the highest head this device saw. Null for a vault
   * without a log (refused when this device saw one: `ITEM_LOG_ROLLBACK`).
   */
  async follow(vaultId: string, roster: VerifiedRoster): Promise<FollowedLog | null> {
    const known = this.known.get(vaultId);
    const seen = await this.core.rosterHeads.get(itemHeadKey(vaultId));
    const links = await this.linksToFollow(vaultId, known, seen);
    if (!links) return null;
    const { last, hashes } = await replayChain(vaultId, links);
    checkNotBehind(vaultId, last, hashes, [
      ["saw", seen ? { seq: seen.seq, hash: seen.hash } : undefined],
      ["verified", known ? { seq: known.head.seq, hash: known.head.head } : undefined],
    ]);
    if (links[0]!.seq === 0 && links[0]!.prev !== GENESIS_PREV) throw broken(vaultId, "its first link does not start a log");
    const newLinks = known ? links.filter((l) => l.seq > known.head.seq) : links;
    await this.checkNewLinks(vaultId, links, newLinks, Math.max(known?.head.seq ?? -1, seen?.seq ?? -1), roster);
    const followed = known ? await followFromKnown(vaultId, known, newLinks, last) : followFromBase(vaultId, links, last);
    checkItemChains(vaultId, followed);
    await this.remember(vaultId, followed, hashes);
    return followed;
  }

  /**
   * The links to follow, parsed: from the lower of the head this client verified and the one this
   * device saw, read back to the last base link where they do not reach one (a device that was
   * away, or a new one). Null for a vault without a log.
   */
  private async linksToFollow(vaultId: string, known: FollowedLog | undefined, seen: RosterHead | undefined): Promise<ItemLink[] | null> {
    const start = Math.min(known?.head.seq ?? Infinity, seen?.seq ?? Infinity);
    let res = await this.fetch(vaultId, Number.isFinite(start) ? start : undefined);
    if (res.links.length === 0) {
      if (known || seen)
        throw new SecurityError(
          "ITEM_LOG_ROLLBACK",
          `the server shows vault ${vaultId} without an item log, but this client saw its link ${known?.head.seq ?? seen!.seq}: its item history would be undone`,
        );
      return null;
    }
    let links = res.links.map((raw, i) => this.parse(vaultId, raw, i));
    const reachesBase = links.some(isBase) || (known && links[0]!.seq === known.head.seq);
    if (!reachesBase && res.baseSeq !== null && res.baseSeq < links[0]!.seq) {
      res = await this.fetch(vaultId, res.baseSeq);
      links = res.links.map((raw, i) => this.parse(vaultId, raw, i));
      if (links.length === 0) throw broken(vaultId, "the server answers no links from its own last checkpoint");
    }
    if (Number.isFinite(start) && links[0]!.seq > start)
      throw new SecurityError(
        "ITEM_LOG_ROLLBACK",
        `the server's item log of vault ${vaultId} starts after link ${start}, which this client saw`,
      );
    return links;
  }

  /**
   * The links new to this client (`newLinks`) are signed by members as the roster recorded them;
   * the audit heads the signers of links new to this device (past `heldSeq`) verified are judged
   * against its own before its head moves past them.
   */
  private async checkNewLinks(
    vaultId: string,
    links: readonly ItemLink[],
    newLinks: readonly ItemLink[],
    heldSeq: number,
    roster: VerifiedRoster,
  ): Promise<void> {
    await checkSigners(this.trust, this.rosters, vaultId, newLinks, roster);
    const unseen = links.filter((l) => l.seq > heldSeq);
    await this.audit.witness(
      this.core.account.orgId,
      claimsIn(unseen, (l) => `item link ${l.seq} of vault ${vaultId}`),
    );
  }

  private parse(vaultId: string, raw: unknown, index: number): ItemLink {
    try {
      const link = parseItemLink(raw);
      if (link.vaultId !== vaultId) throw new ItemLinkError("vaultId", `it names vault ${link.vaultId}`);
      return link;
    } catch (err) {
      if (err instanceof ItemLinkError)
        throw broken(vaultId, `entry ${index} of the server's answer is invalid (${err.field}): ${err.message}`);
      throw err;
    }
  }

  /**
   * Keeps what was verified, and moves the seen head forward: compared again and moved one follow
   * at a time (two follows at once cannot each accept another fork), never back. `hashes` are the
   * followed chain's link hashes by seq, where there are any.
   */
  private async remember(vaultId: string, followed: FollowedLog, hashes?: ReadonlyMap<number, string>): Promise<void> {
    await this.heads.run(async () => {
      const seen = await this.core.rosterHeads.get(itemHeadKey(vaultId));
      // A head seen meanwhile past this one (a write landed between the two reads) is not compared: this one is older, not other.
      if (seen && hashes && seen.seq <= followed.head.seq && hashes.get(seen.seq) !== seen.hash)
        throw new SecurityError(
          "ITEM_LOG_ROLLBACK",
          `the server shows the item log of vault ${vaultId} otherwise than this client saw it meanwhile (link ${seen.seq}): a forked or rolled back history`,
        );
      const current = this.known.get(vaultId);
      if (!current || followed.head.seq >= current.head.seq) this.known.set(vaultId, followed);
      if (!seen || followed.head.seq > seen.seq)
        await this.core.rosterHeads.set(itemHeadKey(vaultId), { seq: followed.head.seq, hash: followed.head.head });
    });
  }

  /**
   * Checks a listing of the vault's items against the log followed at `followed` (read before the
   * listing; the caller reads the log again after it and calls this only when the head did not
   * move). Every item the links after the base touched must be there at the revision and digest
   * of the last such link, or absent if it deleted them; the rest, with the states the links found
   * their items in, must give the base's digest. Names the item and what was wrong.
   */
  async checkListing(
    vaultId: string,
    followed: FollowedLog,
    stored: readonly StoredItem[],
    roster: { seq: number; head: string },
  ): Promise<Map<string, ItemState>> {
    const listed = await itemStatesOf(stored);
    await checkListed(vaultId, followed, listed);
    followed.items = listed;
    if (this.known.get(vaultId)?.head.seq === followed.head.seq) this.known.set(vaultId, followed);
    await this.maybeCheckpoint(vaultId, followed, roster);
    return listed;
  }

  /** A member that holds the whole set signs a checkpoint once CHECKPOINT_EVERY links passed since the last base (best effort). */
  private async maybeCheckpoint(vaultId: string, followed: FollowedLog, roster: { seq: number; head: string }): Promise<void> {
    if (!followed.items || followed.head.seq - followed.head.baseSeq < this.core.checkpointEvery || !this.core.keys) return;
    const link = await this.sign(
      followed.head,
      {
        op: "checkpoint",
        count: followed.items.size,
        setDigest: await itemSetDigest(followed.items),
      },
      roster,
    );
    try {
      await this.core.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/item-log`, { body: { itemLink: link } });
      await this.saw(link, followed.items);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // Another write took the place first: the next open signs one.
    }
  }

  /** Starts a signed vault's log with a checkpoint of the items as the server lists them now (trusted on first use, as an adopted roster). */
  async start(vaultId: string, keyVersion: number, roster: { seq: number; head: string }, stored: readonly StoredItem[]): Promise<void> {
    const items = await itemStatesOf(stored);
    const link = await signItemLink(
      {
        vaultId,
        seq: 0,
        prev: GENESIS_PREV,
        op: "checkpoint",
        actorId: this.core.account.userId,
        at: new Date().toISOString(),
        keyVersion,
        rosterSeq: roster.seq,
        rosterHead: roster.head,
        count: items.size,
        setDigest: await itemSetDigest(items),
        ...(await this.audit.claimToSign()),
      },
      this.core.requireKeys().signingPrivateKey,
    );
    try {
      await this.core.http.request("POST", `/vaults/${encodeURIComponent(vaultId)}/item-log`, { body: { itemLink: link } });
    } catch (err) {
      if (itemLogRaced(err)) return; // another member started it first
      throw err;
    }
    await this.saw(link, items);
  }

  /** This client's next link on `head`, signed against the roster head `roster` (its seq and hash). */
  async sign(
    head: ItemLogHead,
    fields: Omit<UnsignedItemLink, "vaultId" | "seq" | "prev" | "actorId" | "at" | "keyVersion" | "rosterSeq" | "rosterHead"> & {
      keyVersion?: number;
    },
    roster: { seq: number; head: string },
  ): Promise<ItemLink> {
    return signItemLink(
      {
        vaultId: head.vaultId,
        seq: head.seq + 1,
        prev: head.head,
        actorId: this.core.account.userId,
        at: new Date().toISOString(),
        keyVersion: head.keyVersion,
        rosterSeq: roster.seq,
        rosterHead: roster.head,
        ...fields,
        ...(await this.audit.claimToSign()),
      },
      this.core.requireKeys().signingPrivateKey,
    );
  }

  /**
   * Takes a link of ours the server accepted as the new head. `items`, for a base link, is the set
   * it names; otherwise the known set (if any) follows the link.
   */
  async saw(link: ItemLink, items?: Map<string, ItemState>): Promise<void> {
    const vaultId = link.vaultId;
    const known = this.known.get(vaultId);
    const hash = await itemLinkHash(link);
    const follows = known && known.head.seq + 1 === link.seq && known.head.head === link.prev;
    let followed: FollowedLog | undefined;
    if (link.seq === 0 || isBase(link)) {
      const head: ItemLogHead = {
        vaultId,
        seq: link.seq,
        head: hash,
        keyVersion: link.keyVersion,
        rosterSeq: link.rosterSeq,
        baseSeq: link.seq,
      };
      followed = { head, base: link, sinceBase: [], ...(items && { items }) };
    } else if (follows) {
      const head = applyItemLink(known.head, link, hash);
      const set = known.items && new Map(known.items);
      if (set) applyToItems(set, link);
      followed = { head, base: known.base, sinceBase: [...known.sinceBase, link], ...(set && { items: set }) };
    }
    if (followed) await this.remember(vaultId, followed);
    // Known past it already (another follow of this client read it): kept; behind and elsewhere: read again next time.
    else if (!known || known.head.seq < link.seq) this.known.delete(vaultId);
  }
}
