/**
 * Item types, TOTP codes and search (sdk/item-types.ts, sdk/totp.ts, sdk/search.ts): each type
 * sealed and opened with real AES-GCM; an item of an earlier release opens as a login; a code that
 * matches one computed here with node:crypto (and RFC 6238's own vectors); search over names,
 * usernames, websites and notes.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { referenceTotp, toBase32 } from "../../helpers/totp";
import { openItem, sealItem, type ItemContent } from "../../../sdk";
import { ItemSearch } from "../../../sdk/search";
import { totpCode, totpProblem } from "../../../sdk/totp";
import { gcmEncrypt } from "../../../protocol/crypto/primitives";
import { itemAssociatedData } from "../../../sdk/items";
import { toBase64, utf8 } from "../../../protocol/encoding";

const vaultId = randomUUID();
const key = new Uint8Array(randomBytes(32));

const samples: ItemContent[] = [
  {
    name: "GitHub",
    type: "login",
    fields: { username: "ada", password: "pw", notes: "two\nlines" },
    urls: [
      { url: "https://github.com", match: "domain" },
      { url: "https://gist.github.com/acme", match: "startsWith" },
    ],
    totp: "JBSWY3DPEHPK3PXP",
    custom: [{ name: "PIN", value: "1234", hidden: true }],
    favorite: true,
  },
  { name: "Wi-Fi", type: "note", fields: { notes: "network: acme\npass: x" } },
  { name: "Visa", type: "card", fields: { cardholder: "Ada L", number: "4111111111111111", expiry: "12/29", code: "123" } },
  { name: "Me", type: "identity", fields: { fullName: "Ada Lovelace", email: "ada@example.test", address: "1 Road\nLondon" } },
  { name: "deploy key", type: "ssh", fields: { privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\n...", publicKey: "ssh-ed25519 AAAA" } },
];

test.each(samples.map((s) => [s.type!, s] as const))("a %s item comes back as it was sealed", async (_type, content) => {
  const itemId = randomUUID();
  const opened = await openItem(key, vaultId, await sealItem(key, vaultId, itemId, content));
  expect(opened).toEqual(content);
});

async function sealRaw(data: string) {
  const itemId = randomUUID();
  return {
    itemId,
    encryptedName: toBase64(await gcmEncrypt(key, utf8("Old"), itemAssociatedData(vaultId, itemId, "name"))),
    encryptedData: toBase64(await gcmEncrypt(key, utf8(data), itemAssociatedData(vaultId, itemId, "data"))),
  };
}

test("an item of an earlier release (a flat object of fields) opens as a login, its url its website", async () => {
  const opened = await openItem(key, vaultId, await sealRaw(JSON.stringify({ username: "u", url: "github.com" })));
  expect(opened).toEqual({ name: "Old", type: "login", fields: { username: "u", url: "github.com" } });
});

test.each([
  ["an unknown form", { v: 3, type: "login", fields: {} }],
  ["an unknown type", { v: 2, type: "passport", fields: {} }],
  ["a field that is not text", { v: 2, type: "login", fields: { n: 1 } }],
  ["a website without a known match rule", { v: 2, type: "login", fields: {}, urls: [{ url: "x", match: "regex" }] }],
  ["a custom field without hidden", { v: 2, type: "login", fields: {}, custom: [{ name: "a", value: "b" }] }],
])("item data with %s is refused as TAMPERED", async (_what, data) => {
  await expect(openItem(key, vaultId, await sealRaw(JSON.stringify(data)))).rejects.toMatchObject({ code: "TAMPERED" });
});

test("a TOTP code from a base32 secret (spaces, lower case) matches the one computed here, with the seconds it lasts", () => {
  const secret = randomBytes(20);
  const typed = toBase32(secret)
    .toLowerCase()
    .replace(/(.{4})/g, "$1 ");
  const now = 1_790_000_012_345;
  expect(totpCode(typed, now)).toEqual({ code: referenceTotp(secret, now), remaining: 30 - (Math.floor(now / 1000) % 30), period: 30 });
  expect(totpCode(typed, now + 30_000).code).toBe(referenceTotp(secret, now + 30_000));
});

test.each([
  [59, "94287082"],
  [1111111109, "07081804"],
  [2000000000, "69279037"],
])("RFC 6238's vector at T=%i through an otpauth URI (SHA-1, 8 digits): %s", (t, expected) => {
  const secret = toBase32(Buffer.from("12345678901234567890"));
  const uri = `otpauth://totp/ACME:ada?secret=${secret}&algorithm=SHA1&digits=8&period=30&issuer=ACME`;
  expect(totpCode(uri, t * 1000).code).toBe(expected);
});

test.each([
  ["not base32 at all", "hello world!"],
  ["too short", "JBSWY3DP"],
  ["an HOTP address", "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1"],
  // What a crafted file could ask of every member who opens the item: codes of 80 million digits, a year-long period, a huge secret.
  ["an address asking for 80,000,000 digits", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&digits=80000000"],
  ["an address with a period of a year", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&period=31536000"],
  ["a secret of 1,000 bytes", "A".repeat(1600)],
])("a seed that is %s is named as such", (_what, seed) => {
  expect(totpProblem(seed)).toEqual(expect.any(String));
});

describe("search", () => {
  const a = randomUUID();
  const b = randomUUID();
  const item = (vault: string, name: string, more: Partial<ItemContent> = {}) => ({
    vaultId: vault,
    itemId: randomUUID(),
    name,
    fields: {},
    ...more,
  });
  const gh = item(a, "Work code host", { fields: { username: "ada-work" }, urls: [{ url: "https://github.com/acme", match: "domain" }] });
  const legacy = item(b, "Personal", { fields: { username: "ada", url: "github.com" } });
  const bank = item(a, "Bank", { fields: { username: "ada.l", notes: "branch: Soho, ask for Grace" } });
  const index = new ItemSearch([gh, legacy, bank]);
  const ids = (hits: { itemId: string }[]) => hits.map((h) => h.itemId);

  test("'github' finds every item whose website is on github.com, across vaults, also an item of an earlier release", () => {
    expect(new Set(ids(index.search("github")))).toEqual(new Set([gh.itemId, legacy.itemId]));
  });
  test("within one vault; by username prefix; in notes; nearly spelt; every word must match", () => {
    expect(ids(index.search("github", { vaultId: b }))).toEqual([legacy.itemId]);
    expect(ids(index.search("ada-w"))).toEqual([gh.itemId]);
    expect(ids(index.search("grace"))).toEqual([bank.itemId]);
    expect(ids(index.search("gihub"))).toContain(gh.itemId);
    expect(ids(index.search("bank soho"))).toEqual([bank.itemId]);
    expect(index.search("bank github")).toEqual([]);
    expect(index.search("  ")).toEqual([]);
  });
  test("an item edited or removed is found as it is now", () => {
    const idx = new ItemSearch([bank]);
    idx.put({ ...bank, name: "Credit union" });
    expect(idx.search("bank")).toEqual([]);
    expect(ids(idx.search("credit"))).toEqual([bank.itemId]);
    idx.remove(bank.vaultId, bank.itemId);
    expect(idx.size).toBe(0);
  });
});
