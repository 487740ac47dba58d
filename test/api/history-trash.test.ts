/**
 * Item history and the trash over HTTP (lib/domain/items/history.ts), on SQLite and
 * PostgreSQL: an update keeps what it replaced, a delete goes to the trash, a restore brings it
 * back, a purge and the sweeper remove it for good, history gives way when the vault needs the
 * room, and a rekey re-encrypts history and trash or drops them, never keeping them under the key
 * a removed member holds.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Api, newOrg, rekeyBody, sharedVault, type TestUser } from "../helpers/client";
import { decryptItem, encryptItem } from "../helpers/crypto";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";
import { eventually } from "../helpers/wait";

describe.each(SQL_ENGINES)("history and trash on %s", (_engine, makeStore) => {
  let db: ServerStore;
  let server: TestServer;
  let api: Api;
  let owner: TestUser, member: TestUser, outsider: TestUser;

  beforeAll(async () => {
    db = await makeStore();
    server = await startTestServer({
      ...db.env,
      REGISTRATION_MODE: "open",
      ITEM_HISTORY: "3",
      TRASH_RETENTION: "3s",
      SWEEP_INTERVAL: "1s",
    });
    api = new Api(server.url);
    const org = await newOrg(api, ["member"]);
    owner = org.owner;
    [member] = org.users as [TestUser];
    outsider = (await newOrg(api)).owner;
  });
  afterAll(async () => {
    await server.stop();
    await db.drop();
  });

  const put = (vaultId: string, key: Buffer, itemId: string, secret: string, by: TestUser = owner) =>
    api.put(`/vaults/${vaultId}/items/${itemId}`, { token: by.token, body: encryptItem(key, vaultId, itemId, secret, "site") });
  const create = (vaultId: string, key: Buffer, itemId: string, secret: string, by: TestUser = owner) =>
    api.post(`/vaults/${vaultId}/items`, { token: by.token, body: encryptItem(key, vaultId, itemId, secret, "site") });
  const historyOf = async (vaultId: string, key: Buffer, itemId?: string) => {
    const res = await api.get(`/vaults/${vaultId}/history${itemId ? `?itemId=${itemId}` : ""}`, { token: owner.token });
    expect(res.status).toBe(200);
    return (res.body.revisions as any[]).map((r) => `${r.revision}:${decryptItem(key, r).data}`);
  };

  test("an update keeps the revision it replaces, the newest ITEM_HISTORY of them", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const itemId = randomUUID();
    expect((await create(vaultId, vaultKey, itemId, "pw1")).status).toBe(201);
    expect(await historyOf(vaultId, vaultKey, itemId)).toEqual([]);
    for (const [n, by] of [
      [2, member],
      [3, owner],
      [4, member],
      [5, owner],
    ] as const)
      expect((await put(vaultId, vaultKey, itemId, `pw${n}`, by)).body.revision).toBe(n);
    // Revisions 1 to 4 were replaced; three are kept, newest first.
    expect(await historyOf(vaultId, vaultKey, itemId)).toEqual(["4:pw4", "3:pw3", "2:pw2"]);
    const one = (await api.get(`/vaults/${vaultId}/history?itemId=${itemId}`, { token: member.token })).body.revisions[0];
    expect(one).toEqual({
      itemId,
      vaultId,
      revision: 4,
      encryptedData: expect.any(String),
      encryptedName: expect.any(String),
      keyVersion: 1,
      createdAt: expect.any(String),
      replacedAt: expect.any(String),
    });
    // A non-member sees nothing of it.
    expect((await api.get(`/vaults/${vaultId}/history`, { token: outsider.token })).status).toBe(404);
    const other = randomUUID();
    await create(vaultId, vaultKey, other, "a");
    await put(vaultId, vaultKey, other, "b");
    expect(await historyOf(vaultId, vaultKey)).toHaveLength(4);
  });

  test("a delete goes to the trash; restore brings it back at the next revision, with its history; purge removes it for good", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const itemId = randomUUID();
    await create(vaultId, vaultKey, itemId, "pw1");
    await put(vaultId, vaultKey, itemId, "pw2");
    expect((await api.delete(`/vaults/${vaultId}/items/${itemId}`, { token: member.token })).status).toBe(204);
    expect((await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items).toEqual([]);
    const trash = await api.get(`/vaults/${vaultId}/trash`, { token: owner.token });
    expect(trash.body.items).toEqual([
      expect.objectContaining({ itemId, revision: 2, deletedBy: member.userId, deletedAt: expect.any(String) }),
    ]);
    expect(decryptItem(vaultKey, trash.body.items[0]).data).toBe("pw2");
    // The id stays taken while the item is in the trash.
    const again = await create(vaultId, vaultKey, itemId, "other");
    expect([again.status, again.body.error.code, again.body.error.field]).toEqual([409, "CONFLICT", "itemId"]);
    expect((await api.post(`/vaults/${vaultId}/trash/${itemId}/restore`, { token: outsider.token })).status).toBe(404);

    const restored = await api.post(`/vaults/${vaultId}/trash/${itemId}/restore`, { token: member.token });
    expect([restored.status, restored.body.revision]).toEqual([200, 3]);
    expect(decryptItem(vaultKey, restored.body).data).toBe("pw2");
    expect((await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items).toEqual([]);
    expect(await historyOf(vaultId, vaultKey, itemId)).toEqual(["1:pw1"]);
    const twice = await api.post(`/vaults/${vaultId}/trash/${itemId}/restore`, { token: member.token });
    expect([twice.status, twice.body.error.code]).toEqual([404, "NOT_FOUND"]);

    await api.delete(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token });
    expect((await api.delete(`/vaults/${vaultId}/trash/${itemId}`, { token: outsider.token })).status).toBe(404);
    expect((await api.delete(`/vaults/${vaultId}/trash/${itemId}`, { token: member.token })).status).toBe(204);
    expect((await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items).toEqual([]);
    expect(await historyOf(vaultId, vaultKey, itemId)).toEqual([]);
    expect((await api.delete(`/vaults/${vaultId}/trash/${itemId}`, { token: member.token })).status).toBe(404);
    // Purged, the id is free again.
    expect((await create(vaultId, vaultKey, itemId, "new")).status).toBe(201);
  });

  test("the sweeper purges what has been in the trash for TRASH_RETENTION, with its history", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const itemId = randomUUID();
    await create(vaultId, vaultKey, itemId, "pw1");
    await put(vaultId, vaultKey, itemId, "pw2");
    await api.delete(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token });
    expect((await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items).toHaveLength(1);
    await eventually(
      "the sweeper to empty the trash",
      async () => (await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items.length === 0,
      { timeoutMs: 20_000, everyMs: 250 },
    );
    expect(await historyOf(vaultId, vaultKey, itemId)).toEqual([]);
  });

  test("a rekey re-encrypts the history and trash it names and drops the rest; a plain rekey drops them all", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const kept = randomUUID();
    const trashed = randomUUID();
    const gone = randomUUID();
    await create(vaultId, vaultKey, kept, "k1");
    await put(vaultId, vaultKey, kept, "k2");
    await put(vaultId, vaultKey, kept, "k3");
    for (const id of [trashed, gone]) {
      await create(vaultId, vaultKey, id, "first");
      await put(vaultId, vaultKey, id, `${id.slice(0, 4)}`);
      await api.delete(`/vaults/${vaultId}/items/${id}`, { token: owner.token });
    }
    const newKey = randomBytes(32);
    const items = [encryptItem(newKey, vaultId, kept, "k3", "site")];
    const body = rekeyBody(newKey, owner, [owner, member], items);
    const rev1 = { ...encryptItem(newKey, vaultId, kept, "k1", "site"), revision: 1 };
    const badUnknown = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: { ...body, history: [{ ...rev1, revision: 7 }] },
    });
    expect([badUnknown.status, badUnknown.body.error.field]).toEqual([400, "history"]);
    const badTwice = await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: { ...body, history: [rev1, rev1] } });
    expect([badTwice.status, badTwice.body.error.field]).toEqual([400, "history"]);
    const badTrash = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: { ...body, trash: [encryptItem(newKey, vaultId, kept, "x", "y")] },
    });
    expect([badTrash.status, badTrash.body.error.field]).toEqual([400, "trash"]);
    // A revision of a trashed item the rekey drops: a 400 naming history, not a failed write.
    const goneRev = { ...encryptItem(newKey, vaultId, gone, "first", "site"), revision: 1 };
    const trashedNew = encryptItem(newKey, vaultId, trashed, trashed.slice(0, 4), "site");
    const badDropped = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: { ...body, history: [goneRev], trash: [trashedNew] },
    });
    expect([badDropped.status, badDropped.body.error.field]).toEqual([400, "history"]);
    // Nothing changed by the refusals.
    expect(await historyOf(vaultId, vaultKey, kept)).toEqual(["2:k2", "1:k1"]);

    const res = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: { ...body, history: [rev1], trash: [trashedNew] },
    });
    expect(res.status).toBe(204);
    // Revision 2 was left out: dropped. What remains opens under the new key only.
    const history = (await api.get(`/vaults/${vaultId}/history`, { token: owner.token })).body.revisions;
    expect(history.map((r: any) => [r.itemId, r.revision, r.keyVersion])).toEqual([[kept, 1, 2]]);
    expect(decryptItem(newKey, history[0]).data).toBe("k1");
    expect(() => decryptItem(vaultKey, history[0])).toThrow();
    const trash = (await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items;
    expect(trash.map((t: any) => [t.itemId, t.keyVersion])).toEqual([[trashed, 2]]);
    expect(() => decryptItem(vaultKey, trash[0])).toThrow();
    // Restored after the rekey, it opens under the new key.
    const restored = await api.post(`/vaults/${vaultId}/trash/${trashed}/restore`, { token: member.token });
    expect(decryptItem(newKey, restored.body).data).toBe(trashed.slice(0, 4));
    await api.delete(`/vaults/${vaultId}/items/${trashed}`, { token: owner.token });

    // A client that knows nothing of history: its rekey succeeds, and nothing stays under the old key.
    const plainKey = randomBytes(32);
    const plain = rekeyBody(plainKey, owner, [owner, member], [encryptItem(plainKey, vaultId, kept, "k3", "site")]);
    expect((await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: plain })).status).toBe(204);
    expect((await api.get(`/vaults/${vaultId}/history`, { token: owner.token })).body.revisions).toEqual([]);
    expect((await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items).toEqual([]);
  });

  test("history gives way when the vault needs the room; the trash counts until purged", async () => {
    const small = await startTestServer({ ...db.env, REGISTRATION_MODE: "open", VAULT_MAX_BYTES: "6000", ITEM_HISTORY: "10" });
    try {
      const sApi = new Api(small.url);
      const { owner: o } = await newOrg(sApi);
      const { vaultId, vaultKey } = await sharedVault(sApi, o);
      const secret = (c: string) => c.repeat(1000);
      const a = randomUUID();
      expect(
        (await sApi.post(`/vaults/${vaultId}/items`, { token: o.token, body: encryptItem(vaultKey, vaultId, a, secret("a"), "n") })).status,
      ).toBe(201);
      // Each revision is about 1.4 KB of base64: the vault holds four at most, so the oldest give way.
      for (const c of "bcdefg") {
        const res = await sApi.put(`/vaults/${vaultId}/items/${a}`, {
          token: o.token,
          body: encryptItem(vaultKey, vaultId, a, secret(c), "n"),
        });
        expect(res.status).toBe(200);
      }
      const kept = (await sApi.get(`/vaults/${vaultId}/history?itemId=${a}`, { token: o.token })).body.revisions;
      expect(kept.map((r: any) => decryptItem(vaultKey, r).data[0])).toEqual(["f", "e", "d"]);
      // A second item takes the room of the history, never a refusal while history can give way.
      const b = randomUUID();
      expect(
        (await sApi.post(`/vaults/${vaultId}/items`, { token: o.token, body: encryptItem(vaultKey, vaultId, b, secret("x"), "n") })).status,
      ).toBe(201);
      expect((await sApi.get(`/vaults/${vaultId}/history`, { token: o.token })).body.revisions.length).toBeLessThan(3);
      // The trash holds its room: a deleted item does not free it until it is purged.
      await sApi.delete(`/vaults/${vaultId}/items/${b}`, { token: o.token });
      const more = [];
      for (const c of "xyz")
        more.push(
          (
            await sApi.post(`/vaults/${vaultId}/items`, {
              token: o.token,
              body: encryptItem(vaultKey, vaultId, randomUUID(), secret(c), "n"),
            })
          ).status,
        );
      expect(more).toEqual([201, 201, 413]);
      expect((await sApi.delete(`/vaults/${vaultId}/trash/${b}`, { token: o.token })).status).toBe(204);
      expect(
        (
          await sApi.post(`/vaults/${vaultId}/items`, {
            token: o.token,
            body: encryptItem(vaultKey, vaultId, randomUUID(), secret("z"), "n"),
          })
        ).status,
      ).toBe(201);
    } finally {
      await small.stop();
    }
  });

  test("concurrent updates each keep their own replaced revision; a restore racing a purge: one wins, never a 5xx", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const itemId = randomUUID();
    await create(vaultId, vaultKey, itemId, "start");
    const writes = await Promise.all(Array.from({ length: 8 }, (_, n) => put(vaultId, vaultKey, itemId, `w${n}`, n % 2 ? member : owner)));
    expect(writes.map((w) => w.status)).toEqual(Array(8).fill(200));
    expect(new Set(writes.map((w) => w.body.revision)).size).toBe(8);
    const history = (await api.get(`/vaults/${vaultId}/history?itemId=${itemId}`, { token: owner.token })).body.revisions;
    expect(history.map((r: any) => r.revision)).toEqual([8, 7, 6]);

    for (let round = 0; round < 5; round++) {
      const id = randomUUID();
      await create(vaultId, vaultKey, id, `r${round}`);
      await api.delete(`/vaults/${vaultId}/items/${id}`, { token: owner.token });
      const [restore, purge] = await Promise.all([
        api.post(`/vaults/${vaultId}/trash/${id}/restore`, { token: member.token }),
        api.delete(`/vaults/${vaultId}/trash/${id}`, { token: owner.token }),
      ]);
      expect([restore.status, purge.status].sort()).toEqual(restore.status === 200 ? [200, 404] : [204, 404]);
      const listed = (await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items.some((i: any) => i.itemId === id);
      const inTrash = (await api.get(`/vaults/${vaultId}/trash`, { token: owner.token })).body.items.some((i: any) => i.itemId === id);
      expect([listed, inTrash]).toEqual([restore.status === 200, false]);
    }
  });
});
