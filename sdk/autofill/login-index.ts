/**
 * The logins that match a page, found among many (10,000 and more) at the cost of the page's
 * bucket rather than the whole vault: the inline menu asks on every focus of a login field.
 *
 * Every website that can match a page shares the page's registrable domain (or its host, for an
 * IP or `localhost`), whatever its mode: a `host`, `startsWith` or `exact` website names the
 * page's host, so it is bucketed under that host's domain. Each website is parsed once, when the
 * index is built; a lookup parses the page once and compares within its bucket. `never` websites
 * are left out, so they are never returned.
 */
import type { ItemUrl } from "../item-types";
import { parseWebUrl, preparedMatches, prepareItemUrl, type PreparedItemUrl } from "./match";

/** One entry's websites under one domain. */
interface Placed {
  entry: number;
  websites: PreparedItemUrl[];
}

export class LoginIndex<T extends { urls: ItemUrl[] }> {
  private readonly entries: T[];
  private readonly buckets = new Map<string, Placed[]>();

  constructor(entries: Iterable<T>) {
    this.entries = [...entries];
    this.entries.forEach((entry, i) => {
      const byDomain = new Map<string, PreparedItemUrl[]>();
      for (const url of Array.isArray(entry.urls) ? entry.urls : []) {
        const website = prepareItemUrl(url);
        if (website === undefined) continue;
        const list = byDomain.get(website.url.domain);
        if (list) list.push(website);
        else byDomain.set(website.url.domain, [website]);
      }
      for (const [domain, websites] of byDomain) {
        const bucket = this.buckets.get(domain);
        if (bucket) bucket.push({ entry: i, websites });
        else this.buckets.set(domain, [{ entry: i, websites }]);
      }
    });
  }

  /** The entries with a website that matches the page (match.ts `urlMatches`), each once, in the order given. */
  matches(pageUrl: string): T[] {
    const page = parseWebUrl(pageUrl);
    const bucket = page && this.buckets.get(page.domain);
    if (!page || !bucket) return [];
    return bucket.filter((p) => p.websites.some((w) => preparedMatches(w, page))).map((p) => this.entries[p.entry]!);
  }

  /** The registrable domains (and hosts, for IPs and `localhost`) of every website that can match a page: `lookalikeOf`'s known domains. */
  domains(): Set<string> {
    return new Set(this.buckets.keys());
  }
}
