/**
 * A vault's stored items kept between reads and brought up to date by delta reads, checked as a
 * full read is. Why and how: docs/design/delta-reads.md.
 */
import { SecurityError } from "../errors";
import type { ClientCore } from "./core";
import type { StoredItem } from "./types";

/** The largest cursor the client takes (the server's counters stay far below). */
const MAX_CURSOR = Number.MAX_SAFE_INTEGER;

interface Synced {
  cursor: number;
  items: Map<string, StoredItem>;
}

interface DeltaAnswer {
  items: StoredItem[];
  deleted: string[];
  cursor: number;
  full: boolean;
}

export class ItemSync {
  private readonly vaults = new Map<string, Synced>();

  constructor(
    private readonly core: ClientCore,
    /** The whole list, page by page (Items.listAllPages). */
    private readonly listAll: (vaultId: string) => Promise<StoredItem[]>,
    /** How many items a vault may list at most. */
    private readonly maxItems: number,
  ) {}

  /** The vault's stored items now, in the list's order (`createdAt`, then `itemId`). */
  async list(vaultId: string): Promise<StoredItem[]> {
    try {
      return await this.read(vaultId);
    } catch (err) {
      this.forget(vaultId);
      throw err;
    }
  }

  /** Drops what this client keeps of a vault (all vaults without an id): its next read is a full one. */
  forget(vaultId?: string): void {
    if (vaultId === undefined) this.vaults.clear();
    else this.vaults.delete(vaultId);
  }

  private async read(vaultId: string): Promise<StoredItem[]> {
    const known = this.vaults.get(vaultId);
    const since = known?.cursor ?? 0;
    const answer = checkAnswer(
      await this.core.http.request<unknown>("GET", `/vaults/${encodeURIComponent(vaultId)}/items?since=${since}`),
      since,
    );
    let items: Map<string, StoredItem>;
    if (answer.full) {
      // The cursor was read before the list: whatever lands meanwhile comes again in the next delta.
      items = new Map((await this.listAll(vaultId)).map((i) => [i.itemId, i]));
    } else {
      items = new Map(known?.items);
      for (const item of answer.items) items.set(item.itemId, item);
      for (const itemId of answer.deleted) items.delete(itemId);
    }
    if (items.size > this.maxItems) throw new SecurityError("INCONSISTENT", `the server lists more than ${this.maxItems} items`);
    this.vaults.set(vaultId, { cursor: answer.cursor, items });
    return [...items.values()].sort(listOrder);
  }
}

/** The item list's order: `createdAt`, then `itemId` (negative when `a` comes first). */
export function listOrder(a: Pick<StoredItem, "createdAt" | "itemId">, b: Pick<StoredItem, "createdAt" | "itemId">): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0;
}

/** A delta answer as the client takes it, or the refusal that names what is wrong with it. */
function checkAnswer(body: unknown, since: number): DeltaAnswer {
  const a = body as Partial<DeltaAnswer> | null;
  if (
    !a ||
    !Array.isArray(a.items) ||
    !Array.isArray(a.deleted) ||
    typeof a.full !== "boolean" ||
    !Number.isSafeInteger(a.cursor) ||
    a.cursor! < 0 ||
    a.cursor! > MAX_CURSOR
  )
    throw new SecurityError("INCONSISTENT", "the server answers a delta read with something that is not one");
  if (a.full && (a.items.length > 0 || a.deleted.length > 0))
    throw new SecurityError("INCONSISTENT", "the server answers a full read with items in it");
  if (!a.full && a.cursor! < since) throw new SecurityError("INCONSISTENT", "the server's cursor goes back without a full read");
  const seen = new Set<string>();
  for (const item of a.items) {
    if (!item || typeof item.itemId !== "string") throw new SecurityError("INCONSISTENT", "the server answers an item without an id");
    if (seen.has(item.itemId)) throw new SecurityError("ITEM_MISMATCH", `the server answers item ${item.itemId} twice`);
    seen.add(item.itemId);
  }
  for (const itemId of a.deleted) {
    if (typeof itemId !== "string") throw new SecurityError("INCONSISTENT", "the server names a deleted item without an id");
    if (seen.has(itemId)) throw new SecurityError("ITEM_MISMATCH", `the server answers item ${itemId} as both changed and gone`);
    seen.add(itemId);
  }
  return a as DeltaAnswer;
}
