/**
 * Files in imports and exports (sdk/transfer/), read and written without a server: a KeePass
 * entry's attachments (plain and protected) and a Bitwarden zip's `attachments/<id>/` as the items'
 * files, within the inflation cap; the encrypted export carrying the files' bytes (real Argon2id
 * and AES-GCM) and listing what it left out; the JSON export naming files by name and size only,
 * never by key or server id; the CSV export ignoring them.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { strToU8, zipSync } from "fflate";
import * as kdbxweb from "kdbxweb";
import { fromBase64, fromUtf8, utf8 } from "../../../../protocol/encoding";
import { deriveMasterKey, gcmDecrypt } from "../../../../protocol/crypto/primitives";
import { exportCsv, exportEncrypted, exportJson, readImport, type ExportedVault, type FileLeftOut } from "../../../../sdk/transfer";
import { FAST_KDF, filesOf, named, onePux } from "./real-files";

jest.setTimeout(60_000);

const bytes = (text: string) => new TextEncoder().encode(text);
const PASSPHRASE = "a long export passphrase";

test("KeePass: an entry's attachments, plain and protected, come as its files, byte for byte", async () => {
  const db = kdbxweb.Kdbx.create(new kdbxweb.Credentials(kdbxweb.ProtectedValue.fromString("pw")), "Files");
  db.setVersion(4);
  db.setKdf(kdbxweb.Consts.KdfId.Aes);
  const entry = db.createEntry(db.getDefaultGroup());
  entry.fields.set("Title", "server keys");
  const key = new Uint8Array(randomBytes(3000));
  const notes = bytes("rotate yearly");
  entry.binaries.set(
    "id_ed25519",
    (await db.createBinary(kdbxweb.ProtectedValue.fromBinary(key.slice().buffer))) as unknown as kdbxweb.KdbxBinary,
  );
  entry.binaries.set("notes.txt", (await db.createBinary(notes.slice().buffer)) as unknown as kdbxweb.KdbxBinary);
  const parsed = await readImport(new Uint8Array(await db.save()), { password: "pw" });
  const item = named(parsed, "server keys");
  expect(item.files).toEqual([
    { name: "id_ed25519", data: key },
    { name: "notes.txt", data: notes },
  ]);
  expect(parsed.partial).toEqual([]);
});

describe("Bitwarden's zip with attachments", () => {
  const [github, note, future, orphan] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const scan = new Uint8Array(randomBytes(300 * 1024));
  const zip = (extra: Record<string, Uint8Array> = {}) =>
    zipSync({
      "data.json": strToU8(
        JSON.stringify({
          encrypted: false,
          folders: [],
          items: [
            { id: github, type: 1, name: "GitHub", login: { username: "ada", password: "pw" } },
            { id: note, type: 2, name: "Recovery", notes: "in the safe", secureNote: { type: 0 } },
            { id: future, type: 9, name: "From the future" },
          ],
        }),
      ),
      "attachments/": new Uint8Array(0),
      [`attachments/${github}/codes.txt`]: strToU8("1234 5678"),
      [`attachments/${github}/scan.pdf`]: scan,
      [`attachments/${note}/key.asc`]: strToU8("-----BEGIN PGP-----"),
      [`attachments/${future}/later.bin`]: strToU8("x"),
      [`attachments/${orphan}/lost.txt`]: strToU8("y"),
      ...extra,
    });

  test("data.json's items, each with the files under attachments/<its id>/; a file of no item listed", async () => {
    const parsed = await readImport(zip());
    expect(parsed.format).toBe("bitwarden-zip");
    expect(parsed.items.map((i) => [i.name, filesOf(i)])).toEqual([
      [
        "GitHub",
        [
          ["codes.txt", 9],
          ["scan.pdf", scan.length],
        ],
      ],
      ["Recovery", [["key.asc", 19]]],
    ]);
    expect(named(parsed, "GitHub").files![1]!.data).toEqual(scan);
    expect(named(parsed, "GitHub").fields).toEqual({ username: "ada", password: "pw" });
    expect(parsed.skipped).toEqual([
      { name: "From the future", why: "a Bitwarden item type this service does not have (9)" },
      { name: `attachments/${orphan}/lost.txt`, why: "the export holds no item with its id" },
    ]);
  });

  test("what its entries inflate to counts against the cap; a 1PUX is still read as 1Password's", async () => {
    await expect(readImport(zip(), { limits: { inflatedBytes: 200 * 1024 } })).rejects.toThrow(
      "the Bitwarden export inflates past 200 KiB, the most this client inflates from one file",
    );
    expect((await readImport(zip(), { limits: { inflatedBytes: 400 * 1024 } })).items).toHaveLength(2);
    expect((await readImport(onePux("onepassword/jslib-SanitizedExport.export.data.json"))).format).toBe("1password");
    await expect(readImport(zipSync({ "attachments/x/y.txt": strToU8("y") }))).rejects.toThrow("1Password");
  });
});

describe("exports with files", () => {
  const pdf = new Uint8Array(randomBytes(100 * 1024));
  const fileKey = Buffer.from(randomBytes(32)).toString("base64");
  const fileId = randomUUID();
  // As the client hands the exporter an item: its files with their key and server id, and (encrypted) their bytes.
  const vaults: ExportedVault[] = [
    {
      name: "Team",
      items: [
        {
          name: "scan",
          type: "note",
          fields: { notes: "passport" },
          attachments: [{ id: fileId, key: fileKey, name: "passport.pdf", size: pdf.length, type: "application/pdf", data: pdf }],
        } as unknown as ExportedVault["items"][number],
        { name: "db", type: "login", fields: { username: "postgres" } },
      ],
    },
  ];
  const leftOut: FileLeftOut[] = [{ vault: "Team", item: "scan", file: "video.mp4", size: 40 << 20, why: "too large for one export" }];

  test("encrypted: the files' bytes sealed with the items, never a key or a server id; re-imported as files, what was left out listed", async () => {
    const file = await exportEncrypted(vaults, PASSPHRASE, FAST_KDF, leftOut);
    expect(file).not.toContain("passport");
    const doc = JSON.parse(file);
    const key = await deriveMasterKey(PASSPHRASE, doc.kdf);
    const sealed = fromUtf8(await gcmDecrypt(key, fromBase64(doc.ciphertext), utf8("vault-export/v1")));
    const payload = JSON.parse(sealed);
    expect(payload.format).toBe("vault-export-items/v2");
    expect(payload.vaults[0].items[0].attachments).toEqual([
      { name: "passport.pdf", size: pdf.length, type: "application/pdf", data: Buffer.from(pdf).toString("base64") },
    ]);
    expect(sealed).not.toContain(fileKey);
    expect(sealed).not.toContain(fileId);
    expect(payload.leftOut).toEqual(leftOut);

    const back = await readImport(bytes(file), { password: PASSPHRASE });
    expect(back.items.map((i) => [i.name, i.files, i.attachments])).toEqual([
      ["scan", [{ name: "passport.pdf", data: pdf }], undefined],
      ["db", undefined, undefined],
    ]);
    expect(back.partial).toEqual([
      { name: "scan", left: [{ part: "file video.mp4", why: "left out of the export: too large for one export" }] },
    ]);
  });

  test("json: files by name, size and type only; read back without them, said so; csv: no files", async () => {
    const json = exportJson(vaults);
    expect(JSON.parse(json).vaults[0].items[0].attachments).toEqual([{ name: "passport.pdf", size: pdf.length, type: "application/pdf" }]);
    expect(json).not.toContain(fileKey);
    expect(json).not.toContain(fileId);
    const back = await readImport(bytes(json));
    expect(back.items[0]).toEqual({ name: "scan", type: "note", fields: { notes: "passport" } });
    expect(back.partial).toEqual([
      {
        name: "scan",
        left: [
          { part: "file passport.pdf", why: "the export names it but does not hold its bytes (only an encrypted export carries them)" },
        ],
      },
    ]);
    expect(exportCsv(vaults)).not.toContain("passport.pdf");
  });

  test("an export's file whose bytes are not its size is left out; an export of an earlier release (v1) still reads", async () => {
    const item = (attachments: unknown[]) => ({ name: "scan", type: "note", fields: {}, attachments });
    const v2 = { format: "vault-export-items/v2", exportedAt: "2025-01-01T00:00:00Z", vaults: [{ name: "Team", items: [] as unknown[] }] };
    v2.vaults[0]!.items.push(item([{ name: "short.bin", size: 10, data: Buffer.from("abc").toString("base64") }]));
    const cut = await readImport(bytes(JSON.stringify(v2)));
    expect([cut.items[0]!.files, cut.partial[0]!.left]).toEqual([
      undefined,
      [{ part: "file short.bin", why: "the export holds 3 bytes of it, not the 10 bytes it names" }],
    ]);
    const v1 = {
      ...v2,
      format: "vault-export-items/v1",
      vaults: [{ name: "Team", items: [item([{ id: fileId, key: fileKey, name: "a.pdf", size: 3 }])] }],
    };
    const old = await readImport(bytes(JSON.stringify(v1)));
    expect(old.items).toEqual([{ name: "scan", type: "note", fields: {} }]);
    expect(old.partial[0]!.left[0]!.part).toBe("file a.pdf");
  });
});
