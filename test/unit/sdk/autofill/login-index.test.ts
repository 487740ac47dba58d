/**
 * The logins that match a page among many (sdk/autofill/login-index.ts): the same answer as
 * checking every login's websites with urlMatches, in the order given, each login once; never
 * a website set to never; and the known domains for look-alikes.
 */
import { LoginIndex, urlMatches } from "../../../../sdk/autofill";
import type { ItemUrl, UrlMatch } from "../../../../sdk/item-types";

interface Login {
  name: string;
  urls: ItemUrl[];
}

const login = (name: string, ...urls: Array<[string, UrlMatch]>): Login => ({ name, urls: urls.map(([url, match]) => ({ url, match })) });

const LOGINS: Login[] = [
  login("bank", ["https://acme-bank.com", "domain"]),
  login("bank app", ["https://app.acme-bank.com/login", "exact"]),
  login("bank admin", ["https://admin.acme-bank.com/", "startsWith"]),
  login("bank two sites", ["https://acme-bank.com", "domain"], ["https://login.acme-bank.com", "host"]),
  login("bank muted", ["https://acme-bank.com", "never"]),
  login("bank muted, mail kept", ["https://acme-bank.com", "never"], ["https://mail.example", "domain"]),
  login("alice's pages", ["https://alice.github.io", "domain"]),
  login("router", ["http://192.168.1.1", "domain"]),
  login("dev server", ["localhost:8080", "host"]),
  login("dev other", ["http://localhost:3000", "host"]),
  login("bad", ["javascript:alert(1)", "domain"], ["data:text/html,x", "startsWith"], ["https://", "domain"]),
  login("nothing"),
];

const index = new LoginIndex(LOGINS);

test.each<[string, string[]]>([
  ["https://acme-bank.com/", ["bank", "bank two sites"]],
  ["https://login.acme-bank.com/", ["bank", "bank two sites"]],
  ["https://app.acme-bank.com/login", ["bank", "bank app", "bank two sites"]],
  ["https://app.acme-bank.com/login#step2", ["bank", "bank app", "bank two sites"]],
  ["https://admin.acme-bank.com/users", ["bank", "bank admin", "bank two sites"]],
  ["https://acme-bank.com.evil.net/", []],
  ["https://mail.example/", ["bank muted, mail kept"]],
  ["https://alice.github.io/blog", ["alice's pages"]],
  ["https://mallory.github.io/", []],
  ["http://192.168.1.1/admin", ["router"]],
  ["https://localhost:8080/", ["dev server"]],
  ["http://localhost:3000/", ["dev other"]],
  ["http://localhost:5000/", []],
  ["javascript:alert(1)", []],
  ["data:text/html,x", []],
  ["not a url", []],
])("%s lists %j", (page, names) => {
  expect(index.matches(page).map((l) => l.name)).toEqual(names);
});

test("the known domains are those of websites that can match: never and malformed ones left out", () => {
  expect([...index.domains()].sort()).toEqual(["192.168.1.1", "acme-bank.com", "alice.github.io", "localhost", "mail.example"]);
});

test("over 10,000 logins of 2,000 domains, every page gets what checking each login would give", () => {
  const modes: UrlMatch[] = ["domain", "domain", "host", "startsWith", "exact", "never"];
  const logins = Array.from({ length: 10_000 }, (_, i) => {
    const site = `site${i % 2000}.example`;
    const host = i % 3 === 0 ? site : `www${i % 4}.${site}`;
    return login(`#${i}`, [`https://${host}/${i % 5 === 0 ? "app" : ""}`, modes[i % modes.length]!]);
  });
  const big = new LoginIndex(logins);
  const pages = [
    "https://site7.example/",
    "https://www1.site7.example/app",
    "https://www2.site1999.example/",
    "http://site42.example/app/x",
    "https://site2000.example/",
  ];
  for (const page of pages) {
    const expected = logins.filter((l) => l.urls.some((u) => urlMatches(u, page)));
    expect(big.matches(page)).toEqual(expected);
  }
  expect(big.matches("https://site7.example/").length).toBeGreaterThan(0);
  expect(big.domains().size).toBe(2000);
});
