/**
 * How the web vault saves the edits made offline (web/src/offline-replay.ts), with the SDK against
 * the real service, for what the browser suite (web-offline-edits.test.ts) does not reach: a vault
 * the person lost meanwhile keeps its edit waiting, named; an item purged meanwhile is added again;
 * a server that stops answering part way leaves the rest waiting. An edit leaves the queue only
 * once saved.
 */
import { MemoryPinStore, VaultClient, type ItemContent } from "../../sdk";
import { replay, type WaitingEdit } from "../../web/src/offline-replay";
import { ownerAndAdmin, SDK_PASSWORD } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(120_000);

describe("saving the edits made offline", () => {
  let server: TestServer;
  let alice: VaultClient, carol: VaultClient;
  beforeAll(async () => {
    server = await startTestServer();
    ({ alice, carol } = await ownerAndAdmin(server.url, new MemoryPinStore()));
  });
  afterAll(async () => server?.stop());

  const login = (fields: Record<string, string>, name = "Night desk"): ItemContent => ({ name, fields });
  /** The edits `done` took out of the queue, in order. */
  const replayed = async (client: VaultClient, edits: WaitingEdit[]) => {
    const done: WaitingEdit[] = [];
    const report = await replay(client, edits, async (e) => void done.push(e));
    return { report, done };
  };

  test("a vault lost meanwhile keeps its edit waiting, named; the edits after it are saved", async () => {
    const team = await alice.vaults.create("Night shift", "shared");
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    const desk = await alice.items.add(team.vaultId, login({ password: "lamp-1" }));
    const own = await carol.vaults.create("Carol's own");
    await carol.items.list(team.vaultId);
    // Offline, carol changes the desk's password and adds an item of her own; meanwhile she is removed from the team vault.
    await alice.members.remove(team.vaultId, carol.account.userId);
    const edits: WaitingEdit[] = [
      {
        id: "e-desk",
        op: "edit",
        vaultId: team.vaultId,
        vaultName: "Night shift",
        itemId: desk.itemId,
        revision: 1,
        content: login({ password: "lamp-2" }),
      },
      {
        id: "e1",
        op: "add",
        vaultId: own.vaultId,
        vaultName: "Carol's own",
        itemId: "local-1",
        content: login({ password: "key-9" }, "Locker"),
      },
    ];
    const { report, done } = await replayed(carol, edits);
    expect(report.waiting).toEqual([{ item: '"Night desk" (Night shift)', why: expect.stringMatching(/not found|no longer have access/) }]);
    expect([report.saved, report.unreachable, report.conflicts, report.addedAgain]).toEqual([1, false, [], []]);
    expect(done).toEqual([edits[1]]);
    expect((await alice.items.get(team.vaultId, desk.itemId)).fields.password).toBe("lamp-1");
    expect((await carol.items.list(own.vaultId)).map((i) => [i.name, i.fields.password])).toEqual([["Locker", "key-9"]]);
  });

  test("an item purged meanwhile comes back as a new item; a delete of an item changed meanwhile is not made", async () => {
    const vault = await alice.vaults.create("Purged");
    const gone = await alice.items.add(vault.vaultId, login({ password: "old" }, "Gone"));
    const moved = await alice.items.add(vault.vaultId, login({ password: "first" }, "Moved"));
    // Meanwhile, from another device: one item deleted and purged, the other changed.
    await alice.items.delete(vault.vaultId, gone.itemId);
    await alice.items.purge(vault.vaultId, gone.itemId);
    await alice.items.edit(vault.vaultId, moved.itemId, login({ password: "second" }, "Moved"));
    const edits: WaitingEdit[] = [
      {
        id: "e-gone",
        op: "edit",
        vaultId: vault.vaultId,
        vaultName: "Purged",
        itemId: gone.itemId,
        revision: 1,
        content: login({ password: "new" }, "Gone"),
      },
      { id: "e2", op: "delete", vaultId: vault.vaultId, vaultName: "Purged", itemId: moved.itemId, revision: 1, name: "Moved" },
    ];
    const { report, done } = await replayed(alice, edits);
    expect([report.addedAgain, report.notDeleted, report.waiting]).toEqual([['"Gone" (Purged)'], ['"Moved" (Purged)'], []]);
    expect(done).toEqual(edits);
    const items = await alice.items.list(vault.vaultId);
    expect(items.map((i) => [i.name, i.fields.password]).sort()).toEqual([
      ["Gone", "new"],
      ["Moved", "second"],
    ]);
  });

  test("a server that stops answering part way: nothing more is tried, the rest waits", async () => {
    const vault = await alice.vaults.create("Unreachable");
    let answering = true;
    const flaky = new VaultClient({
      baseUrl: server.url,
      pins: new MemoryPinStore(),
      fetch: (url, init) => (answering ? fetch(url, init) : Promise.reject(new TypeError("fetch failed"))),
    });
    await flaky.login(alice.account.email, SDK_PASSWORD);
    const edits: WaitingEdit[] = [
      {
        id: "e3",
        op: "add",
        vaultId: vault.vaultId,
        vaultName: "Unreachable",
        itemId: "local-1",
        content: login({ password: "a" }, "First"),
      },
      {
        id: "e4",
        op: "add",
        vaultId: vault.vaultId,
        vaultName: "Unreachable",
        itemId: "local-2",
        content: login({ password: "b" }, "Second"),
      },
    ];
    const done: WaitingEdit[] = [];
    const report = await replay(flaky, edits, async (e) => {
      done.push(e);
      answering = false;
    });
    expect([report.saved, report.unreachable, report.waiting, done]).toEqual([1, true, [], [edits[0]]]);
    expect((await alice.items.list(vault.vaultId)).map((i) => i.name)).toEqual(["First"]);
  });
});
