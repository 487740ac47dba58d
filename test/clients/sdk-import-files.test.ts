/**
 * Files through an import and an export, with the SDK against the real service: KeeWeb's demo
 * database, whose attachments come in as files of their items (one on an item with kept versions,
 * after them), one too large for the server said by item and file name while the rest go on; and
 * the encrypted export carrying a file's bytes into another vault under a new id and key.
 */
import fs from "node:fs";
import path from "node:path";
import { MemoryPinStore, MemoryRosterHeadStore, type VaultClient } from "../../sdk";
import { readImport } from "../../sdk/transfer";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(180_000);

const fixture = (name: string) => new Uint8Array(fs.readFileSync(path.join(__dirname, "../fixtures/import", name)));
const PASSPHRASE = "a long export passphrase";

describe("files in an import and an export through the SDK", () => {
  let server: TestServer;
  let alice: VaultClient;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const database = await SQL_ENGINES[0]![1]();
    dropDatabase = database.drop;
    // Agreement.pdf (7,945 bytes) is past this; Backup codes.txt (240 bytes) is not.
    server = await startTestServer({ ...database.env, ATTACHMENT_MAX_BYTES: "4096" });
    ({ alice } = await ownerAndAdmin(server.url, new MemoryPinStore(), new MemoryRosterHeadStore()));
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  test("a KeePass database's attachments come in as files; one the server refuses is said, the rest come in; the encrypted export carries them", async () => {
    const parsed = await readImport(fixture("keepass/keeweb-Demo.kdbx"), { password: "demo" });
    const codes = parsed.items.find((i) => i.name === "smith@gmail.com")!;
    const vault = await alice.vaults.create("Moved in", "shared");
    const phases = new Set<string>();
    const result = await alice.items.import(vault.vaultId, parsed.items, (p) => phases.add(p.phase));
    expect([result.imported, result.files, phases.has("files")]).toEqual([19, 1, true]);
    expect(result.filesFailed).toEqual([{ item: "Bank Account", file: "Agreement.pdf", why: expect.stringMatching(/\S/) }]);

    const items = await alice.items.list(vault.vaultId);
    const smith = items.find((i) => i.name === "smith@gmail.com")!;
    // Its kept versions first, its current content, then the file named in a revision of its own.
    expect(smith.revision).toBe(codes.history!.length + 2);
    expect(smith.fields.password).toBe(codes.fields.password);
    const [file] = smith.attachments!;
    expect([file!.name, file!.size]).toEqual(["Backup codes.txt", 240]);
    expect(await alice.attachments.download(vault.vaultId, file!)).toEqual(codes.files![0]!.data);
    expect(items.find((i) => i.name === "Bank Account")!.attachments).toBeUndefined();

    let report: { carried: number; leftOut: unknown[] } | undefined;
    const exported = await alice.vaults.export([vault.vaultId], "encrypted", PASSPHRASE, { onFiles: (r) => (report = r) });
    expect(report).toEqual({ carried: 1, leftOut: [] });
    expect(exported).not.toContain(file!.key);
    const again = await readImport(new TextEncoder().encode(exported), { password: PASSPHRASE });
    const restored = await alice.vaults.create("Restored", "shared");
    expect((await alice.items.import(restored.vaultId, again.items)).files).toBe(1);
    const copy = (await alice.items.list(restored.vaultId)).find((i) => i.name === "smith@gmail.com")!.attachments![0]!;
    expect([copy.name, copy.id === file!.id, copy.key === file!.key]).toEqual(["Backup codes.txt", false, false]);
    expect(await alice.attachments.download(restored.vaultId, copy)).toEqual(codes.files![0]!.data);

    // An item that names another vault's file (its key and id) comes in without it, said.
    const foreign = await alice.items.import(restored.vaultId, [{ name: "foreign", type: "note", fields: {}, attachments: [file!] }]);
    expect(foreign.partial).toEqual([
      { name: "foreign", left: [{ part: "file Backup codes.txt", why: expect.stringMatching(/not carried/) }] },
    ]);
    expect((await alice.items.list(restored.vaultId)).find((i) => i.name === "foreign")!.attachments).toBeUndefined();

    const clear = await alice.vaults.export([vault.vaultId], "json");
    expect(clear).toContain("Backup codes.txt");
    expect(clear).not.toContain(file!.key);
    expect(clear).not.toContain(file!.id);
  });
});
