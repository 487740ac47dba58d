/**
 * The exposure report after a removal (sdk/exposure.ts, sdk/client/exposure.ts) against the real
 * service, on SQLite and PostgreSQL: exactly the items the removed member could read, cleared as
 * they are changed; a server's dates do not clear anything, and a roster cut back is refused.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin, SDK_PASSWORD } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { dishonest, type Edit } from "../helpers/dishonest";
import { eventually } from "../helpers/wait";

jest.setTimeout(120_000);

describe.each(SQL_ENGINES)("the exposure report on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let alice: VaultClient, carol: VaultClient;
  const pins = new MemoryPinStore();
  const heads = new MemoryRosterHeadStore();
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    ({ alice, carol } = await ownerAndAdmin(server.url, pins, heads));
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  test("exactly what the removed member could read, each cleared once changed; a server's dates or a cut roster change nothing", async () => {
    const vault = await alice.vaults.create(`Handover ${randomUUID().slice(0, 6)}`, "shared");
    await alice.members.share(vault.vaultId, carol.account.userId, "admin");
    const a = await alice.items.add(vault.vaultId, { name: "aws", fields: { password: "a1" } });
    await alice.items.edit(vault.vaultId, a.itemId, { name: "aws", fields: { password: "a2" } });
    const b = await alice.items.add(vault.vaultId, { name: "bank", fields: { password: "b1" } });
    await carol.items.edit(vault.vaultId, b.itemId, { name: "bank", fields: { password: "b2" } });
    await alice.members.remove(vault.vaultId, carol.account.userId);
    await alice.vaults.rekey(vault.vaultId);
    await alice.items.add(vault.vaultId, { name: "new after", fields: { password: "n" } });

    // Carol's last change reaches the audit log a moment after it is made.
    const before = await eventually("carol's change in the audit log", async () => {
      const report = await alice.people.exposure(vault.vaultId, carol.account.userId);
      return report.lastActivity !== null && report;
    });
    expect(before.keyVersions).toEqual({ from: 1, to: 1 });
    expect(before.items.map((i) => [i.name, i.status, i.revisions])).toEqual([
      ["aws", "exposed", 1],
      ["bank", "exposed", 1],
    ]);

    await alice.items.edit(vault.vaultId, a.itemId, { name: "aws", fields: { password: "rotated" } });
    const after = await alice.people.exposure(vault.vaultId, carol.account.userId);
    expect(after.items.map((i) => [i.name, i.status])).toEqual([
      ["bank", "exposed"],
      ["aws", "changed"],
    ]);

    // A server that dates the bank item after the removal does not clear it: only a signed write does.
    const redated: Edit = (method, path, body) =>
      method === "GET" && path.startsWith(`/vaults/${vault.vaultId}/items`) && body?.items
        ? { ...body, items: body.items.map((i: any) => ({ ...i, updatedAt: "2099-01-01T00:00:00.000Z" })) }
        : body;
    const behind = new VaultClient({ baseUrl: server.url, pins, rosterHeads: heads, fetch: dishonest(redated) });
    await behind.login(alice.account.email, SDK_PASSWORD);
    expect((await behind.people.exposure(vault.vaultId, carol.account.userId)).items.find((i) => i.name === "bank")!.status).toBe(
      "exposed",
    );

    // A roster without the removal (as if carol were still a member): refused, as this device saw it.
    const cut: Edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${vault.vaultId}/roster` ? { links: body.links.slice(0, 2) } : body;
    const cutClient = new VaultClient({ baseUrl: server.url, pins, rosterHeads: heads, fetch: dishonest(cut) });
    await cutClient.login(alice.account.email, SDK_PASSWORD);
    await expect(cutClient.people.exposure(vault.vaultId, carol.account.userId)).rejects.toMatchObject({
      name: "SecurityError",
      code: "ROSTER_ROLLBACK",
    });
  });
});
