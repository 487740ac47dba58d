/**
 * KeePass databases as KeePass, KeePassXC and KeeWeb write them (their own public test data:
 * test/fixtures/import/README.md), read field by field: the group path and the entry's tags as
 * tags, the expiry kept and listed, each program's one-time code seed, the kept versions as the
 * item's history (oldest first), the recycle bin's entries skipped and listed, attachments listed;
 * a database opened with a key file; and every file through our encrypted export and back.
 */
import { readImport, splitByTopLevel } from "../../../../sdk/transfer";
import { checkedContent, itemDataJson, parseItemData } from "../../../../sdk/item-types";
import { contentOf, filesOf, fixture, named, roundTrip } from "./real-files";

jest.setTimeout(60_000);

test("KeeWeb's demo database: groups and tags, custom fields, expiry, history, attachments, the recycle bin", async () => {
  const parsed = await readImport(fixture("keepass/keeweb-Demo.kdbx"), { password: "demo" });
  expect([parsed.format, parsed.items.length]).toEqual(["keepass", 19]);
  const mac = named(parsed, "Work MacBook");
  expect(contentOf(mac)).toEqual({
    name: "Work MacBook",
    type: "login",
    fields: { username: "smith", password: "aasdf" },
    urls: [{ url: "https://apple.com", match: "domain" }],
    custom: [
      { name: "Model", value: "Late 2015", hidden: false },
      { name: "Root pass", value: "asgasdf", hidden: true },
      { name: "Serial", value: "C02CG123DC79", hidden: false },
    ],
    tags: ["Computer/Work", "Computer", "Work"],
  });
  expect(mac.place).toBe("Computer");
  // Eight kept versions, three of them the same as the one before: five, oldest first (made as a copy of "My MacBook").
  expect(mac.history!.map((h) => [h.name, h.fields.password, h.fields.notes])).toEqual([
    ["My MacBook", "passw0rd", "My macbook password"],
    ["My MacBook", "passw0rd", "My macbook password"],
    ["My MacBook - Copy", "passw0rd", "My macbook password"],
    ["Work MacBook", "aasdf", "My macbook password"],
    ["Work MacBook", "aasdf", undefined],
  ]);
  expect(mac.history![1]!.custom).toEqual([{ name: "root pass", value: "john2", hidden: true }]);
  expect(named(parsed, "smith@gmail.com").history!.map((h) => h.fields.password)).toEqual(["smith.john", "smith@john", "smith@john1"]);
  expect(named(parsed, "Apple ID").custom).toEqual([{ name: "Expires", value: "2015-08-31T21:00:00.000Z", hidden: false }]);
  expect(parsed.partial).toEqual([
    { name: "Apple ID", left: [{ part: "expiry", why: "items here do not expire: the date is kept as the custom field Expires" }] },
    {
      name: "j.smith@john-international.com",
      left: [{ part: "expiry", why: "items here do not expire: the date is kept as the custom field Expires" }],
    },
  ]);
  // Attachments come as the items' files.
  expect(parsed.items.filter((i) => i.files).map((i) => [i.name, filesOf(i)])).toEqual([
    ["smith@gmail.com", [["Backup codes.txt", expect.any(Number)]]],
    ["Bank Account", [["Agreement.pdf", expect.any(Number)]]],
  ]);
  expect(parsed.skipped).toEqual([
    { name: "MasterCard", why: "it is in KeePass's recycle bin" },
    { name: "Agent forum", why: "it is in KeePass's recycle bin" },
  ]);
  expect(splitByTopLevel(parsed).map((g) => [g.place, g.items.length])).toEqual([
    ["Computer", 7],
    ["Internet", 9],
    ["Finance", 3],
  ]);
  const files: Array<Uint8Array[]> = [];
  expect(await roundTrip(parsed, files)).toEqual(parsed.items.map(contentOf));
  expect(files).toEqual(parsed.items.map((i) => (i.files ?? []).map((f) => f.data)));
});

test("KeePassXC's database: its TOTP Seed and Settings as the one-time code, history, a nested group, an attachment as a file", async () => {
  const parsed = await readImport(fixture("keepass/keepassxc-NewDatabase.kdbx"), { password: "a" });
  const sample = named(parsed, "Sample Entry");
  expect(contentOf(sample)).toEqual({
    name: "Sample Entry",
    type: "login",
    fields: { username: "User Name", password: "Password", notes: "Notes" },
    urls: [{ url: "http://www.somesite.com/", match: "domain" }],
    totp: "HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ",
    custom: [
      { name: "TestAttribute1", value: "b", hidden: false },
      { name: "testattribute1", value: "a", hidden: false },
    ],
  });
  expect(sample.history!.map((h) => [h.totp, h.custom?.map((c) => c.value)])).toEqual([
    ["1", undefined],
    ["HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ", undefined],
    ["HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ", ["a", "a"]],
  ]);
  expect(named(parsed, "Subgroup Entry")).toMatchObject({ tags: ["Homebanking/Subgroup"], place: "Homebanking" });
  expect(named(parsed, "Subgroup Entry").history!.map((h) => h.urls)).toEqual([
    undefined,
    [{ url: "https:/www.bank.com", match: "domain" }],
  ]);
  expect(parsed.partial).toEqual([]);
  expect(new TextDecoder().decode(sample.files![0]!.data)).toMatch(/\S/);
  expect(filesOf(sample)).toEqual([["Sample attachment.txt", sample.files![0]!.data.length]]);
});

test("one-time codes as KeeTrayTOTP, KeeWeb and KeePass 2.47 keep them; a Steam code listed as not carried", async () => {
  const parsed = await readImport(fixture("keepass/pass-import-keepass.kdbx"), { password: "correct horse battery staple" });
  expect(named(parsed, "Tray TOTP").totp).toBe("GIQAVHVNASWLOZLJ457DPDSOZ5TCNHOV");
  expect(named(parsed, "KeeWeb").totp).toBe(
    "otpauth://totp/test?secret=vvtvjpfe6hlcoyo3dwdd3cse6xwtlwl4rmjuu3pqyc7x236jtmuvavwe&digits=6&period=30",
  );
  expect(named(parsed, "KeePass 2.47")).toMatchObject({ totp: "JBSWY3DPEHPK3PXP", tags: ["TOTP"] });
  expect(named(parsed, "KeePass 2.47").custom).toBeUndefined();
  const steam = named(parsed, "KeeTrayTOTP - Steam");
  expect([steam.totp, steam.custom]).toEqual([undefined, undefined]);
  expect(parsed.partial).toContainEqual({
    name: "KeeTrayTOTP - Steam",
    left: [{ part: "Steam one-time code", why: "Steam's codes are not the standard ones this service makes" }],
  });
  expect(filesOf(named(parsed, "aib")).map(([name]) => name)).toEqual(["pass.png", "tomb.jpg"]);
  expect(named(parsed, "dpbx@fner.ws").tags).toEqual(["Emails/WS"]);
  expect(await roundTrip(parsed)).toEqual(parsed.items.map(contentOf));
});

test("a database made with a key file opens with it, and without it is refused", async () => {
  const file = fixture("keepass/keepassxc-KeyFileProtected.kdbx");
  const parsed = await readImport(file, { password: "a", keyFile: fixture("keepass/keepassxc-KeyFileProtected.key") });
  expect(parsed.items.map((i) => [i.name, i.fields.username, i.fields.password])).toEqual([
    ["entry1", "username", "password"],
    ["entry2", "username", "password"],
  ]);
  await expect(readImport(file, { password: "a" })).rejects.toThrow("the KeePass password (or key file) is wrong");
});

test("tags and the archived mark: tidied, capped, sealed only when set", () => {
  const base = { name: "x", type: "login" as const, fields: { username: "u" } };
  expect(itemDataJson(base)).toBe('{"v":2,"type":"login","fields":{"username":"u"}}');
  expect(itemDataJson({ ...base, tags: [], archived: false })).toBe(itemDataJson(base));
  expect(checkedContent({ ...base, tags: [" Work/Servers ", "", "Work/Servers", "ops"], archived: true })).toEqual({
    ...base,
    tags: ["Work/Servers", "ops"],
    archived: true,
  });
  expect(() => checkedContent({ ...base, tags: Array.from({ length: 51 }, (_, n) => `t${n}`) })).toThrow("more than 50 tags");
  expect(() => checkedContent({ ...base, tags: ["x".repeat(101)] })).toThrow("longer than 100 characters");
  const stored = (extra: object) => JSON.stringify({ v: 2, type: "login", fields: {}, ...extra });
  expect(() => parseItemData("x", stored({ archived: "yes" }))).toThrow("archived is not true or false");
  expect(() => parseItemData("x", stored({ tags: "Work" }))).toThrow("tags is not a list");
  expect(parseItemData("x", stored({ tags: ["a", " a "], archived: true }))).toMatchObject({ tags: ["a"], archived: true });
});
