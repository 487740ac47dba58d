/**
 * Whether a login's website matches a page, by the website's match mode (`UrlMatch` in
 * sdk/item-types.ts, the peers' modes as Bitwarden defines them):
 *
 * - `domain`: the same registrable domain, from the Public Suffix List with its private part
 *   (`login.acme-bank.com` is `acme-bank.com`; `a.github.io` and `b.github.io` are two sites);
 *   an IP address or a host of one label (`localhost`) is its own domain;
 * - `host`: the same host name and port, a scheme's default port written or not;
 * - `startsWith`: the page's address begins with the website's (as the URL API writes both);
 * - `exact`: the same address, the fragment aside;
 * - `never`: no page.
 *
 * Only http and https pages and websites take part: a `javascript:` or `data:` website, or a
 * `file:` or `chrome-extension:` page, matches nothing. Whether a match may also be filled (an
 * https login into an http page, a frame of another site) is fill-rules.ts's decision.
 * Nothing here throws: a malformed address matches nothing.
 */
import { getDomain } from "tldts";
import type { ItemUrl, UrlMatch } from "../item-types";
import { completeItemUrl } from "../items";

/** A page's site: its scheme, its host name (no port, no trailing dot) and its registrable domain. */
export interface Site {
  scheme: "http" | "https";
  host: string;
  /** The registrable domain, or the host itself for an IP address or a host of one label. */
  domain: string;
}

/** An http(s) address parsed once: what each match mode compares. */
export interface WebUrl extends Site {
  /** The host name and port, the scheme's default port left out: `acme.com`, `localhost:8080`. */
  hostPort: string;
  /** As the URL API writes it: host in lower case, default port dropped, `/` for an empty path. */
  href: string;
  /** `href` without its fragment. */
  withoutFragment: string;
}

/** A website of an item, parsed once, with its mode; `never` websites have none. */
export interface PreparedItemUrl {
  item: ItemUrl;
  match: Exclude<UrlMatch, "never">;
  url: WebUrl;
}

// The private part of the list (github.io, blogspot.com, ...) holds suffixes under which strangers
// register sites: without it every GitHub Pages site would share one domain.
const PSL = { allowPrivateDomains: true, extractHostname: false } as const;

/** The registrable domain of a host name, or the host itself where it has none (an IP, `localhost`, a bare suffix). */
export function registrableDomain(host: string): string {
  return getDomain(host, PSL) ?? host;
}

/** An http(s) address as its parts, or undefined for any other scheme and for text that is not an address. */
export function parseWebUrl(text: string): WebUrl | undefined {
  if (typeof text !== "string") return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  // `acme.com.` is the same name as `acme.com` (the root written out).
  const host = url.hostname.replace(/\.$/, "");
  if (host === "") return undefined;
  const href = url.href;
  const hash = href.indexOf("#");
  return {
    scheme: url.protocol === "https:" ? "https" : "http",
    host,
    domain: registrableDomain(host),
    hostPort: url.port === "" ? host : `${host}:${url.port}`,
    href,
    withoutFragment: hash === -1 ? href : href.slice(0, hash),
  };
}

/**
 * An item's website as an address: completed as the clients store it (`completeItemUrl`:
 * `acme.com` is `https://acme.com`). A host and port typed alone (`localhost:8080`,
 * `intranet.acme.com:8443`) reads to the URL API as a scheme named after the host, so it is
 * completed the same way; `javascript:1` has no dot and stays what it is.
 */
export function parseItemUrl(text: string): WebUrl | undefined {
  if (typeof text !== "string") return undefined;
  const completed = completeItemUrl(text);
  if (completed === undefined) return undefined;
  const hostAndPort = /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+):\d+(?:[/?#]|$)/i.test(completed);
  return parseWebUrl(hostAndPort ? `https://${completed}` : completed);
}

/** A website parsed for matching many pages, or undefined when it can match none (`never`, not http(s), malformed). */
export function prepareItemUrl(item: ItemUrl): PreparedItemUrl | undefined {
  if (item === null || typeof item !== "object") return undefined;
  const url = parseItemUrl(item.url);
  if (url === undefined) return undefined;
  switch (item.match) {
    case "domain":
    case "host":
    case "startsWith":
    case "exact":
      return { item, match: item.match, url };
    default:
      return undefined; // `never`, or a mode this client does not know: no page
  }
}

/** Whether a prepared website matches a parsed page, by the website's mode. */
export function preparedMatches(website: PreparedItemUrl, page: WebUrl): boolean {
  switch (website.match) {
    case "domain":
      return website.url.domain === page.domain;
    case "host":
      return website.url.hostPort === page.hostPort;
    case "startsWith":
      return page.href.startsWith(website.url.href);
    case "exact":
      return page.withoutFragment === website.url.withoutFragment;
  }
}

/** Whether an item's website matches the page at `pageUrl` (see the header for each mode). */
export function urlMatches(item: ItemUrl, pageUrl: string): boolean {
  const page = parseWebUrl(pageUrl);
  if (page === undefined) return false;
  const website = prepareItemUrl(item);
  return website !== undefined && preparedMatches(website, page);
}

/** The site of an http(s) page; undefined for any other address. */
export function siteOf(url: string): Site | undefined {
  const parsed = parseWebUrl(url);
  return parsed && { scheme: parsed.scheme, host: parsed.host, domain: parsed.domain };
}
