/**
 * The SDK's delta reads (sdk/client/item-sync.ts) with real clients against the real service, on
 * SQLite and PostgreSQL: after a first full read, a client asks only what changed and ends with
 * the list a fresh client reads; a dishonest server that leaves a change or a deletion out of a
 * delta is caught by the signed item log exactly as in a full list, answers that are not deltas
 * are refused by name, and a refused read leaves the next one a full read.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, sealItem, VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin, SDK_PASSWORD, unsignedVault } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { dishonest, type Edit } from "../helpers/dishonest";

jest.setTimeout(120_000);

const PASSWORD = SDK_PASSWORD;
const names = (items: Array<{ name: string }>) => items.map((i) => i.name).sort();

describe.each(SQL_ENGINES)("delta reads in the SDK on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let alice: VaultClient, carol: VaultClient;
  const pins = new MemoryPinStore();
  const heads = new MemoryRosterHeadStore();
  let dropDatabase: () => Promise<void>;
  /** Every list read of alice's device: `since` (a delta) or `limit` (a page of the full list). */
  let reads: string[] = [];
  /** Their queries as sent. */
  let queries: string[] = [];
  /** What the dishonest server does to the next delta answer (then it is honest again). */
  let tamper: ((body: any) => any) | undefined;

  /** A device of alice's behind the dishonest server. */
  async function aliceDevice(): Promise<VaultClient> {
    const edit: Edit = (method, path, body, query) => {
      if (method === "GET" && /^\/vaults\/[^/]+\/items$/.test(path)) {
        reads.push(query.slice(1).split("=")[0]!);
        queries.push(query);
        if (query.startsWith("?since=") && tamper) {
          const t = tamper;
          tamper = undefined;
          return t(body);
        }
      }
      return body;
    };
    const c = new VaultClient({ baseUrl: server.url, pins, rosterHeads: heads, fetch: dishonest(edit) });
    await c.login(alice.account.email, PASSWORD);
    return c;
  }

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
  beforeEach(() => {
    reads = [];
    queries = [];
    tamper = undefined;
  });

  /** A signed shared vault of alice's, shared with carol, holding `count` items. */
  async function team(count: number) {
    const vault = await alice.vaults.create(`Team ${randomUUID().slice(0, 6)}`, "shared");
    await alice.members.share(vault.vaultId, carol.account.userId, "admin");
    const items = [];
    for (let i = 0; i < count; i++)
      items.push(await alice.items.add(vault.vaultId, { name: `item-${i}`, fields: { password: `pw-${i}` } }));
    return { vaultId: vault.vaultId, items };
  }

  test("an honest server: later reads are deltas, and each ends with what a fresh client lists", async () => {
    const { vaultId, items } = await team(3);
    const device = await aliceDevice();
    expect(names(await device.items.list(vaultId))).toEqual(["item-0", "item-1", "item-2"]);
    await carol.items.edit(vaultId, items[0]!.itemId, { name: "renamed", fields: { password: "new" } });
    await carol.items.delete(vaultId, items[1]!.itemId);
    await carol.items.add(vaultId, { name: "added", fields: { password: "x" } });
    reads = [];
    const later = await device.items.list(vaultId);
    expect(reads.every((r) => r === "since")).toBe(true);
    expect(reads.length).toBeGreaterThan(0);
    expect(names(later)).toEqual(["added", "item-2", "renamed"]);
    expect(later).toEqual(await carol.items.list(vaultId));
    // A rekey rewrites every item: the next read is a full one, and right.
    await alice.members.remove(vaultId, carol.account.userId);
    await alice.vaults.rekey(vaultId);
    reads = [];
    expect(names(await device.items.list(vaultId))).toEqual(["added", "item-2", "renamed"]);
    expect(reads).toContain("limit");
  });

  test("a vault without a signed roster syncs the same way", async () => {
    const { vaultId, vaultKey } = await unsignedVault(alice, "Plain");
    // Written as a plain client would (the SDK writes only to signed vaults).
    const add = async (name: string) => {
      const itemId = randomUUID();
      await alice.http.request("POST", `/vaults/${vaultId}/items`, {
        body: await sealItem(vaultKey, vaultId, itemId, { name, fields: {} }),
      });
    };
    const device = await aliceDevice();
    await add("one");
    expect(names(await device.items.list(vaultId))).toEqual(["one"]);
    await add("two");
    reads = [];
    expect(names(await device.items.list(vaultId))).toEqual(["one", "two"]);
    expect(reads).toEqual(["since"]);
  });

  test.each<[string, (body: any) => any, string]>([
    ["a change left out of the delta (the device keeps the old revision)", (b) => ({ ...b, items: [] }), "ITEM_STALE"],
    ["a deletion left out of the delta (the device keeps the item)", (b) => ({ ...b, deleted: [] }), "ITEM_RESURRECTED"],
  ])("on a signed vault, %s: %s, and the next read is a full one", async (_what, change, code) => {
    const { vaultId, items } = await team(2);
    const device = await aliceDevice();
    await device.items.list(vaultId);
    if (code === "ITEM_STALE") await carol.items.edit(vaultId, items[0]!.itemId, { name: "edited", fields: { password: "2" } });
    else await carol.items.delete(vaultId, items[0]!.itemId);
    tamper = change;
    await expect(device.items.list(vaultId)).rejects.toMatchObject({ name: "SecurityError", code });
    queries = [];
    const honest = await device.items.list(vaultId);
    // From the start again: every item of the vault, none kept from before.
    expect(queries[0]).toBe("?since=0");
    expect(honest).toEqual(await carol.items.list(vaultId));
  });

  test.each<[string, (body: any) => any, string]>([
    ["a cursor that goes back without a full read", (b) => ({ ...b, cursor: 0 }), "INCONSISTENT"],
    ["an item both changed and gone", (b) => ({ ...b, deleted: b.items.map((i: any) => i.itemId) }), "ITEM_MISMATCH"],
    ["an item twice", (b) => ({ ...b, items: [...b.items, ...b.items] }), "ITEM_MISMATCH"],
    ["a full answer with items in it", (b) => ({ ...b, full: true }), "INCONSISTENT"],
    ["something that is not a delta", (b) => ({ items: b.items }), "INCONSISTENT"],
  ])("an answer that is not a delta: %s is %s", async (_what, change, code) => {
    const { vaultId } = await team(1);
    const device = await aliceDevice();
    await device.items.list(vaultId);
    await carol.items.add(vaultId, { name: "new", fields: {} });
    tamper = change;
    await expect(device.items.list(vaultId)).rejects.toMatchObject({ name: "SecurityError", code });
    expect(names(await device.items.list(vaultId))).toEqual(["item-0", "new"]);
  });
});
