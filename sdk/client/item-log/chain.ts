/**
 * A vault's item log as links this client read: the chain checked link by link, held against the
 * heads this device saw, and what is known after it (the base, the links since, the item set).
 */
import { SecurityError } from "../../errors";
import {
  applyItemLink,
  applyToItems,
  expectedAfter,
  isBase,
  ItemLinkError,
  itemLinkHash,
  itemSetDigest,
  type ItemLink,
  type ItemLogHead,
  type ItemState,
} from "../../../protocol/formats/item-log";

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

/** A head this device holds for a log: the highest one it saw, or the one it verified. */
export interface HeldHead {
  seq: number;
  hash: string;
}

/** The log itself does not hold together (`ITEM_LOG_BROKEN`). */
export const broken = (vaultId: string, message: string) =>
  new SecurityError("ITEM_LOG_BROKEN", `the item log of vault ${vaultId}: ${message}`);

/** An item-log error of the protocol's rules as this vault's `ITEM_LOG_BROKEN`, with `what` before its message. */
function asBroken<T>(vaultId: string, what: (err: ItemLinkError) => string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof ItemLinkError) throw broken(vaultId, what(err));
    throw err;
  }
}

/**
 * The chain, link by link, from the one before the first (as the first names it): the last head,
 * and each link's hash by seq.
 */
export async function replayChain(
  vaultId: string,
  links: readonly ItemLink[],
): Promise<{ last: ItemLogHead; hashes: Map<number, string> }> {
  const first = links[0]!;
  let head: ItemLogHead | null =
    first.seq === 0
      ? null
      : {
          vaultId,
          seq: first.seq - 1,
          head: first.prev,
          keyVersion: first.op === "rekey" ? first.keyVersion - 1 : first.keyVersion,
          rosterSeq: 0,
          baseSeq: -1,
        };
  const hashes = new Map<number, string>();
  for (const link of links) {
    try {
      head = applyItemLink(head, link, await itemLinkHash(link));
    } catch (err) {
      if (err instanceof ItemLinkError) throw broken(vaultId, `link ${link.seq} is invalid (${err.field}): ${err.message}`);
      throw err;
    }
    hashes.set(link.seq, head.head);
  }
  return { last: head!, hashes };
}

/** The chain read reaches each head this device holds (`what` it did with it), with the same link there: else `ITEM_LOG_ROLLBACK`. */
export function checkNotBehind(
  vaultId: string,
  last: ItemLogHead,
  hashes: ReadonlyMap<number, string>,
  held: ReadonlyArray<readonly ["saw" | "verified", HeldHead | undefined]>,
): void {
  for (const [what, at] of held) {
    if (!at) continue;
    if (last.seq < at.seq)
      throw new SecurityError(
        "ITEM_LOG_ROLLBACK",
        `the server shows the item log of vault ${vaultId} up to link ${last.seq}, but this client ${what} link ${at.seq}: later writes, such as a deletion or a new password, would be undone`,
      );
    if (hashes.get(at.seq) !== at.hash)
      throw new SecurityError(
        "ITEM_LOG_ROLLBACK",
        `the server shows the item log of vault ${vaultId} with another link ${at.seq} than the one this client ${what}: a forked history`,
      );
  }
}

/**
 * What is known after the links new to this client (`newLinks`), from the log it verified before:
 * the set it held, link by link. Each new checkpoint must name exactly the set the links before it
 * leave (a member cannot bring back or revert items by signing one); after a rekey or an import
 * the set is known again only from a listing.
 */
export async function followFromKnown(
  vaultId: string,
  known: FollowedLog,
  newLinks: readonly ItemLink[],
  last: ItemLogHead,
): Promise<FollowedLog> {
  let items = known.items && new Map(known.items);
  let importedOver = known.importedOver;
  let base = known.base;
  let sinceBase = [...known.sinceBase];
  for (const link of newLinks) {
    if (isBase(link)) {
      if (items) await checkBaseAgainstSet(vaultId, link, items);
      // A rekey's and an import's new set is known only from a listing (checked against the link's
      // digest); an import's must also keep the set it was made over.
      importedOver = link.op === "import" ? items : undefined;
      if (link.op === "rekey" || link.op === "import") items = undefined;
      base = link;
      sinceBase = [];
      continue;
    }
    const set = items;
    if (set)
      asBroken(
        vaultId,
        (err) => `link ${link.seq} does not follow from the items before it: ${err.message}`,
        () => applyToItems(set, link),
      );
    sinceBase.push(link);
  }
  return {
    head: { ...last, baseSeq: base.seq },
    base,
    sinceBase,
    ...(items && { items }),
    ...(importedOver && !items && { importedOver }),
  };
}

/** A base link against the item set the links before it leave: a checkpoint names it, a rekey its size, an import its size after. */
async function checkBaseAgainstSet(vaultId: string, link: ItemLink, items: ReadonlyMap<string, ItemState>): Promise<void> {
  if (link.op === "checkpoint" && (items.size !== link.count || (await itemSetDigest(items)) !== link.setDigest))
    throw broken(vaultId, `checkpoint ${link.seq} names another item set than the links before it leave`);
  if (link.op === "rekey" && items.size !== link.count)
    throw broken(vaultId, `rekey ${link.seq} names ${link.count} items, the links before it leave ${items.size}`);
  if (link.op === "import" && items.size + link.added! !== link.count)
    throw broken(vaultId, `import ${link.seq} adds ${link.added} items to ${items.size} but names ${link.count}`);
}

/** What is known of a log this client had not verified before: its last base link and the links after it. */
export function followFromBase(vaultId: string, links: readonly ItemLink[], last: ItemLogHead): FollowedLog {
  const baseIndex = links.findLastIndex(isBase);
  if (baseIndex < 0) throw broken(vaultId, "no checkpoint to start from");
  return { head: { ...last, baseSeq: links[baseIndex]!.seq }, base: links[baseIndex]!, sinceBase: links.slice(baseIndex + 1) };
}

/** Each touched item's links since the base follow one another (revision and digest), whatever the listing. */
export function checkItemChains(vaultId: string, followed: FollowedLog): void {
  asBroken(
    vaultId,
    (err) => err.message,
    () => expectedAfter(followed.sinceBase),
  );
}
