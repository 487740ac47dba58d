/**
 * Delta reads (lib/domain/items/changes.ts) over HTTP, on SQLite and PostgreSQL:
 * `GET /vaults/:vaultId/items?since=<cursor>` answers what changed since, the ids gone, and the
 * next cursor; a rekey, a cursor from elsewhere, or too many changes send the client to the full
 * list; concurrent writes are never skipped by a client that follows the cursors.
 */
import { randomUUID } from "node:crypto";
import { Api, newOrg, rekeyBody, sharedVault, type TestUser } from "../helpers/client";
import { encryptItem, newVaultKey } from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";
import { SQL_ENGINES } from "../helpers/postgres";
import { MAX_DELTA_ITEMS } from "../../lib/domain/items/changes";

describe.each(SQL_ENGINES)("delta reads on %s", (_engine, makeStore) => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, member: TestUser, outsider: TestUser;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const store = await makeStore();
    drop = store.drop;
    server = await startTestServer({ REGISTRATION_MODE: "open", ...store.env });
    api = new Api(server.url);
    const org = await newOrg(api, ["member"]);
    owner = org.owner;
    [member] = org.users as [TestUser];
    outsider = (await newOrg(api)).owner;
  });
  afterAll(async () => {
    await server.stop();
    await drop();
  });

  const delta = (vaultId: string, since: number | string, who: TestUser = owner) =>
    api.get(`/vaults/${vaultId}/items?since=${since}`, { token: who.token });
  const create = (vaultId: string, vaultKey: Buffer, itemId: string, data = "pw", who: TestUser = owner) =>
    api.post(`/vaults/${vaultId}/items`, { token: who.token, body: encryptItem(vaultKey, vaultId, itemId, data, "site") });

  test("since 0 answers every item and a cursor; then only what changed: updates, new items, and deletes as tombstones", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [a, b, c]) expect((await create(vaultId, vaultKey, id)).status).toBe(201);
    const first = await delta(vaultId, 0);
    expect(first.status).toBe(200);
    expect(first.body.items.map((i: any) => i.itemId).sort()).toEqual([a, b, c].sort());
    expect(first.body).toMatchObject({ deleted: [], full: false, cursor: expect.any(Number) });
    // Nothing changed: nothing answered, the same cursor.
    const idle = await delta(vaultId, first.body.cursor);
    expect(idle.body).toEqual({ items: [], deleted: [], cursor: first.body.cursor, full: false });

    const d = randomUUID();
    await create(vaultId, vaultKey, d, "pw", member);
    const put = await api.put(`/vaults/${vaultId}/items/${a}`, {
      token: member.token,
      body: encryptItem(vaultKey, vaultId, a, "pw2", "site"),
    });
    expect(put.status).toBe(200);
    expect((await api.delete(`/vaults/${vaultId}/items/${b}`, { token: owner.token })).status).toBe(204);
    const next = await delta(vaultId, first.body.cursor, member);
    expect(next.body.items.map((i: any) => [i.itemId, i.revision])).toEqual([
      [d, 1],
      [a, 2],
    ]);
    expect(next.body.deleted).toEqual([b]);
    expect(next.body.cursor).toBeGreaterThan(first.body.cursor);
    expect(next.body.full).toBe(false);

    // Restored from the trash: back as an item; purged after a delete: a tombstone still.
    expect((await api.post(`/vaults/${vaultId}/trash/${b}/restore`, { token: owner.token })).status).toBe(200);
    expect((await api.delete(`/vaults/${vaultId}/items/${c}`, { token: owner.token })).status).toBe(204);
    expect((await api.delete(`/vaults/${vaultId}/trash/${c}`, { token: owner.token })).status).toBe(204);
    const later = await delta(vaultId, next.body.cursor);
    expect(later.body.items.map((i: any) => i.itemId)).toEqual([b]);
    expect(later.body.deleted).toEqual([c]);

    // An import: every new item, once.
    const bulk = [randomUUID(), randomUUID()];
    const imported = await api.post(`/vaults/${vaultId}/items/bulk`, {
      token: owner.token,
      body: { items: bulk.map((id) => encryptItem(vaultKey, vaultId, id, "b", "bulk")) },
    });
    expect(imported.status).toBe(201);
    const afterImport = await delta(vaultId, later.body.cursor);
    expect(afterImport.body.items.map((i: any) => i.itemId).sort()).toEqual([...bulk].sort());

    // The full list keeps its shape.
    const full = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
    expect(Object.keys(full.body)).toEqual(["items"]);
  });

  test("a rekey, a cursor ahead of the vault, and more changes than a delta answers: `full`, with no items and the cursor to go on from", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) await create(vaultId, vaultKey, id);
    const before = (await delta(vaultId, 0)).body;
    const newKey = newVaultKey();
    const rekey = rekeyBody(
      newKey,
      owner,
      [owner],
      ids.map((id) => encryptItem(newKey, vaultId, id, "pw", "site")),
    );
    expect((await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekey })).status).toBe(204);
    const afterRekey = (await delta(vaultId, before.cursor)).body;
    expect(afterRekey).toEqual({ items: [], deleted: [], cursor: expect.any(Number), full: true });
    // From the cursor a full read gave, deltas go on.
    expect((await delta(vaultId, afterRekey.cursor)).body).toEqual({ items: [], deleted: [], cursor: afterRekey.cursor, full: false });
    // A cursor this vault never gave (another server's, or from before a restore).
    expect((await delta(vaultId, afterRekey.cursor + 5)).body.full).toBe(true);

    // More changes than one answer holds.
    const many = Array.from({ length: MAX_DELTA_ITEMS + 1 }, () => randomUUID());
    const imported = await api.post(`/vaults/${vaultId}/items/bulk`, {
      token: owner.token,
      body: { items: many.map((id) => encryptItem(newKey, vaultId, id, "b", "bulk")) },
    });
    expect(imported.status).toBe(201);
    const tooMany = (await delta(vaultId, afterRekey.cursor)).body;
    expect(tooMany).toMatchObject({ items: [], full: true });
    expect(tooMany.cursor).toBeGreaterThan(afterRekey.cursor);
  });

  test("refusals: since with a page, a negative or non-integer since, a stranger's vault", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    await create(vaultId, vaultKey, randomUUID());
    for (const [query, field] of [
      ["since=0&limit=10", "since"],
      ["since=0&after=bm90", "since"],
      ["since=-1", "since"],
      ["since=1.5", "since"],
      ["since=abc", "since"],
    ]) {
      const res = await api.get(`/vaults/${vaultId}/items?${query}`, { token: owner.token });
      expect([query, res.status, res.body.error.field]).toEqual([query, 400, field]);
    }
    expect((await delta(vaultId, 0, outsider)).status).toBe(404);
  });

  test("a client following the cursors under concurrent writes ends with exactly the vault's items", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const cache = new Map<string, number>();
    let cursor = 0;
    const follow = async () => {
      const res = await delta(vaultId, cursor);
      expect(res.status).toBe(200);
      if (res.body.full) {
        cache.clear();
        for (const i of (await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items) cache.set(i.itemId, i.revision);
      } else {
        for (const i of res.body.items) cache.set(i.itemId, i.revision);
        for (const id of res.body.deleted) cache.delete(id);
      }
      cursor = res.body.cursor;
    };
    let writing = true;
    const writers = [owner, member].map(async (who) => {
      const mine: string[] = [];
      while (writing) {
        const id = randomUUID();
        if ((await create(vaultId, vaultKey, id, "pw", who)).status === 201) mine.push(id);
        if (mine.length > 2) {
          const victim = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]!;
          await api.delete(`/vaults/${vaultId}/items/${victim}`, { token: who.token });
        }
        const some = mine[0];
        if (some)
          await api.put(`/vaults/${vaultId}/items/${some}`, { token: who.token, body: encryptItem(vaultKey, vaultId, some, "u", "site") });
      }
    });
    const readers = (async () => {
      for (let i = 0; i < 25; i++) await follow();
    })();
    await readers;
    writing = false;
    await Promise.all(writers);
    await follow();
    const truth = (await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items;
    expect([...cache.entries()].sort()).toEqual(truth.map((i: any) => [i.itemId, i.revision]).sort());
    expect(truth.length).toBeGreaterThan(0);
  });
});
