/**
 * Items: sealed here under the vault's current key (writes refused where the vault's roster says
 * they are unsafe: vaults.ts, `withCurrentKey`), opened here under the vault and item ids they
 * were asked for, so that the server cannot answer one item's record for another's.
 */
import { ApiError, SecurityError } from "../errors";
import { isCanonicalId } from "../../protocol/ids";
import { openItem, sealItem, type ItemContent } from "../items";
import { itemDigest, type ItemState } from "../../protocol/formats/item-log";
import { itemLogRaced, type FollowedLog, type ItemLogs } from "./item-log";
import { checkItemAgainst } from "./item-log/listing";
import type { Rosters } from "./roster";
import type { ClientCore } from "./core";
import type { Bytes } from "../../protocol/encoding";
import type { Item, StoredItem, Vault, VerifiedRoster } from "./types";
import type { Vaults } from "./vaults";
import { ItemSync, listOrder } from "./item-sync";

/** Items asked for per page of a vault's list. */
export const ITEM_PAGE = 500;
/** More items than any vault can hold (the server's VAULT_MAX_ITEMS is 50,000 by default). */
export const MAX_LISTED_ITEMS = 1_000_000;

/** How often a write is signed again after another write took its place in the item log (each time after a short random pause). */
const MAX_LOG_ATTEMPTS = 20;
/** How often a vault is read again when a write lands between reading its log and its items. */
const MAX_READ_ATTEMPTS = 10;

export class Items {
  /** The vaults' items as this client last read them, brought up to date by delta reads (item-sync.ts). */
  readonly synced: ItemSync;

  constructor(
    private readonly core: ClientCore,
    private readonly vaults: Vaults,
    private readonly rosters: Rosters,
    readonly logs: ItemLogs,
  ) {
    this.synced = new ItemSync(core, (vaultId) => this.listAllPages(vaultId), MAX_LISTED_ITEMS);
  }

  /**
   * Every stored item of the vault: what changed since this client's last read of it, applied to
   * what it read then (item-sync.ts), or the whole list the first time and whenever the server
   * says a delta cannot answer.
   */
  async listStoredItems(vaultId: string): Promise<StoredItem[]> {
    return this.synced.list(vaultId);
  }

  /**
   * Every stored item of the vault, page by page (ITEM_PAGE at a time, following `next`). The pages
   * must go forward: each item after the one before in the list's order (`createdAt`, then
   * `itemId`), so that a server cannot keep a client reading in a loop; and no vault lists more
   * than MAX_LISTED_ITEMS. A server of an earlier release answers every item at once, without `next`.
   */
  async listAllPages(vaultId: string): Promise<StoredItem[]> {
    const all: StoredItem[] = [];
    const seen = new Set<string>();
    let after: string | null | undefined;
    do {
      const query = `limit=${ITEM_PAGE}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const page = await this.core.http.request<{ items: StoredItem[]; next?: string | null }>(
        "GET",
        `/vaults/${encodeURIComponent(vaultId)}/items?${query}`,
      );
      if (!Array.isArray(page.items)) throw new SecurityError("INCONSISTENT", "the server answers an item list that is not a list");
      // An item listed twice is named as such, whatever the order it comes in.
      for (const item of page.items) {
        if (seen.has(item.itemId)) throw new SecurityError("ITEM_MISMATCH", `the server lists item ${item.itemId} twice`);
        seen.add(item.itemId);
      }
      for (const item of page.items) {
        const last = all.at(-1);
        if (last && listOrder(last, item) >= 0)
          throw new SecurityError("INCONSISTENT", `the server lists item ${item.itemId} out of order`);
        all.push(item);
      }
      if (all.length > MAX_LISTED_ITEMS) throw new SecurityError("INCONSISTENT", `the server lists more than ${MAX_LISTED_ITEMS} items`);
      if (page.next && page.items.length === 0)
        throw new SecurityError("INCONSISTENT", "the server answers an empty page that is not the last");
      after = page.next;
    } while (after);
    return all;
  }

  /**
   * The vault's items as stored, and on a signed vault checked against its signed item log, read
   * before and after the listing: only a listing between two reads of one head is compared (a
   * write landing in between makes it read again; a vault that keeps changing is `409`, never a
   * false alarm). A signed vault without a log yet has it started here, from this listing
   * (trusted on first use).
   */
  async listCheckedItems(vaultId: string, vault: Pick<Vault, "keyVersion">, roster: VerifiedRoster | null): Promise<StoredItem[]> {
    return (await this.listCheckedItemsAt(vaultId, vault, roster)).stored;
  }

  /** `listCheckedItems`, with the item log as followed when the listing was checked (null: a vault without a roster). */
  async listCheckedItemsAt(
    vaultId: string,
    vault: Pick<Vault, "keyVersion">,
    roster: VerifiedRoster | null,
  ): Promise<{ stored: StoredItem[]; log: FollowedLog | null }> {
    // A listing the log refuses is not kept: the next read of the vault is a full one.
    return this.forgetOnFailure(vaultId, () => this.checkedListing(vaultId, vault, roster));
  }

  private async checkedListing(
    vaultId: string,
    vault: Pick<Vault, "keyVersion">,
    roster: VerifiedRoster | null,
  ): Promise<{ stored: StoredItem[]; log: FollowedLog | null }> {
    if (!roster) return { stored: await this.listStoredItems(vaultId), log: null };
    for (let attempt = 1; ; attempt++) {
      const before = await this.logs.follow(vaultId, roster);
      const stored = await this.listStoredItems(vaultId);
      if (!before) {
        if (attempt >= 3) throw new SecurityError("ITEM_LOG_BROKEN", `the item log of vault ${vaultId} does not start`);
        await this.logs.start(vaultId, vault.keyVersion, roster.state, stored);
        continue;
      }
      const after = await this.logs.follow(vaultId, roster);
      if (after && after.head.seq === before.head.seq) {
        await this.logs.checkListing(vaultId, after, stored, roster.state);
        return { stored, log: after };
      }
      await settle(vaultId, attempt);
    }
  }

  /** The vault's item-log head with the item count, after checking the list against it; null for a vault without a roster or log. */
  async checkedHead(vaultId: string): Promise<{ seq: number; head: string; count: number } | null> {
    const { vault, roster } = await this.vaults.openCurrent(vaultId);
    if (!roster) return null;
    const stored = await this.listCheckedItems(vaultId, vault, roster);
    const log = await this.logs.follow(vaultId, roster);
    return log && { seq: log.head.seq, head: log.head.head, count: stored.length };
  }

  /** Every item of the vault, opened (each checked against this vault and its own id, each id once, and the signed item log). */
  async listItems(vaultId: string): Promise<Item[]> {
    let vaultKey: Bytes;
    let stored: StoredItem[];
    // A rekey that lands while the pages are read leaves items under a newer key than the one
    // opened: the listing starts over (twice at most) rather than report them as tampered.
    const overtaken = new OvertakenReads(vaultId, 3);
    for (let attempt = 1; ; attempt++) {
      const { vault, key, roster } = await this.vaults.openCurrent(vaultId);
      vaultKey = key;
      stored = await this.listCheckedItems(vaultId, vault, roster);
      if (!overtaken.listed(stored, vault, attempt)) break;
    }
    // Each id once: listStoredItems refuses an item listed twice.
    return this.forgetOnFailure(vaultId, async () => {
      for (const s of stored) assertItem(s, vaultId, s.itemId);
      return Promise.all(stored.map(async (s) => toItem(s, await openItem(vaultKey, vaultId, s))));
    });
  }

  /** Runs `read`; when it fails, the vault's kept items are dropped, so its next read is a full one. */
  private async forgetOnFailure<T>(vaultId: string, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      this.synced.forget(vaultId);
      throw err;
    }
  }

  /**
   * The item asked for, opened under its own vault and id: another item's record (`ITEM_MISMATCH`)
   * or ciphertext (`TAMPERED`) is refused; on a signed vault, so is a revision or ciphertext other
   * than the signed item log's, or an item it deleted (checked against the whole item set, which a
   * first read of the vault checks and keeps).
   */
  async getItem(vaultId: string, itemId: string): Promise<Item> {
    const path = `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`;
    for (let attempt = 1; ; attempt++) {
      const { vault, key, roster } = await this.vaults.openCurrent(vaultId);
      let before = roster && (await this.logs.follow(vaultId, roster));
      if (roster && !before?.items) {
        await this.listCheckedItems(vaultId, vault, roster);
        before = await this.logs.follow(vaultId, roster);
      }
      const stored = await this.core.http.request<StoredItem>("GET", path);
      assertItem(stored, vaultId, itemId);
      if (roster) {
        // Compared only between two reads of one head, whose whole item set is known.
        const after = await this.logs.follow(vaultId, roster);
        if (!after?.items || after.head.seq !== before?.head.seq) {
          await settle(vaultId, attempt);
          continue;
        }
        checkItemAgainst(vaultId, after, stored.itemId, { revision: stored.revision, sha256: await itemDigest(stored) });
      }
      return toItem(stored, await openItem(key, vaultId, stored));
    }
  }

  /**
   * Runs a write on a signed vault's item log: `write` gets the verified head to sign its link on
   * and the roster it signs against (starting the log first where the vault has none; with
   * `needsItems`, after checking the whole item set, so that a link never names an item state the
   * client did not verify), and runs again on the new head, with the roster read again, when
   * another write or a roster change took the place (409 on `itemLink.*`). A roster that moved to
   * a state where writing is not safe (a rekey due, another key) gives up the write.
   */
  async logged<T>(
    vaultId: string,
    vault: { keyVersion: number },
    firstRoster: VerifiedRoster,
    needsItems: boolean,
    write: (log: FollowedLog, roster: VerifiedRoster) => Promise<T>,
  ): Promise<T> {
    let roster = firstRoster;
    for (let attempt = 1; ; attempt++) {
      let log = await this.logs.follow(vaultId, roster);
      if (!log) {
        await this.logs.start(vaultId, vault.keyVersion, roster.state, await this.listStoredItems(vaultId));
        log = await this.logs.follow(vaultId, roster);
        if (!log) throw new SecurityError("ITEM_LOG_BROKEN", `the item log of vault ${vaultId} does not start`);
      }
      if (needsItems && !log.items) {
        await this.listCheckedItems(vaultId, vault, roster);
        log = (await this.logs.follow(vaultId, roster))!;
        // Other writes of this client moved the log on meanwhile, past the set just checked: once more.
        if (!log.items && attempt < MAX_LOG_ATTEMPTS) continue;
      }
      try {
        return await write(log, roster);
      } catch (err) {
        if (!(itemLogRaced(err) && attempt < MAX_LOG_ATTEMPTS)) throw err;
        const now = await this.rosters.verifiedRoster(vaultId);
        if (!now || now.state.rekeyRequired || now.state.keyVersion !== vault.keyVersion) throw err;
        roster = now;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 5)));
      }
    }
  }

  /** An item's state before a write, as the verified item set holds it (an item the log does not hold is not found). */
  private stateOf(vaultId: string, log: FollowedLog, itemId: string): ItemState {
    const known = log.items?.get(itemId);
    if (!known) throw new ApiError(404, "NOT_FOUND", `Item not found (vault ${vaultId}'s signed item log does not hold ${itemId})`);
    return known;
  }

  /** Seals a new item under the current key; a rekey in between (409) seals it again under the new one. */
  addItem(vaultId: string, content: ItemContent): Promise<Item> {
    const itemId = globalThis.crypto.randomUUID();
    return this.vaults.withCurrentKey(vaultId, async (vaultKey, keyVersion, roster) => {
      const sealed = await sealItem(vaultKey, vaultId, itemId, content);
      const sha256 = await itemDigest(sealed);
      return this.logged(vaultId, { keyVersion }, roster, false, async (log, signedRoster) => {
        const itemLink = await this.logs.sign(log.head, { op: "create", itemId, revision: 1, sha256 }, signedRoster.state);
        const stored = await this.core.http.request<StoredItem>("POST", `/vaults/${encodeURIComponent(vaultId)}/items`, {
          body: { ...sealed, keyVersion, itemLink },
        });
        assertItem(stored, vaultId, itemId);
        await this.logs.saw(itemLink);
        return toItem(stored, content);
      });
    });
  }

  /** Replaces an item's content; with `revision`, only if nobody changed it since (else 409). */
  editItem(vaultId: string, itemId: string, content: ItemContent, opts: { revision?: number } = {}): Promise<Item> {
    return this.vaults.withCurrentKey(vaultId, async (vaultKey, keyVersion, roster) => {
      const sealed = await sealItem(vaultKey, vaultId, itemId, content);
      const sha256 = await itemDigest(sealed);
      return this.logged(vaultId, { keyVersion }, roster, true, async (log, signedRoster) => {
        const before = this.stateOf(vaultId, log, itemId);
        const itemLink = await this.logs.sign(
          log.head,
          {
            op: "update",
            itemId,
            revision: before.revision + 1,
            sha256,
            prevSha256: before.sha256,
          },
          signedRoster.state,
        );
        const stored = await this.core.http.request<StoredItem>(
          "PUT",
          `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`,
          {
            body: {
              encryptedData: sealed.encryptedData,
              encryptedName: sealed.encryptedName,
              revision: opts.revision,
              keyVersion,
              itemLink,
            },
          },
        );
        assertItem(stored, vaultId, itemId);
        await this.logs.saw(itemLink);
        return toItem(stored, content);
      });
    });
  }

  /** Deletes an item; on a signed vault with the log's `delete` link, which names the revision and ciphertext deleted. */
  async deleteItem(vaultId: string, itemId: string): Promise<void> {
    const roster = await this.rosters.verifiedRoster(vaultId);
    if (!roster) {
      await this.core.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`);
      return;
    }
    const vault = await this.vaults.getVault(vaultId);
    await this.logged(vaultId, vault, roster, true, async (log, signedRoster) => {
      const before = this.stateOf(vaultId, log, itemId);
      const itemLink = await this.logs.sign(
        log.head,
        {
          op: "delete",
          itemId,
          revision: before.revision,
          prevSha256: before.sha256,
        },
        signedRoster.state,
      );
      await this.core.http.request("DELETE", `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`, {
        body: { itemLink },
      });
      await this.logs.saw(itemLink);
    });
  }
}

/** Reads that keep meeting a vault changing under them: a short random pause, then `409` after MAX_READ_ATTEMPTS. */
async function settle(vaultId: string, attempt: number): Promise<void> {
  if (attempt >= MAX_READ_ATTEMPTS)
    throw new ApiError(409, "CONFLICT", `vault ${vaultId} kept changing while it was read (${attempt} times): try again`);
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
}

/**
 * A read of a vault, then of its items, overtaken by a rekey: items under a newer key than the
 * vault's mean a rekey landed in between, and the read starts again (`listed` answers true). The
 * newer key must then show on the fresh read of the vault. A server that lists newer keys and
 * then answers the vault at an older one, or lists them on every attempt, would only be turning a
 * refusal (a tampered item) into retries: that is refused (`INCONSISTENT`).
 */
export class OvertakenReads {
  private newest = 0;

  constructor(
    private readonly vaultId: string,
    private readonly maxAttempts: number,
  ) {}

  /** Whether to read again: a rekey landed between the read of `vault` and the listing `stored`. */
  listed(stored: readonly StoredItem[], vault: Pick<Vault, "keyVersion">, attempt: number): boolean {
    if (vault.keyVersion < this.newest)
      throw new SecurityError(
        "INCONSISTENT",
        `the server listed items of vault ${this.vaultId} under key version ${this.newest}, then answered the vault at ${vault.keyVersion}`,
      );
    let newest = 0;
    for (const s of stored) if (Number.isSafeInteger(s.keyVersion) && s.keyVersion! > newest) newest = s.keyVersion!;
    if (newest <= vault.keyVersion) return false;
    if (attempt >= this.maxAttempts)
      throw new SecurityError(
        "INCONSISTENT",
        `the server listed items of vault ${this.vaultId} under a newer key than the vault's on each of ${attempt} reads`,
      );
    this.newest = newest;
    return true;
  }
}

/** The record is the item asked for, in the vault asked for, both ids exactly as the server stores them (lower case). */
export function assertItem(stored: StoredItem, vaultId: string, itemId: string): void {
  if (!isCanonicalId(stored?.itemId) || stored.itemId !== itemId || stored.vaultId !== vaultId)
    throw new SecurityError(
      "ITEM_MISMATCH",
      `asked for item ${itemId} of vault ${vaultId}, the server answered item ${stored?.itemId} of vault ${stored?.vaultId}`,
    );
}

export function toItem(stored: StoredItem, content: ItemContent): Item {
  return {
    ...content,
    itemId: stored.itemId,
    vaultId: stored.vaultId,
    type: content.type ?? "login",
    revision: stored.revision,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  };
}
