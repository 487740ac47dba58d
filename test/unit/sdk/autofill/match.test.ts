/**
 * Which pages a login's website matches, mode by mode (sdk/autofill/match.ts): the registrable
 * domain with the private suffixes (github.io), hosts with ports, prefixes and exact addresses;
 * never a page that is not http(s), never a website that is not, never a throw.
 */
import { siteOf, urlMatches } from "../../../../sdk/autofill";
import type { UrlMatch } from "../../../../sdk/item-types";

describe("domain: the same registrable domain", () => {
  test.each<[string, string, boolean]>([
    ["https://acme-bank.com", "https://acme-bank.com/login", true],
    ["https://acme-bank.com", "https://accounts.acme-bank.com/signin", true],
    ["acme-bank.com", "https://login.acme-bank.com/", true],
    ["https://login.acme-bank.com", "https://www.acme-bank.com/", true],
    ["https://acme-bank.com", "https://ACME-BANK.COM./", true],
    ["https://acme-bank.com", "https://acme-bank.com.evil.net/", false],
    ["https://acme-bank.com", "https://evil-acme-bank.com/", false],
    ["https://acme-bank.com", "https://acme-bank.co/", false],
    ["https://www.bbc.co.uk", "https://news.bbc.co.uk/", true],
    ["https://bbc.co.uk", "https://other.co.uk/", false],
    // Under a private suffix each site is its own: one GitHub Pages site is not another.
    ["https://alice.github.io", "https://mallory.github.io/", false],
    ["https://alice.github.io/app", "https://alice.github.io/other", true],
    ["https://acme-bαnk.com", "https://xn--acme-bnk-j9f.com/", true],
    ["https://acme-bank.com", "https://xn--acme-bnk-j9f.com/", false],
    // An IP address or a one-label host is its own domain; the port does not count in this mode.
    ["http://127.0.0.1:8080", "http://127.0.0.1:3000/", true],
    ["http://127.0.0.1", "http://127.0.0.2/", false],
    ["http://192.168.1.10", "http://10.0.1.10/", false],
    ["http://[::1]:8080", "http://[::1]/", true],
    ["http://localhost:8080", "http://localhost:3000/", true],
    ["http://localhost", "http://localhost.evil.net/", false],
    ["http://intranet", "http://intranet/", true],
    ["http://intranet", "http://extranet/", false],
  ])("%s matches %s: %s", (url, page, expected) => {
    expect(urlMatches({ url, match: "domain" }, page)).toBe(expected);
  });
});

describe("host: the same host and port", () => {
  test.each<[string, string, boolean]>([
    ["https://acme-bank.com", "https://acme-bank.com/login", true],
    ["https://acme-bank.com", "https://acme-bank.com:443/login", true],
    ["https://acme-bank.com:443", "https://acme-bank.com/", true],
    ["https://acme-bank.com", "https://login.acme-bank.com/", false],
    ["https://acme-bank.com:8443", "https://acme-bank.com/", false],
    ["https://acme-bank.com:8443", "https://acme-bank.com:8443/app", true],
    ["http://localhost:8080", "http://localhost:8080/app", true],
    ["http://localhost:8080", "http://localhost:3000/", false],
    ["localhost:8080", "https://localhost:8080/", true],
    ["intranet.acme.com:8443", "https://intranet.acme.com:8443/", true],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080/", true],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8081/", false],
    ["http://[::1]:8080", "http://[::1]:8080/", true],
  ])("%s matches %s: %s", (url, page, expected) => {
    expect(urlMatches({ url, match: "host" }, page)).toBe(expected);
  });
});

describe("startsWith: the page's address begins with the website's", () => {
  test.each<[string, string, boolean]>([
    ["https://acme-bank.com/app", "https://acme-bank.com/app/login", true],
    ["acme-bank.com/app", "https://acme-bank.com/app?next=1", true],
    ["https://acme-bank.com/app", "https://acme-bank.com/other", false],
    ["https://acme-bank.com/app", "http://acme-bank.com/app", false],
    ["https://acme-bank.com/app", "https://www.acme-bank.com/app", false],
    // The URL API writes `https://acme-bank.com/`: the slash keeps other hosts out.
    ["https://acme-bank.com", "https://acme-bank.com.evil.net/", false],
    ["https://acme-bank.com", "https://acme-bank.com@evil.net/", false],
    ["https://acme-bank.com", "https://acme-bank.com/anything", true],
  ])("%s matches %s: %s", (url, page, expected) => {
    expect(urlMatches({ url, match: "startsWith" }, page)).toBe(expected);
  });
});

describe("exact: the same address, the fragment aside", () => {
  test.each<[string, string, boolean]>([
    ["https://acme-bank.com/login", "https://acme-bank.com/login", true],
    ["https://acme-bank.com/login", "https://acme-bank.com/login#top", true],
    ["https://acme-bank.com/login#form", "https://acme-bank.com/login", true],
    ["https://acme-bank.com/login", "https://acme-bank.com/login?next=/", false],
    ["https://acme-bank.com/login", "https://acme-bank.com/login/", false],
    ["https://acme-bank.com/login", "http://acme-bank.com/login", false],
  ])("%s matches %s: %s", (url, page, expected) => {
    expect(urlMatches({ url, match: "exact" }, page)).toBe(expected);
  });
});

test.each<UrlMatch>(["domain", "host", "startsWith", "exact"])("a website set to never matches nothing, not even what %s would", (mode) => {
  expect(urlMatches({ url: "https://acme-bank.com/login", match: mode }, "https://acme-bank.com/login")).toBe(true);
  expect(urlMatches({ url: "https://acme-bank.com/login", match: "never" }, "https://acme-bank.com/login")).toBe(false);
});

describe("only http(s) websites match only http(s) pages", () => {
  test.each<[string, string]>([
    ["javascript:alert(1)", "https://acme-bank.com/"],
    ["javascript://acme-bank.com/%0Aalert(1)", "https://acme-bank.com/"],
    ["data:text/html,acme-bank.com", "https://acme-bank.com/"],
    ["file:///etc/passwd", "file:///etc/passwd"],
    ["ftp://acme-bank.com", "https://acme-bank.com/"],
    ["https://acme-bank.com", "javascript:alert(1)"],
    ["https://acme-bank.com", "data:text/html,<form>"],
    ["https://acme-bank.com", "file:///home/me/acme-bank.com.html"],
    ["https://acme-bank.com", "chrome-extension://abcdefghijklmnop/acme-bank.com"],
    ["https://acme-bank.com", "blob:https://acme-bank.com/0f1e2d3c"],
  ])("%s against %s: no match in any mode", (url, page) => {
    for (const match of ["domain", "host", "startsWith", "exact"] as const) expect(urlMatches({ url, match }, page)).toBe(false);
  });
});

describe("malformed input matches nothing and throws nothing", () => {
  test.each<[unknown, unknown]>([
    ["https://", "https://acme-bank.com/"],
    ["http://exa mple.com", "https://acme-bank.com/"],
    ["", "https://acme-bank.com/"],
    ["   ", "https://acme-bank.com/"],
    ["https://[::1", "https://acme-bank.com/"],
    ["http://.", "http://./"],
    ["https://acme-bank.com", "acme-bank.com"],
    ["https://acme-bank.com", "https://"],
    ["https://acme-bank.com", ""],
    [undefined, "https://acme-bank.com/"],
    ["https://acme-bank.com", undefined],
  ])("%j against %j", (url, page) => {
    for (const match of ["domain", "host", "startsWith", "exact", "sometimes"])
      expect(urlMatches({ url, match } as never, page as string)).toBe(false);
  });
});

test.each<[string, ReturnType<typeof siteOf>]>([
  ["https://login.acme-bank.com/x?y#z", { scheme: "https", host: "login.acme-bank.com", domain: "acme-bank.com" }],
  ["http://alice.github.io:8080/", { scheme: "http", host: "alice.github.io", domain: "alice.github.io" }],
  ["https://news.bbc.co.uk./", { scheme: "https", host: "news.bbc.co.uk", domain: "bbc.co.uk" }],
  ["http://localhost:3000/", { scheme: "http", host: "localhost", domain: "localhost" }],
  ["http://127.0.0.1:8080/", { scheme: "http", host: "127.0.0.1", domain: "127.0.0.1" }],
  ["http://[::1]/", { scheme: "http", host: "[::1]", domain: "[::1]" }],
  ["https://xn--acme-bnk-j9f.com/", { scheme: "https", host: "xn--acme-bnk-j9f.com", domain: "xn--acme-bnk-j9f.com" }],
  ["javascript:alert(1)", undefined],
  ["chrome-extension://abcdefghijklmnop/popup.html", undefined],
  ["not a url", undefined],
])("siteOf(%j)", (url, site) => {
  expect(siteOf(url)).toEqual(site);
});
