/**
 * An import that keeps where the items came from, through the SDK against the real service: a
 * KeePass database (KeeWeb's demo) whose entries carry kept versions is imported, and an item's
 * history in the vault holds them, its oldest password included; its tags come back from the
 * vault; an item with no versions goes in the bulk request, and an unusable one-time code seed is
 * reported as left out of its item, not as a skipped item.
 */
import fs from "node:fs";
import path from "node:path";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { readImport } from "../../sdk/transfer";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(180_000);

const fixture = (name: string) => new Uint8Array(fs.readFileSync(path.join(__dirname, "../fixtures/import", name)));

describe("a KeePass import with history through the SDK", () => {
  let server: TestServer;
  let alice: VaultClient;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const database = await SQL_ENGINES[0]![1]();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    ({ alice } = await ownerAndAdmin(server.url, new MemoryPinStore(), new MemoryRosterHeadStore()));
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  test("each entry's kept versions become the item's history, oldest first; tags and the archived mark come back from the vault", async () => {
    const parsed = await readImport(fixture("keepass/keeweb-Demo.kdbx"), { password: "demo" });
    const vault = await alice.vaults.create("Moved in", "shared");
    const withHistory = parsed.items.filter((i) => i.history);
    const result = await alice.items.import(vault.vaultId, parsed.items);
    expect(result.imported).toBe(19);
    // One bulk request for the items without versions, then one per version of each item with some.
    expect(result.requests).toBe(1 + withHistory.reduce((n, i) => n + i.history!.length + 1, 0));
    const items = await alice.items.list(vault.vaultId);
    const mac = items.find((i) => i.name === "Work MacBook")!;
    expect([mac.fields.password, mac.tags, mac.revision]).toEqual(["aasdf", ["Computer/Work", "Computer", "Work"], 6]);
    const history = await alice.items.history(vault.vaultId, mac.itemId);
    // Newest first, as the vault lists them: the five kept versions.
    expect(history.map((r) => [r.revision, r.name, r.fields.password])).toEqual([
      [5, "Work MacBook", "aasdf"],
      [4, "Work MacBook", "aasdf"],
      [3, "My MacBook - Copy", "passw0rd"],
      [2, "My MacBook", "passw0rd"],
      [1, "My MacBook", "passw0rd"],
    ]);
    expect(items.find((i) => i.name === "Windows Tablet")!.revision).toBe(1);
  });

  test("an item with a seed that gives no codes is imported without it and listed as partial, not skipped", async () => {
    const vault = await alice.vaults.create("Codes", "shared");
    const result = await alice.items.import(vault.vaultId, [
      { name: "bad seed", fields: { username: "u" }, totp: "1", tags: ["Ops"], archived: true },
    ]);
    expect([result.imported, result.skipped]).toEqual([1, []]);
    expect(result.partial).toEqual([{ name: "bad seed", left: [{ part: "one-time code seed", why: expect.stringContaining("base32") }] }]);
    const [item] = await alice.items.list(vault.vaultId);
    expect([item!.totp, item!.tags, item!.archived]).toEqual([undefined, ["Ops"], true]);
  });
});
