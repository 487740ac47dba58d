/**
 * Look-alike sites named for the warning (sdk/autofill/lookalike.ts): a known domain as the leading
 * labels of another site, confusable letters as the URL API gives them (`xn--` labels), one
 * letter off; and no warning for the known sites themselves, their subdomains, or unrelated sites.
 */
import { lookalikeOf } from "../../../../sdk/autofill";

const KNOWN = ["acme-bank.com", "paypal.com", "wikipedia.org", "google.com", "ebay.com", "lego.com", "alice.github.io", "ab.com"];

test.each<[string, string]>([
  ["acme-bαnk.com", "xn--acme-bnk-j9f.com"],
  ["аcme-bank.com", "xn--cme-bank-06g.com"],
  ["acmе-bank.com", "xn--acm-bank-e8g.com"],
  ["pαypαl.com", "xn--pypl-0ldc.com"],
  ["аcme-bаnk.com", "xn--cme-bnk-1fgf.com"],
  ["еbay.com", "xn--bay-qdd.com"],
  ["ébay.com", "xn--bay-9la.com"],
])("the URL API writes %s (a Greek or Cyrillic letter) as %s", (unicode, ascii) => {
  expect(new URL(`https://${unicode}/`).hostname).toBe(ascii);
});

test.each<[string, string, string]>([
  ["acme-bank.com.evil.net", "the known domain as leading labels", "acme-bank.com"],
  ["login.acme-bank.com.evil.net", "the known domain as labels in the middle", "acme-bank.com"],
  ["xn--acme-bnk-j9f.com", "a Greek alpha (acme-bαnk.com)", "acme-bank.com"],
  ["xn--cme-bank-06g.com", "a Cyrillic a (аcme-bank.com)", "acme-bank.com"],
  ["www.xn--acm-bank-e8g.com", "a Cyrillic e under a subdomain", "acme-bank.com"],
  ["acme-bank.xn--cm-fmc", "a Cyrillic o in the suffix (acme-bank.cоm)", "acme-bank.com"],
  ["xn--acm-bank-d1a.com", "an accent (acmé-bank.com)", "acme-bank.com"],
  // Two letters changed, or a label under five letters: found by how they look, not as one letter off.
  ["xn--pypl-0ldc.com", "two Greek alphas (pαypαl.com)", "paypal.com"],
  ["xn--cme-bnk-1fgf.com", "two Cyrillic a (аcme-bаnk.com)", "acme-bank.com"],
  ["xn--bay-qdd.com", "a Cyrillic e in a short label (еbay.com)", "ebay.com"],
  ["xn--bay-9la.com", "an accent in a short label (ébay.com)", "ebay.com"],
  ["1ego.com", "the digit 1 for l in a short label", "lego.com"],
  ["paypa1.com", "the digit 1 for l", "paypal.com"],
  ["g00gle.com", "the digit 0 for o", "google.com"],
  ["acrne-bank.com", "rn for m", "acme-bank.com"],
  ["acme-bank.corn", "rn for m in the suffix", "acme-bank.com"],
  ["vvikipedia.org", "vv for w", "wikipedia.org"],
  ["acme-bamk.com", "one letter replaced", "acme-bank.com"],
  ["acme-bnak.com", "two letters swapped", "acme-bank.com"],
  ["acmebank.com", "one letter left out", "acme-bank.com"],
  ["acme-bankk.com", "one letter added", "acme-bank.com"],
  ["paypai.com", "one letter replaced in a six-letter label", "paypal.com"],
  ["alicf.github.io", "one letter replaced in a five-letter label, under a private suffix", "alice.github.io"],
  ["ACME-BAMK.COM.", "written in capitals with the root dot", "acme-bank.com"],
])("%s imitates a known site (%s)", (host, _why, imitated) => {
  expect(lookalikeOf(host, KNOWN)).toBe(imitated);
});

test.each<[string, string]>([
  ["acme-bank.com", "a known domain"],
  ["accounts.acme-bank.com", "a subdomain of a known domain"],
  ["alice.github.io", "a known site under a private suffix"],
  ["bob.github.io", "another site under the same private suffix, unlike in name"],
  ["acme-bank.net", "the same label under another suffix"],
  ["acme-bank.com.au", "the known domain followed by more suffix: a domain of its own"],
  ["www.acme-bank.com.au", "a subdomain of that"],
  ["acme-savings.com", "an unrelated name"],
  ["ac.com", "a label under five letters one letter off a known one"],
  ["example.org", "an unrelated site"],
  ["127.0.0.1", "an IP address"],
  ["localhost", "a host of one label"],
  ["", "nothing"],
  ["xn--zz--.com", "a malformed xn-- label"],
  ["com", "a bare public suffix"],
])("%s is no look-alike (%s)", (host) => {
  expect(lookalikeOf(host, KNOWN)).toBeUndefined();
});

test("known domains given as hosts count as their registrable domain, which is what is named", () => {
  expect(lookalikeOf("acme-bamk.com", ["www.acme-bank.com"])).toBe("acme-bank.com");
  expect(lookalikeOf("secure.acme-bank.com", ["www.acme-bank.com"])).toBeUndefined();
});

test("with no known domain there is nothing to imitate", () => {
  expect(lookalikeOf("acme-bank.com.evil.net", [])).toBeUndefined();
});

test.each<[string, string, string | undefined]>([
  ["abcdf.com", "abcde.com", "abcde.com"],
  ["abce.com", "abcd.com", undefined],
])("one letter off counts from labels of five letters: %s against %s", (host, known, imitated) => {
  expect(lookalikeOf(host, [known])).toBe(imitated);
});
