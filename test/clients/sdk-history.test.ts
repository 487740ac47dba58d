/**
 * History and trash through the SDK (sdk/client/history.ts) against the real service, on SQLite
 * and PostgreSQL: revisions kept and restored, the trash with its signed `restore` link, a rekey
 * that takes both along; and a dishonest server that relabels one revision as another or offers
 * an older password as what was deleted, refused with named errors and nothing written.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { Api } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin, SDK_PASSWORD } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { dishonest, writesTo, type Edit, type Sent } from "../helpers/dishonest";

jest.setTimeout(120_000);

const PASSWORD = SDK_PASSWORD;

describe.each(SQL_ENGINES)("history and trash through the SDK on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let alice: VaultClient, carol: VaultClient;
  const alicePins = new MemoryPinStore();
  const aliceHeads = new MemoryRosterHeadStore();
  let dropDatabase: () => Promise<void>;

  async function aliceBehind(edit: Edit, sent: Sent[] = []): Promise<VaultClient> {
    const c = new VaultClient({ baseUrl: server.url, pins: alicePins, rosterHeads: aliceHeads, fetch: dishonest(edit, sent) });
    await c.login(alice.account.email, PASSWORD);
    return c;
  }
  const raw = async (path: string) => (await api.get(path, { token: alice.http.currentTokens!.accessToken })).body;

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    api = new Api(server.url);
    ({ alice, carol } = await ownerAndAdmin(server.url, alicePins, aliceHeads));
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  async function team() {
    const vault = await alice.vaults.create(`Team ${randomUUID().slice(0, 6)}`, "shared");
    await alice.members.share(vault.vaultId, carol.account.userId, "admin");
    const item = await alice.items.add(vault.vaultId, { name: "github", fields: { username: "ada", password: "one" } });
    await alice.items.edit(vault.vaultId, item.itemId, { name: "github", fields: { username: "ada", password: "two" } });
    await carol.items.edit(vault.vaultId, item.itemId, { name: "github", fields: { username: "ada", password: "three" } });
    return { vaultId: vault.vaultId, itemId: item.itemId };
  }

  test("an item's revisions, who wrote them, and one made current again", async () => {
    const { vaultId, itemId } = await team();
    const history = await alice.items.history(vaultId, itemId);
    expect(history.map((r) => [r.revision, r.fields.password, r.signedBy])).toEqual([
      [2, "two", alice.account.userId],
      [1, "one", alice.account.userId],
    ]);
    const restored = await carol.items.restoreRevision(vaultId, itemId, 1);
    expect([restored.revision, restored.fields.password]).toEqual([4, "one"]);
    expect((await alice.items.get(vaultId, itemId)).fields.password).toBe("one");
    expect((await alice.items.history(vaultId, itemId)).map((r) => r.fields.password)).toEqual(["three", "two", "one"]);
  });

  test("deleted to the trash, restored by another member with a signed link, purged for good", async () => {
    const { vaultId, itemId } = await team();
    await alice.items.delete(vaultId, itemId);
    expect(await carol.items.list(vaultId)).toEqual([]);
    const trash = await carol.items.trash(vaultId);
    expect(trash.map((t) => [t.itemId, t.revision, t.fields.password, t.deletedBy])).toEqual([[itemId, 3, "three", alice.account.userId]]);
    const back = await carol.items.restore(vaultId, itemId);
    expect([back.revision, back.fields.password]).toEqual([4, "three"]);
    // Alice's client follows the log's restore link: the item is back, not resurrected.
    expect((await alice.items.list(vaultId)).map((i) => [i.itemId, i.revision])).toEqual([[itemId, 4]]);
    const log = await raw(`/vaults/${vaultId}/item-log?from=0`);
    expect(log.links.at(-1)).toMatchObject({ op: "restore", itemId, revision: 4, actorId: carol.account.userId });

    await carol.items.delete(vaultId, itemId);
    await alice.items.purge(vaultId, itemId);
    expect(await alice.items.trash(vaultId)).toEqual([]);
    expect(await alice.items.history(vaultId, itemId)).toEqual([]);
    await expect(alice.items.restore(vaultId, itemId)).rejects.toMatchObject({ status: 404 });
  });

  test("a rekey after a removal takes history and trash along under the new key", async () => {
    const { vaultId, itemId } = await team();
    const other = await alice.items.add(vaultId, { name: "aws", fields: { password: "x" } });
    await alice.items.delete(vaultId, other.itemId);
    await alice.members.remove(vaultId, carol.account.userId);
    const result = await alice.vaults.rekey(vaultId);
    expect([result.keyVersion, result.items, result.history, result.trash]).toEqual([2, 1, 2, 1]);
    for (const r of (await raw(`/vaults/${vaultId}/history`)).revisions) expect(r.keyVersion).toBe(2);
    expect((await alice.items.history(vaultId, itemId)).map((r) => r.fields.password)).toEqual(["two", "one"]);
    expect((await alice.items.trash(vaultId)).map((t) => t.fields.password)).toEqual(["x"]);
  });

  test("a dishonest server's relabelled revision, older trash or another item's ciphertext: named refusals, nothing written", async () => {
    const { vaultId, itemId } = await team();
    const other = await alice.items.add(vaultId, { name: "aws", fields: { password: "x" } });
    const kept = (await raw(`/vaults/${vaultId}/history?itemId=${itemId}`)).revisions;
    const [rev2, rev1] = kept;

    // Revision 1's ciphertext labelled as revision 2.
    const relabel: Edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${vaultId}/history`
        ? {
            revisions: body.revisions.map((r: any) =>
              r.revision === 2 ? { ...r, encryptedData: rev1.encryptedData, encryptedName: rev1.encryptedName } : r,
            ),
          }
        : body;
    await expect((await aliceBehind(relabel)).items.history(vaultId, itemId)).rejects.toMatchObject({
      name: "SecurityError",
      code: "HISTORY_MISMATCH",
    });

    // The deleted item offered back with an older password than it was deleted with.
    await alice.items.delete(vaultId, itemId);
    const older: Edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${vaultId}/trash`
        ? { items: body.items.map((t: any) => ({ ...t, encryptedData: rev2.encryptedData, encryptedName: rev2.encryptedName })) }
        : body;
    const sent: Sent[] = [];
    const behind = await aliceBehind(older, sent);
    await expect(behind.items.trash(vaultId)).rejects.toMatchObject({ code: "HISTORY_MISMATCH" });
    await expect(behind.items.restore(vaultId, itemId)).rejects.toMatchObject({ code: "HISTORY_MISMATCH" });
    expect(writesTo(sent, vaultId)).toEqual([]);

    // Another item's ciphertext as this one's: it does not open under this item's id.
    const swapped: Edit = async (method, path, body) => {
      if (!(method === "GET" && path === `/vaults/${vaultId}/trash`)) return body;
      const record = await raw(`/vaults/${vaultId}/items/${other.itemId}`);
      return { items: body.items.map((t: any) => ({ ...t, encryptedData: record.encryptedData, encryptedName: record.encryptedName })) };
    };
    await expect((await aliceBehind(swapped)).items.trash(vaultId)).rejects.toMatchObject({ code: "TAMPERED" });
    // The honest answer still restores it.
    expect((await alice.items.restore(vaultId, itemId)).fields.password).toBe("three");

    // An item the verified log holds (not deleted) offered as trash: refused before anything is signed.
    const live: Edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${vaultId}/trash`
        ? { items: [{ ...rev2, deletedAt: rev2.replacedAt, deletedBy: alice.account.userId }] }
        : body;
    const sentLive: Sent[] = [];
    await expect((await aliceBehind(live, sentLive)).items.restore(vaultId, itemId)).rejects.toMatchObject({ code: "HISTORY_MISMATCH" });
    expect(writesTo(sentLive, vaultId)).toEqual([]);
  });

  test("after a rekey: a revision pinned only by the next update's prevSha256 is still checked; a trashed item from before it is restored only when confirmed", async () => {
    const { vaultId, itemId } = await team();
    const gone = await alice.items.add(vaultId, { name: "old", fields: { password: "p" } });
    await alice.items.delete(vaultId, gone.itemId);
    await alice.members.remove(vaultId, carol.account.userId);
    await alice.vaults.rekey(vaultId);
    // Revision 4 is the rekeyed copy of 3 (a rekey keeps no revision under the old key); the edit's link names its digest as prevSha256.
    await alice.items.edit(vaultId, itemId, { name: "github", fields: { username: "ada", password: "four" } });
    const history = await alice.items.history(vaultId, itemId);
    expect(history.map((r) => [r.revision, r.fields.password, r.verified])).toEqual([
      [4, "three", true],
      [2, "two", false],
      [1, "one", false],
    ]);
    const kept = (await raw(`/vaults/${vaultId}/history?itemId=${itemId}`)).revisions;
    const rev2 = kept.find((r: any) => r.revision === 2);
    const relabel: Edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${vaultId}/history`
        ? {
            revisions: body.revisions.map((r: any) =>
              r.revision === 4 ? { ...r, encryptedData: rev2.encryptedData, encryptedName: rev2.encryptedName } : r,
            ),
          }
        : body;
    await expect((await aliceBehind(relabel)).items.history(vaultId, itemId)).rejects.toMatchObject({ code: "HISTORY_MISMATCH" });

    // What a person saw is what is restored, or nothing.
    const shown = history.find((r) => r.revision === 2)!;
    await expect(
      alice.items.restoreRevision(vaultId, itemId, 2, { ...shown, fields: { ...shown.fields, password: "other" } }),
    ).rejects.toMatchObject({
      status: 409,
    });
    // Written before the rekey, no verified link vouches for it: made current only when confirmed, as the trash.
    await expect(alice.items.restoreRevision(vaultId, itemId, 2, shown)).rejects.toMatchObject({
      name: "SecurityError",
      code: "REVISION_UNVERIFIED",
    });
    expect((await alice.items.restoreRevision(vaultId, itemId, 2, shown, { unverified: true })).fields.password).toBe("two");

    // Deleted before the rekey: the trash entry opens, but no verified link vouches for it.
    const trash = await alice.items.trash(vaultId);
    expect(trash.map((t) => [t.name, t.verified])).toEqual([["old", false]]);
    await expect(alice.items.restore(vaultId, gone.itemId)).rejects.toMatchObject({ name: "SecurityError", code: "TRASH_UNVERIFIED" });
    expect(await alice.items.trash(vaultId)).toHaveLength(1);
    expect((await alice.items.restore(vaultId, gone.itemId, { unverified: true })).fields.password).toBe("p");
  });
});
