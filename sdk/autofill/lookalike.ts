/**
 * Whether a page's site imitates one the user has logins for: `acme-bank.com.evil.net`,
 * `acme-bαnk.com` (a Greek alpha), `acme-bamk.com`. It names the site imitated so that the
 * extension can say so instead of a bare "no login for this site".
 *
 * This is a warning aid, not the safety boundary. A login is filled only where its website
 * matches the page exactly by its mode (match.ts): a look-alike that this file misses still gets
 * nothing. The table of confusable characters below is therefore kept small (the letters of
 * Cyrillic and Greek that pass for Latin ones, 0 and 1, `rn` and `vv`) rather than complete.
 */
import punycode from "punycode/punycode.js";
import { parse } from "tldts";

const PSL = { allowPrivateDomains: true, extractHostname: false } as const;

/** Characters that pass for a Latin letter in a URL bar, mapped to it. */
const CONFUSABLE: Readonly<Record<string, string>> = {
  // Cyrillic
  а: "a",
  с: "c",
  ԁ: "d",
  е: "e",
  һ: "h",
  і: "i",
  ј: "j",
  ӏ: "l",
  о: "o",
  р: "p",
  ԛ: "q",
  ѕ: "s",
  у: "y",
  ԝ: "w",
  х: "x",
  // Greek
  α: "a",
  ι: "i",
  ν: "v",
  ο: "o",
  ρ: "p",
  υ: "u",
  χ: "x",
  // Digits
  "0": "o",
  "1": "l",
};

/** Letter pairs read as one letter. */
const PAIRS: ReadonlyArray<[RegExp, string]> = [
  [/rn/g, "m"],
  [/vv/g, "w"],
];

/** What a label looks like: accents dropped, confusable characters and pairs replaced by the Latin letter they pass for. */
function skeleton(text: string): string {
  const plain = /^[\x21-\x7e]*$/.test(text) ? text.toLowerCase() : text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  let s = Array.from(plain, (c) => CONFUSABLE[c] ?? c).join("");
  for (const [pair, letter] of PAIRS) s = s.replace(pair, letter);
  return s;
}

function unicode(name: string): string {
  if (!name.includes("xn--")) return name;
  try {
    return punycode.toUnicode(name);
  } catch {
    return name; // a malformed `xn--` label: compared as written
  }
}

/** A registrable domain cut at its public suffix, and how each part looks. */
interface Domain {
  domain: string;
  /** The label before the public suffix (`acme-bank` of `acme-bank.co.uk`), decoded and as it looks. */
  label: string;
  /** `label`'s characters (code points), for the edit distance. */
  chars: string[];
  suffix: string;
}

function describe(host: string): Domain | null {
  const { domain, publicSuffix: suffix } = parse(host, PSL);
  if (domain === null || suffix === null || domain.length <= suffix.length + 1) return null;
  const label = skeleton(unicode(domain.slice(0, -suffix.length - 1)));
  return { domain, label, chars: Array.from(label), suffix: skeleton(unicode(suffix)) };
}

/**
 * Domains described before: the menu asks on every focus with the same few thousand known
 * domains, and describing one (the suffix list, punycode, the skeleton) costs far more than
 * comparing two. Emptied when it grows past MAX_DESCRIBED, so pages visited do not pile up.
 */
const described = new Map<string, Domain | null>();
const MAX_DESCRIBED = 50_000;

function domainOf(host: string): Domain | undefined {
  let d = described.get(host);
  if (d === undefined) {
    d = describe(host);
    if (described.size >= MAX_DESCRIBED) described.clear();
    described.set(host, d);
  }
  return d ?? undefined;
}

/** Whether two strings of characters differ by at most one inserted, deleted or replaced, or two neighbours swapped. */
function withinOneEdit(x: string[], y: string[]): boolean {
  if (Math.abs(x.length - y.length) > 1) return false;
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let end = 0;
  while (end < x.length - start && end < y.length - start && x[x.length - 1 - end] === y[y.length - 1 - end]) end++;
  const restX = x.length - start - end;
  const restY = y.length - start - end;
  if (restX <= 1 && restY <= 1) return true;
  return restX === 2 && restY === 2 && x[start] === y[start + 1] && x[start + 1] === y[start];
}

/** Labels this short are too often one letter apart by chance (`ab.com`, `ac.com`) to call one a copy of the other. */
const MIN_EDITED_LABEL = 5;

function imitates(host: string, page: Domain, known: Domain): boolean {
  // The known domain among the labels in front of another site's domain: `acme-bank.com.evil.net`.
  // Only in front: `amazon.com.au` is a domain of its own, compared by its label below.
  const front = host.slice(0, Math.max(0, host.length - page.domain.length - 1));
  if (`.${front}.`.includes(`.${known.domain}.`)) return true;
  if (page.suffix !== known.suffix) return false;
  if (page.label === known.label) return true;
  return known.chars.length >= MIN_EDITED_LABEL && withinOneEdit(page.chars, known.chars);
}

/**
 * The known domain that the page's host imitates, or undefined. Undefined as well when the page's
 * registrable domain is itself known (an exact match is never a look-alike), for IP addresses and
 * hosts of one label, and for anything malformed. `pageHost` is a host name as the URL API gives it
 * (`xn--` labels for Unicode); `knownDomains` are registrable domains (a host is taken as its
 * domain), and what is returned is one of them, as a registrable domain.
 */
export function lookalikeOf(pageHost: string, knownDomains: Iterable<string>): string | undefined {
  if (typeof pageHost !== "string") return undefined;
  const host = pageHost.trim().toLowerCase().replace(/\.$/, "");
  const page = domainOf(host);
  if (page === undefined) return undefined;
  const known = new Map<string, Domain>();
  for (const name of knownDomains) {
    const d = typeof name === "string" ? domainOf(name.trim().toLowerCase().replace(/\.$/, "")) : undefined;
    if (d !== undefined) known.set(d.domain, d);
  }
  if (known.has(page.domain)) return undefined;
  for (const d of known.values()) if (imitates(host, page, d)) return d.domain;
  return undefined;
}
