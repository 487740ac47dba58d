/** Items: opaque AES-GCM ciphertext with revisions. */
import { randomUUID } from "node:crypto";
import { Api, newOrg, registerUser, sharedVault, type TestUser } from "../helpers/client";
import { b64, decryptItem, encryptItem } from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";

describe("items", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, member: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    const org = await newOrg(api, ["member"]);
    owner = org.owner;
    [member] = org.users as [TestUser];
  });
  afterAll(() => server.stop());

  test("create, list, read, update with revisions, delete", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const items = `/vaults/${vaultId}/items`;
    const clientId = randomUUID();
    const a = await api.post(items, { token: member.token, body: encryptItem(vaultKey, vaultId, clientId, "pw1", "site1") });
    expect(a.status).toBe(201);
    expect(a.headers.get("location")).toBe(`/api/v1${items}/${clientId}`);
    expect(a.body).toEqual({
      itemId: clientId,
      vaultId,
      encryptedData: expect.any(String),
      encryptedName: expect.any(String),
      revision: 1,
      keyVersion: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // Without an itemId the server picks one; the client binds the ciphertext to it on its next write.
    const b = await api.post(items, {
      token: owner.token,
      body: { encryptedData: b64(Buffer.from("opaque")), encryptedName: b64(Buffer.from("n")) },
    });
    expect(b.status).toBe(201);
    expect(b.body.itemId).toMatch(/^[0-9a-f-]{36}$/);

    const taken = await api.post(items, { token: owner.token, body: encryptItem(vaultKey, vaultId, clientId, "x", "y") });
    expect([taken.status, taken.body.error.code]).toEqual([409, "CONFLICT"]);

    const list = await api.get(items, { token: owner.token });
    expect(list.body.items.map((i: any) => i.itemId)).toEqual([clientId, b.body.itemId]);
    const one = await api.get(`${items}/${clientId}`, { token: owner.token });
    expect(decryptItem(vaultKey, one.body)).toEqual({ data: "pw1", name: "site1" });

    const updated = await api.put(`${items}/${clientId}`, {
      token: owner.token,
      body: { ...encryptItem(vaultKey, vaultId, clientId, "pw2", "site1"), revision: 1 },
    });
    expect([updated.status, updated.body.revision]).toEqual([200, 2]);
    expect(decryptItem(vaultKey, updated.body).data).toBe("pw2");
    const stale = await api.put(`${items}/${clientId}`, {
      token: member.token,
      body: { ...encryptItem(vaultKey, vaultId, clientId, "pw3", "site1"), revision: 1 },
    });
    expect([stale.status, stale.body.error.code]).toEqual([409, "CONFLICT"]);
    const blind = await api.put(`${items}/${clientId}`, {
      token: member.token,
      body: encryptItem(vaultKey, vaultId, clientId, "pw3", "site1"),
    });
    expect([blind.status, blind.body.revision]).toEqual([200, 3]);
    const wrongVersion = await api.put(`${items}/${clientId}`, {
      token: member.token,
      body: { ...encryptItem(vaultKey, vaultId, clientId, "pw4", "site1"), keyVersion: 2 },
    });
    expect(wrongVersion.status).toBe(409);

    expect((await api.delete(`${items}/${clientId}`, { token: member.token })).status).toBe(204);
    expect((await api.get(`${items}/${clientId}`, { token: owner.token })).status).toBe(404);
    expect((await api.delete(`${items}/${clientId}`, { token: owner.token })).status).toBe(404);
  });

  test("a create naming an itemId the vault holds: 409 naming itemId, and the item is as it was", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const itemId = randomUUID();
    const first = await api.post(`/vaults/${vaultId}/items`, {
      token: owner.token,
      body: encryptItem(vaultKey, vaultId, itemId, "pw1", "site1"),
    });
    expect(first.status).toBe(201);
    const again = await api.post(`/vaults/${vaultId}/items`, {
      token: member.token,
      body: encryptItem(vaultKey, vaultId, itemId, "pw2", "site2"),
    });
    expect([again.status, again.body.error.code, again.body.error.field]).toEqual([409, "CONFLICT", "itemId"]);
    expect((await api.get(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token })).body).toEqual(first.body);
  });

  test("ids are case-insensitive on input and answered in lower case", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const itemId = randomUUID();
    const created = await api.post(`/vaults/${vaultId.toUpperCase()}/items`, {
      token: owner.token,
      body: { ...encryptItem(vaultKey, vaultId, itemId, "a", "b"), itemId: itemId.toUpperCase() },
    });
    expect([created.status, created.body.itemId, created.body.vaultId]).toEqual([201, itemId, vaultId]);
    expect((await api.get(`/vaults/${vaultId}/items/${itemId.toUpperCase()}`, { token: member.token })).body.itemId).toBe(itemId);
    expect((await api.get(`/vaults/${vaultId.toUpperCase()}`, { token: member.token })).body.vaultId).toBe(vaultId);
    const removed = await api.delete(`/vaults/${vaultId}/members/${member.userId.toUpperCase()}`, { token: owner.token });
    expect([removed.status, removed.body.remainingMembers.map((m: any) => m.userId)]).toEqual([200, [owner.userId]]);
  });

  test("an item is reachable through its own vault only", async () => {
    const v1 = await sharedVault(api, owner);
    const v2 = await sharedVault(api, owner);
    const itemId = randomUUID();
    expect(
      (await api.post(`/vaults/${v1.vaultId}/items`, { token: owner.token, body: encryptItem(v1.vaultKey, v1.vaultId, itemId, "a", "b") }))
        .status,
    ).toBe(201);
    const through2 = `/vaults/${v2.vaultId}/items/${itemId}`;
    expect((await api.get(through2, { token: owner.token })).status).toBe(404);
    expect((await api.put(through2, { token: owner.token, body: encryptItem(v2.vaultKey, v2.vaultId, itemId, "c", "d") })).status).toBe(
      404,
    );
    expect((await api.delete(through2, { token: owner.token })).status).toBe(404);
    expect((await api.get(`/vaults/${v1.vaultId}/items/${itemId}`, { token: owner.token })).status).toBe(200);
  });

  test("size limits: 256 KiB of data and 4 KiB of name, decoded", async () => {
    const { vaultId } = await sharedVault(api, owner);
    const items = `/vaults/${vaultId}/items`;
    const ok = await api.post(items, {
      token: owner.token,
      body: { encryptedData: b64(Buffer.alloc(256 * 1024, 1)), encryptedName: b64(Buffer.alloc(4096, 2)) },
    });
    expect(ok.status).toBe(201);
    const bigData = await api.post(items, {
      token: owner.token,
      body: { encryptedData: b64(Buffer.alloc(256 * 1024 + 1)), encryptedName: "AAAA" },
    });
    expect([bigData.status, bigData.body.error.field]).toEqual([400, "encryptedData"]);
    const bigName = await api.post(items, { token: owner.token, body: { encryptedData: "AAAA", encryptedName: b64(Buffer.alloc(4097)) } });
    expect([bigName.status, bigName.body.error.field]).toEqual([400, "encryptedName"]);
    const notB64 = await api.post(items, { token: owner.token, body: { encryptedData: "AAA", encryptedName: "AAAA" } });
    expect([notB64.status, notB64.body.error.field]).toEqual([400, "encryptedData"]);
    expect((await api.get(items, { token: owner.token })).body.items).toHaveLength(1);
  });

  test("a ciphertext in any form of base64 but the canonical one is refused (400 naming it), in an item write and in a rekey's streamed body; nothing is stored", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const items = `/vaults/${vaultId}/items`;
    const good = encryptItem(vaultKey, vaultId, randomUUID(), "pw", "site");
    // Each decodes (Buffer reads it), but to other bytes than it spells or in another alphabet.
    const forms = ["QR==", "QUJ=", "AB-_", "QU\tD", `${good.encryptedData.slice(0, -4)}\n${good.encryptedData.slice(-3)}`];
    for (const bad of forms) {
      const res = await api.post(items, { token: owner.token, body: { ...good, encryptedData: bad } });
      expect([bad, res.status, res.body.error?.field]).toEqual([bad, 400, "encryptedData"]);
      const named = await api.post(items, { token: owner.token, body: { ...good, encryptedName: bad } });
      expect([bad, named.status, named.body.error?.field]).toEqual([bad, 400, "encryptedName"]);
    }
    expect((await api.get(items, { token: owner.token })).body.items).toHaveLength(0);

    const created = await api.post(items, { token: owner.token, body: good });
    expect(created.status).toBe(201);
    const rekey = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: {
        newKeys: [{ userId: owner.userId, encryptedVaultKey: b64(Buffer.alloc(256, 1)), wrapSignature: b64(Buffer.alloc(64, 2)) }],
        items: [{ ...encryptItem(vaultKey, vaultId, good.itemId, "pw2", "site"), encryptedData: "QUJ=" }],
        keyVersion: 1,
      },
    });
    expect([rekey.status, rekey.body.error?.field]).toEqual([400, "encryptedData"]);
    const kept = await api.get(`${items}/${good.itemId}`, { token: owner.token });
    expect([kept.body.encryptedData, kept.body.revision, kept.body.keyVersion]).toEqual([good.encryptedData, 1, 1]);
  });

  test("a user outside the vault cannot read or write its items", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const stranger = await registerUser(api);
    const res = await api.post(`/vaults/${vaultId}/items`, {
      token: stranger.token,
      body: encryptItem(vaultKey, vaultId, randomUUID(), "a", "b"),
    });
    expect(res.status).toBe(404);
    expect((await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items).toHaveLength(0);
  });

  test("pages: with limit or after, a page in the list's order and the cursor of the next; without, every item as before", async () => {
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const itemId = randomUUID();
      ids.push(itemId);
      expect(
        (await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, `s${i}`, "n") }))
          .status,
      ).toBe(201);
    }
    const whole = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
    expect(Object.keys(whole.body)).toEqual(["items"]);
    const order = whole.body.items.map((i: { itemId: string }) => i.itemId);
    expect([...order].sort()).toEqual([...ids].sort());
    // Three pages of 3, 3 and 1; an item deleted between pages skips nothing that stays.
    const seen: string[] = [];
    let after: string | null = null;
    const sizes: number[] = [];
    do {
      const res: { status: number; body: { items: Array<{ itemId: string }>; next: string | null } } = await api.get(
        `/vaults/${vaultId}/items?limit=3${after ? `&after=${after}` : ""}`,
        { token: owner.token },
      );
      expect(res.status).toBe(200);
      sizes.push(res.body.items.length);
      seen.push(...res.body.items.map((i) => i.itemId));
      after = res.body.next;
      if (sizes.length === 1) expect((await api.delete(`/vaults/${vaultId}/items/${order[0]}`, { token: owner.token })).status).toBe(204);
    } while (after);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(order);
    // A cursor that is not one, and limits out of range: 400 naming the field.
    for (const [query, field] of [
      ["after=bm90IGEgY3Vyc29y", "after"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=x", "limit"],
    ]) {
      const res = await api.get(`/vaults/${vaultId}/items?${query}`, { token: owner.token });
      expect([query, res.status, res.body.error.field]).toEqual([query, 400, field]);
    }
    // A stranger's pages are the vault's 404, as everything else.
    expect((await api.get(`/vaults/${vaultId}/items?limit=2`, { token: member.token })).status).toBe(404);
  });
});
