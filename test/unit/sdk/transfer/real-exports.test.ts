/**
 * Bitwarden, 1Password and LastPass exports as those managers write them (their own public test
 * data: test/fixtures/import/README.md), read field by field: folders, vaults and collections as
 * tags, favourites, the archived mark, identities and cards in their own types, hidden fields
 * hidden; what an item holds that has no place here listed with it, apart from what is skipped
 * whole; and every file through our encrypted export and back unchanged.
 */
import { readImport, splitByTopLevel } from "../../../../sdk/transfer";
import { ItemSearch } from "../../../../sdk/search";
import { contentOf, fixture, named, onePux, roundTrip } from "./real-files";

const OP = "onepassword/jslib-SanitizedExport.export.data.json";

test("Bitwarden JSON: each folder (a nested one by its path) a tag, and the place a vault per folder would take", async () => {
  const parsed = await readImport(fixture("bitwarden/pass-import-bitwarden.json"));
  expect([parsed.format, parsed.items.length, parsed.partial, parsed.skipped]).toEqual(["bitwarden-json", 14, [], []]);
  expect(named(parsed, "aib")).toEqual({
    name: "aib",
    type: "login",
    fields: { username: "dpbx@fner.ws", password: "ws5T@;_UB[Q|P!8'`~z%XC'JHFUbf#IX _E0}:HF,[{ei0hBg14" },
    urls: [{ url: "https://onlinebanking.aib.ie", match: "domain" }],
    custom: [
      { name: "pin", value: "462916", hidden: false },
      { name: "oldpin", value: "489019", hidden: false },
    ],
    tags: ["Bank"],
    place: "Bank",
  });
  expect(named(parsed, "dpbx@fner.ws")).toMatchObject({
    tags: ["Emails/WS"],
    place: "Emails",
    fields: { notes: "For financial purpose only!" },
  });
  expect(named(parsed, "note")).toMatchObject({ type: "note", tags: ["CornerCases"] });
  expect(splitByTopLevel(parsed).map((g) => [g.place, g.items.length])).toEqual([
    ["Bank", 1],
    ["Emails", 4],
    ["CornerCases", 4],
    ["Social", 3],
    ["Servers", 2],
  ]);
  const search = new ItemSearch(parsed.items.map((i, n) => ({ ...i, itemId: String(n), vaultId: "v" })));
  // Found by its tag (nothing else of these items says "servers").
  expect(
    search
      .search("servers")
      .map((h) => parsed.items[Number(h.itemId)]!.fields.username)
      .sort(),
  ).toEqual(["bynbyjhqjz", "jsdkyvbwjn"]);
  expect(await roundTrip(parsed)).toEqual(parsed.items.map(contentOf));
});

test("Bitwarden JSON of an organization: its collections as tags", async () => {
  const parsed = await readImport(fixture("bitwarden/pass-import-bitwarden-org.json"));
  expect(named(parsed, "dpbx@mnyfymt.ws")).toMatchObject({
    tags: ["Emails/WS"],
    urls: [{ url: "https://mail.mnyfymt.ws", match: "domain" }],
  });
  expect(parsed.items.every((i) => i.tags?.length === 1)).toBe(true);
});

test("Bitwarden JSON: a card, an identity, hidden and boolean fields, two websites, favourites; an archived item stays archived", async () => {
  const file = fixture("bitwarden/pass-import-bitwarden-other.json");
  const parsed = await readImport(file);
  expect(named(parsed, "Visa Card")).toEqual({
    name: "Visa Card",
    type: "card",
    fields: { cardholder: "DOE John", number: "4111111111111111", expiry: "04/24", code: "492" },
    custom: [{ name: "brand", value: "Visa", hidden: false }],
  });
  expect(named(parsed, "John DOE")).toMatchObject({
    type: "identity",
    fields: { fullName: "M. John Rober DOE", email: "john.doe@email.com", address: "6 Rose street\nNew York" },
  });
  const item = named(parsed, "test-item");
  expect(item).toMatchObject({
    favorite: true,
    urls: [
      { url: "https://test-uri-1", match: "domain" },
      { url: "https://test-uri-2", match: "domain" },
    ],
  });
  expect(item.custom).toEqual([
    { name: "my text field", value: "a value", hidden: false },
    { name: "my hidden field", value: "another value", hidden: true },
    { name: "a boolean field which is off", value: "false", hidden: false },
    { name: "a boolean field which is on", value: "true", hidden: false },
  ]);
  expect(named(parsed, "aib").archived).toBeUndefined();
  // Bitwarden writes `archivedDate` on an archived item (the public file has none archived: one is, here).
  const doc = JSON.parse(new TextDecoder().decode(file));
  doc.items[0].archivedDate = "2026-01-02T03:04:05.000Z";
  const archived = await readImport(new TextEncoder().encode(JSON.stringify(doc)));
  expect(named(archived, "aib")).toMatchObject({ archived: true, totp: "S3K3TPI5MYA2M67V", tags: ["Bank"] });
  expect(await roundTrip(archived)).toEqual(archived.items.map(contentOf));
});

test("1Password 1PUX: each vault a tag (and a place), its tags, an identity and a card in their types; documents and trash skipped", async () => {
  const parsed = await readImport(onePux(OP));
  expect(parsed.format).toBe("1password");
  expect(parsed.items).toHaveLength(27);
  expect(parsed.skipped).toEqual([{ name: "PDF Document", why: "a 1Password document (a file): not imported" }]);
  expect(named(parsed, "Hulu")).toEqual({
    name: "Hulu",
    type: "login",
    fields: { username: "huluuser@nullvalue.test", notes: "My Hulu login" },
    urls: [{ url: "https://www.hulu.com", match: "domain" }],
    totp: "otpseed777",
    custom: [{ name: "xjo5wotvgznjbs65x4scs7jbue", value: "2021-11-25", hidden: false }],
    favorite: true,
    tags: ["T's Test Vault", "movies"],
    place: "T's Test Vault",
  });
  const george = named(parsed, "George Engels");
  expect(george).toMatchObject({
    type: "identity",
    fields: {
      fullName: "George S Engels",
      email: "gengels@nullvalue.test",
      phone: "4565555555",
      address: "1312 Main St.\n90210 Atlantis\nCalifornia\nus",
    },
  });
  expect(george.custom).toContainEqual({ name: "reminder answer", value: "Me, buddy.", hidden: false });
  expect(named(parsed, "Parent's Credit Card")).toMatchObject({
    type: "card",
    fields: { cardholder: "Fred Engels", number: "1234123445676789", code: "1312", expiry: "12/99" },
    tags: ["T's Test Vault", "Finance"],
  });
  expect(named(parsed, "SSN").custom).toContainEqual({ name: "number", value: "131-216-1900", hidden: true });
  expect(parsed.partial).toEqual([
    { name: "eToro", left: [{ part: "3 earlier password(s)", why: "1Password's password history is not carried" }] },
  ]);
  expect(splitByTopLevel(parsed).map((g) => [g.place, g.items.length])).toEqual([
    ["T's Test Vault", 20],
    ["Personal", 7],
  ]);
  expect(await roundTrip(parsed)).toEqual(parsed.items.map(contentOf));
});

test("1Password 1PUX: an archived item stays archived; a second one-time code is kept hidden and listed", async () => {
  // The public file has neither: Hulu is archived here, with a second code in its first section.
  const parsed = await readImport(
    onePux(OP, (doc) => {
      const hulu = doc.accounts[0].vaults[0].items[0];
      hulu.state = "archived";
      hulu.details.sections[0].fields.push({ title: "backup code", id: "TOTP_2", value: { totp: "JBSWY3DPEHPK3PXP" } });
    }),
  );
  expect(named(parsed, "Hulu")).toMatchObject({ archived: true, totp: "otpseed777" });
  expect(named(parsed, "Hulu").custom).toContainEqual({ name: "One-time code 2", value: "JBSWY3DPEHPK3PXP", hidden: true });
  expect(parsed.partial).toContainEqual({
    name: "Hulu",
    left: [{ part: "One-time code 2", why: "an item here has one one-time code: this one is kept as a hidden custom field" }],
  });
  expect(await roundTrip(parsed)).toEqual(parsed.items.map(contentOf));
});

test("LastPass CSV: a named format; folders (nested with \\) as tags, logins with their notes", async () => {
  const parsed = await readImport(fixture("lastpass/pass-import-lastpass.csv"));
  expect([parsed.format, parsed.items.length, parsed.skipped]).toEqual(["lastpass-csv", 14, []]);
  expect(named(parsed, "dpbx@mnyfymt.ws")).toEqual({
    name: "dpbx@mnyfymt.ws",
    type: "login",
    fields: { username: "dpbx", password: "rPCkmNkhIa>{izt3C3F823!Go" },
    urls: [{ url: "https://mail.mnyfymt.ws", match: "domain" }],
    tags: ["Emails/WS"],
    place: "Emails",
  });
  expect(named(parsed, "note").fields.notes).toContain("multiline note entry.");
  expect(await roundTrip(parsed)).toEqual(parsed.items.map(contentOf));
});

test("LastPass CSV: secure notes (http://sn) as notes, cards, SSH keys and addresses in their types; a one-time code seed", async () => {
  const note = await readImport(fixture("lastpass/bitwarden-note-in-folder.csv"));
  expect(note.items).toEqual([
    { name: "New note", type: "note", fields: { notes: "Lorem ipsum dolor sit amet." }, tags: ["Shopping"], place: "Shopping" },
  ]);
  const card = await readImport(fixture("lastpass/jslib-card.csv"));
  expect(card.items).toEqual([
    {
      name: "Credit-card",
      type: "card",
      fields: { cardholder: "John Doe", number: "1234567812345678", code: "123", expiry: "06/20", notes: "some text\n" },
      custom: [{ name: "Start Date", value: "October,2017", hidden: false }],
    },
  ]);
  const ssh = (await readImport(fixture("lastpass/jslib-ssh-key.csv"))).items[0]!;
  expect(ssh).toMatchObject({
    name: "test-import-ssh-key",
    type: "ssh",
    fields: { passphrase: "fr@nk", notes: "some notes" },
    tags: ["Social"],
  });
  expect(ssh.fields.privateKey).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+-----END RSA PRIVATE KEY-----$/);
  expect(ssh.fields.publicKey).toMatch(/^ssh-rsa AAAAB3NzaC1yc2E.* frank@frank-PC$/);
  expect(ssh.custom).toContainEqual({ name: "Hostname", value: "home.example.com", hidden: false });
  const totp = await readImport(fixture("lastpass/bitwarden-totp.csv"));
  expect(totp.items[0]).toMatchObject({ type: "login", totp: "Y64VEVMBTSXCYIWRSHRNDZW62MPGVU2G", fields: { notes: "super secure notes" } });
  // An address note, in the lines LastPass writes (no public export file holds one).
  const address = [
    "url,username,password,totp,extra,name,grouping,fav",
    'http://sn,,,,"NoteType:Address\nLanguage:en-US\nFirst Name:Juno\nLast Name:Example\nAddress 1:12 Harbour Lane\nCity / Town:Harlow\nCountry:US\nEmail Address:juno@example.test\nPhone:{""num"":""5550100"",""ext"":"""",""cc3l"":""USA""}\nNotes:",Juno Home,Personal,1',
  ].join("\n");
  expect((await readImport(new TextEncoder().encode(address))).items[0]).toEqual({
    name: "Juno Home",
    type: "identity",
    fields: { fullName: "Juno Example", email: "juno@example.test", phone: "5550100", address: "12 Harbour Lane\nHarlow\nUS" },
    custom: [{ name: "Language", value: "en-US", hidden: false }],
    tags: ["Personal"],
    favorite: true,
    place: "Personal",
  });
});
