/**
 * Search over opened items, here on the client (the server sees only ciphertext): names,
 * usernames, websites (their host names too), tags and notes, through MiniSearch (prefix and fuzzy
 * matching, a name ranked above a note). One index over every vault the user can open, or one.
 */
import MiniSearch from "minisearch";
import { itemUrls, type ItemContent } from "./item-types";

export interface SearchableItem extends ItemContent {
  itemId: string;
  vaultId: string;
}

export interface SearchHit {
  vaultId: string;
  itemId: string;
  score: number;
}

interface Doc {
  id: string;
  vaultId: string;
  itemId: string;
  name: string;
  username: string;
  urls: string;
  tags: string;
  notes: string;
}

function hostOf(url: string): string {
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`).hostname;
  } catch {
    return "";
  }
}

const docOf = (i: SearchableItem): Doc => ({
  id: `${i.vaultId}/${i.itemId}`,
  vaultId: i.vaultId,
  itemId: i.itemId,
  name: i.name,
  username: i.fields.username ?? i.fields.email ?? i.fields.cardholder ?? "",
  urls: itemUrls(i)
    .flatMap((u) => [u.url, hostOf(u.url)])
    .join(" "),
  // A folder path ("Work/Servers") is found by each of its parts too (the tokenizer splits on "/").
  tags: (i.tags ?? []).join(" "),
  notes: i.fields.notes ?? "",
});

export class ItemSearch {
  private readonly index = new MiniSearch<Doc>({
    fields: ["name", "username", "urls", "tags", "notes"],
    storeFields: ["vaultId", "itemId"],
    // Host names split on dots too: "github" finds github.com.
    tokenize: (text) => text.split(/[\s\-_.,;:/@?&=#()[\]"']+/u).filter((t) => t.length > 0),
    searchOptions: { prefix: true, fuzzy: 0.2, boost: { name: 3, username: 2, urls: 2, tags: 2 }, combineWith: "AND" },
  });

  constructor(items: Iterable<SearchableItem> = []) {
    this.index.addAll([...items].map(docOf));
  }

  /** Adds or replaces an item. */
  put(item: SearchableItem): void {
    const doc = docOf(item);
    if (this.index.has(doc.id)) this.index.replace(doc);
    else this.index.add(doc);
  }

  remove(vaultId: string, itemId: string): void {
    const id = `${vaultId}/${itemId}`;
    if (this.index.has(id)) this.index.discard(id);
  }

  get size(): number {
    return this.index.documentCount;
  }

  /** The items matching every word of `query` (by prefix, or nearly), best first; within one vault with `vaultId`. */
  search(query: string, opts: { vaultId?: string; limit?: number } = {}): SearchHit[] {
    if (query.trim() === "") return [];
    const hits = this.index.search(query, opts.vaultId ? { filter: (r) => r.vaultId === opts.vaultId } : {});
    return hits.slice(0, opts.limit ?? 200).map((h) => ({ vaultId: h.vaultId as string, itemId: h.itemId as string, score: h.score }));
  }
}
