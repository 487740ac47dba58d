/** The rekey: a client's full flow, and every refusal leaving the vault exactly as it was. */
import { randomUUID } from "node:crypto";
import { Api, newOrg, rekeyBody, sharedVault, type TestUser } from "../helpers/client";
import {
  b64,
  decryptItem,
  encryptItem,
  newVaultKey,
  signWrap,
  unb64,
  unwrapShared,
  wrapPersonal,
  wrapShared,
  wrapVerifies,
} from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";

describe("rekey", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, admin: TestUser, member: TestUser, leaver: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    api = new Api(server.url);
    const org = await newOrg(api, ["admin", "member", "member"]);
    owner = org.owner;
    [admin, member, leaver] = org.users as [TestUser, TestUser, TestUser];
  });
  afterAll(() => server.stop());

  /** A vault with items, and a member who has just been removed: the situation a rekey follows. */
  async function vaultAfterRemoval(itemCount = 5) {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [
      [admin, "admin"],
      [member, "member"],
      [leaver, "member"],
    ]);
    for (let i = 0; i < itemCount; i++) {
      const itemId = randomUUID();
      const res = await api.post(`/vaults/${vaultId}/items`, {
        token: member.token,
        body: encryptItem(vaultKey, vaultId, itemId, `secret ${i}`, `login ${i}`),
      });
      expect(res.status).toBe(201);
    }
    const removal = await api.delete(`/vaults/${vaultId}/members/${leaver.userId}`, { token: owner.token });
    expect(removal.body.rekeyRequired).toBe(true);
    return { vaultId, oldKey: vaultKey };
  }

  /** What a client does: decrypt every item with the old key, re-encrypt under the new one. */
  async function reencryptAll(vaultId: string, oldKey: Buffer, newKey: Buffer, as: TestUser) {
    const items = (await api.get(`/vaults/${vaultId}/items`, { token: as.token })).body.items;
    return items.map((it: any) => {
      const plain = decryptItem(oldKey, it);
      return encryptItem(newKey, vaultId, it.itemId, plain.data, plain.name);
    });
  }

  /** Everything a rekey would change, as every remaining member sees it. */
  async function state(vaultId: string) {
    const views = await Promise.all([owner, admin, member].map((u) => api.get(`/vaults/${vaultId}`, { token: u.token })));
    const items = await api.get(`/vaults/${vaultId}/items`, { token: owner.token });
    return { vaults: views.map((v) => v.body), items: items.body.items };
  }

  test("after a removal, an admin rekeys: items open with the new key only, every wrap is new and signed by the admin", async () => {
    const { vaultId, oldKey } = await vaultAfterRemoval();
    const newKey = newVaultKey();
    const items = await reencryptAll(vaultId, oldKey, newKey, admin);
    const res = await api.post(`/vaults/${vaultId}/rekey`, {
      token: admin.token,
      body: rekeyBody(newKey, admin, [owner, admin, member], items),
    });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();

    for (const user of [owner, admin, member]) {
      const v = (await api.get(`/vaults/${vaultId}`, { token: user.token })).body;
      expect(v).toMatchObject({ keyVersion: 2, rekeyRequired: false, senderId: admin.userId });
      expect(wrapVerifies(unb64(v.encryptedVaultKey), unb64(v.wrapSignature), admin.bundle.signingPublicKey)).toBe(true);
      expect(unwrapShared(unb64(v.encryptedVaultKey), user.keys.rsaPrivate)).toEqual(newKey);
    }
    const roles = (await api.get(`/vaults/${vaultId}/members`, { token: owner.token })).body.members.map((m: any) => [m.userId, m.role]);
    expect(roles).toEqual([
      [owner.userId, "owner"],
      [admin.userId, "admin"],
      [member.userId, "member"],
    ]);

    const after = (await api.get(`/vaults/${vaultId}/items`, { token: member.token })).body.items;
    expect(after).toHaveLength(5);
    for (const [i, it] of after.entries()) {
      expect(decryptItem(newKey, it)).toEqual({ data: `secret ${i}`, name: `login ${i}` });
      expect(() => decryptItem(oldKey, it)).toThrow();
      expect([it.revision, it.keyVersion]).toEqual([2, 2]);
    }
    expect((await api.get(`/vaults/${vaultId}`, { token: leaver.token })).status).toBe(404);
  });

  test("a refused rekey, for any reason, leaves every item and wrap exactly as before", async () => {
    const { vaultId, oldKey } = await vaultAfterRemoval(3);
    const newKey = newVaultKey();
    const items = await reencryptAll(vaultId, oldKey, newKey, owner);
    const good = rekeyBody(newKey, owner, [owner, admin, member], items);
    const before = await state(vaultId);
    const wrongSize = wrapPersonal(newKey, owner.keys.stretchedKey);

    const attempts: Array<[string, TestUser, unknown, number, string, string?]> = [
      ["a member missing", owner, { ...good, newKeys: good.newKeys.slice(0, 2) }, 400, "INVALID", "newKeys"],
      ["the removed member included", owner, rekeyBody(newKey, owner, [owner, admin, member, leaver], items), 400, "INVALID", "newKeys"],
      ["a member twice", owner, { ...good, newKeys: [...good.newKeys, good.newKeys[0]] }, 400, "INVALID", "newKeys"],
      ["an item missing", owner, { ...good, items: items.slice(1) }, 400, "INVALID", "items"],
      [
        "an unknown item",
        owner,
        { ...good, items: [...items, encryptItem(newKey, vaultId, randomUUID(), "x", "y")] },
        400,
        "INVALID",
        "items",
      ],
      ["an item twice", owner, { ...good, items: [...items, items[0]] }, 400, "INVALID", "items"],
      [
        "a wrap signed by someone else",
        owner,
        {
          ...good,
          newKeys: good.newKeys.map((k, i) =>
            i === 2 ? { ...k, wrapSignature: b64(signWrap(unb64(k.encryptedVaultKey), member.keys.edPrivate)) } : k,
          ),
        },
        400,
        "INVALID",
        "wrapSignature",
      ],
      [
        "a wrap of the wrong size",
        owner,
        {
          ...good,
          newKeys: good.newKeys.map((k, i) =>
            i === 1 ? { ...k, encryptedVaultKey: b64(wrongSize), wrapSignature: b64(signWrap(wrongSize, owner.keys.edPrivate)) } : k,
          ),
        },
        400,
        "INVALID",
        "encryptedVaultKey",
      ],
      [
        "invalid base64 in an item",
        owner,
        { ...good, items: items.map((it: any, i: number) => (i === 1 ? { ...it, encryptedData: "%%%" } : it)) },
        400,
        "INVALID",
        "encryptedData",
      ],
      [
        "an oversized item",
        owner,
        { ...good, items: items.map((it: any, i: number) => (i === 0 ? { ...it, encryptedData: b64(Buffer.alloc(256 * 1024 + 1)) } : it)) },
        400,
        "INVALID",
        "encryptedData",
      ],
      ["a stale keyVersion", owner, { ...good, keyVersion: 7 }, 409, "CONFLICT", "keyVersion"],
      ["a plain member", member, rekeyBody(newKey, member, [owner, admin, member], items), 403, "FORBIDDEN"],
      ["no body", owner, {}, 400, "INVALID", "newKeys"],
    ];
    for (const [why, as, body, status, code, field] of attempts) {
      const res = await api.post(`/vaults/${vaultId}/rekey`, { token: as.token, body });
      expect({ why, status: res.status, code: res.body?.error?.code, field: res.body?.error?.field }).toEqual({ why, status, code, field });
      expect(await state(vaultId)).toEqual(before);
    }
    expect((await api.post(`/vaults/${randomUUID()}/rekey`, { token: owner.token, body: good })).status).toBe(404);

    // The same rekey, put right, goes through; the stated keyVersion is the current one.
    const ok = await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: { ...good, keyVersion: 1 } });
    expect(ok.status).toBe(204);
    // Replaying it is refused: the key version moved on.
    expect((await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: { ...good, keyVersion: 1 } })).status).toBe(409);
  });

  test("a vault with no items rekeys with an empty item list", async () => {
    const { vaultId } = await sharedVault(api, owner, [[member, "member"]]);
    const newKey = newVaultKey();
    const res = await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner, member], []) });
    expect(res.status).toBe(204);
    const v = (await api.get(`/vaults/${vaultId}`, { token: member.token })).body;
    expect(unwrapShared(unb64(v.encryptedVaultKey), member.keys.rsaPrivate)).toEqual(newKey);
  });

  test("a personal vault rekeys with an AES-KW wrap", async () => {
    const key = newVaultKey();
    const wrapped = wrapPersonal(key, owner.keys.stretchedKey);
    const created = await api.post("/vaults", {
      token: owner.token,
      body: { name: "p", type: "personal", encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, owner.keys.edPrivate)) },
    });
    const vaultId = created.body.vaultId;
    const newKey = newVaultKey();
    const rsaWrap = wrapShared(newKey, owner.bundle.publicKey);
    const refused = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: {
        newKeys: [{ userId: owner.userId, encryptedVaultKey: b64(rsaWrap), wrapSignature: b64(signWrap(rsaWrap, owner.keys.edPrivate)) }],
        items: [],
      },
    });
    expect([refused.status, refused.body.error.field]).toEqual([400, "encryptedVaultKey"]);
    const kw = wrapPersonal(newKey, owner.keys.stretchedKey);
    const ok = await api.post(`/vaults/${vaultId}/rekey`, {
      token: owner.token,
      body: {
        newKeys: [{ userId: owner.userId, encryptedVaultKey: b64(kw), wrapSignature: b64(signWrap(kw, owner.keys.edPrivate)) }],
        items: [],
      },
    });
    expect(ok.status).toBe(204);
  });
});

describe("the rekey's streamed body", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ REKEY_BODY_LIMIT: String(1024 * 1024) });
    api = new Api(server.url);
    owner = (await newOrg(api)).owner;
  });
  afterAll(() => server.stop());

  const post = (
    vaultId: string,
    body: string | ReadableStream,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any }> =>
    fetch(`${server.url}/vaults/${vaultId}/rekey`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json", ...headers },
      body,
      duplex: "half",
    } as RequestInit).then(async (r) => ({ status: r.status, body: await r.json() }));

  test("over REKEY_BODY_LIMIT is 413, whether the size is announced or the body is chunked", async () => {
    const { vaultId } = await sharedVault(api, owner);
    const big = JSON.stringify({ newKeys: [], items: [], pad: "x".repeat(1024 * 1024 + 10) });
    expect(await post(vaultId, big)).toEqual({
      status: 413,
      body: { error: { code: "PAYLOAD_TOO_LARGE", message: "Request body too large" } },
    });
    // No Content-Length: the action stops reading at the limit (strings of item size, so that no other bound comes first).
    const chunked = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode(i === 0 ? '{"pad":[' : `"${"y".repeat(64 * 1024 - 3)}",`));
        c.close();
      },
    });
    expect(await post(vaultId, chunked)).toEqual({
      status: 413,
      body: { error: { code: "PAYLOAD_TOO_LARGE", message: "Request body too large" } },
    });
    // The vault is untouched and the server still serves.
    expect((await api.get(`/vaults/${vaultId}`, { token: owner.token })).body.keyVersion).toBe(1);
  });

  test("in the contract's order: bad JSON 400, then a malformed path id 404, then fields 400", async () => {
    const { vaultId } = await sharedVault(api, owner);
    expect((await post("not-a-uuid", "{bad")).body.error.code).toBe("INVALID");
    expect((await post("not-a-uuid", "{}")).status).toBe(404);
    const missing = await post(vaultId, "{}");
    expect([missing.status, missing.body.error.code, missing.body.error.field]).toEqual([400, "INVALID", "newKeys"]);
    const notJson = await post(vaultId, JSON.stringify(rekeyBody(newVaultKey(), owner, [owner], [])), { "content-type": "text/plain" });
    expect([notJson.status, notJson.body.error.code]).toEqual([400, "INVALID"]);
    const array = await post(vaultId, "[]");
    expect([array.status, array.body.error.code]).toEqual([400, "INVALID"]);
  });
});
