/** Vaults and members over real HTTP, with real wraps and signatures. */
import { randomUUID } from "node:crypto";
import { Api, newOrg, registerUser, rekeyBody, shareBody, sharedVaultBody, type TestUser } from "../helpers/client";
import { b64, newVaultKey, signWrap, unb64, unwrapPersonal, unwrapShared, wrapPersonal, wrapVerifies } from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("vaults and members", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, admin: TestUser, member: TestUser, member2: TestUser, outsider: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    const org = await newOrg(api, ["admin", "member", "member"]);
    owner = org.owner;
    [admin, member, member2] = org.users as [TestUser, TestUser, TestUser];
    outsider = await registerUser(api);
  });
  afterAll(() => server.stop());

  async function createShared(by: TestUser = owner, name = "Team") {
    const vaultKey = newVaultKey();
    const res = await api.post("/vaults", { token: by.token, body: sharedVaultBody(vaultKey, by, name) });
    expect(res.status).toBe(201);
    return { vaultKey, vault: res.body };
  }

  test("a personal vault is created with an AES-256-KW wrap the owner can unwrap", async () => {
    const vaultKey = newVaultKey();
    const wrapped = wrapPersonal(vaultKey, owner.keys.stretchedKey);
    expect(wrapped).toHaveLength(40);
    const res = await api.post("/vaults", {
      token: owner.token,
      body: {
        name: "Mine",
        type: "personal",
        encryptedVaultKey: b64(wrapped),
        wrapSignature: b64(signWrap(wrapped, owner.keys.edPrivate)),
        extra: "dropped",
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/vaults/${res.body.vaultId}`);
    expect(res.body).toEqual({
      vaultId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      vaultName: "Mine",
      vaultType: "personal",
      orgId: owner.orgId,
      encryptedVaultKey: b64(wrapped),
      senderId: owner.userId,
      wrapSignature: expect.any(String),
      role: "owner",
      keyVersion: 1,
      rekeyRequired: false,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(unwrapPersonal(unb64(res.body.encryptedVaultKey), owner.keys.stretchedKey)).toEqual(vaultKey);
    expect(wrapVerifies(unb64(res.body.encryptedVaultKey), unb64(res.body.wrapSignature), owner.bundle.signingPublicKey)).toBe(true);
    // A personal vault cannot be shared.
    const share = await api.post(`/vaults/${res.body.vaultId}/members`, { token: owner.token, body: shareBody(vaultKey, owner, member) });
    expect([share.status, share.body.error.code]).toEqual([400, "INVALID"]);
  });

  test("wraps of the wrong size or with a signature that does not verify are refused", async () => {
    const vaultKey = newVaultKey();
    const good = sharedVaultBody(vaultKey, owner);
    const personalAsShared = wrapPersonal(vaultKey, owner.keys.stretchedKey);
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { encryptedVaultKey: b64(personalAsShared), wrapSignature: b64(signWrap(personalAsShared, owner.keys.edPrivate)) },
        "encryptedVaultKey",
      ],
      [{ wrapSignature: b64(signWrap(unb64(good.encryptedVaultKey), member.keys.edPrivate)) }, "wrapSignature"],
      [{ wrapSignature: b64(Buffer.alloc(64)) }, "wrapSignature"],
      [{ wrapSignature: b64(Buffer.alloc(10)) }, "wrapSignature"],
      [{ type: "personal" }, "encryptedVaultKey"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(257) }, "name"],
      [{ type: "team" }, "type"],
      [{ encryptedVaultKey: "not base64!" }, "encryptedVaultKey"],
      [{ encryptedVaultKey: good.encryptedVaultKey.slice(0, -2) + "==" + "A" }, "encryptedVaultKey"],
    ];
    for (const [patch, field] of cases) {
      const res = await api.post("/vaults", { token: owner.token, body: { ...good, ...patch } });
      expect([res.status, res.body.error?.code, res.body.error?.field]).toEqual([400, "INVALID", field]);
    }
    const before = (await api.get("/vaults", { token: owner.token })).body.vaults.length;
    expect((await api.post("/vaults", { token: owner.token, body: good })).status).toBe(201);
    expect((await api.get("/vaults", { token: owner.token })).body.vaults).toHaveLength(before + 1);
  });

  test("sharing: the recipient lists the vault, unwraps the key and verifies the sharer's signature", async () => {
    const { vaultKey, vault } = await createShared();
    const res = await api.post(`/vaults/${vault.vaultId}/members`, { token: owner.token, body: shareBody(vaultKey, owner, member) });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();

    const listed = (await api.get("/vaults", { token: member.token })).body.vaults.find((v: any) => v.vaultId === vault.vaultId);
    expect(listed).toMatchObject({ vaultName: "Team", vaultType: "shared", role: "member", senderId: owner.userId, keyVersion: 1 });
    const signer = (await api.get(`/users/${listed.senderId}/keys`, { token: member.token })).body;
    expect(wrapVerifies(unb64(listed.encryptedVaultKey), unb64(listed.wrapSignature), signer.signingPublicKey)).toBe(true);
    expect(unwrapShared(unb64(listed.encryptedVaultKey), member.keys.rsaPrivate)).toEqual(vaultKey);

    const members = await api.get(`/vaults/${vault.vaultId}/members`, { token: member.token });
    expect(members.body.members.map((m: any) => [m.userId, m.role])).toEqual([
      [owner.userId, "owner"],
      [member.userId, "member"],
    ]);
    expect(Object.keys(members.body.members[1]).sort()).toEqual([
      "encryptedVaultKey",
      "role",
      "senderId",
      "userId",
      "vaultId",
      "vaultName",
      "vaultType",
      "wrapSignature",
    ]);
  });

  test("sharing errors: 404 vault or recipient, 403 role, 400 wrap, 409 already a member", async () => {
    const { vaultKey, vault } = await createShared();
    const path = `/vaults/${vault.vaultId}/members`;
    expect((await api.post(path, { token: owner.token, body: shareBody(vaultKey, owner, member) })).status).toBe(204);

    const unknownVault = await api.post(`/vaults/${randomUUID()}/members`, { token: owner.token, body: shareBody(vaultKey, owner, admin) });
    expect([unknownVault.status, unknownVault.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const notMine = await api.post(path, { token: outsider.token, body: shareBody(vaultKey, outsider, admin) });
    expect(notMine.status).toBe(404);
    const ghost = await api.post(path, {
      token: owner.token,
      body: { ...shareBody(vaultKey, owner, admin), recipientUserId: randomUUID() },
    });
    expect([ghost.status, ghost.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const otherOrg = await api.post(path, { token: owner.token, body: shareBody(vaultKey, owner, outsider) });
    expect(otherOrg.status).toBe(404);
    const byMember = await api.post(path, { token: member.token, body: shareBody(vaultKey, member, admin) });
    expect([byMember.status, byMember.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const asOwner = await api.post(path, { token: owner.token, body: { ...shareBody(vaultKey, owner, admin), role: "owner" } });
    expect([asOwner.status, asOwner.body.error.field]).toEqual([400, "role"]);
    const forgedSig = await api.post(path, {
      token: owner.token,
      body: { ...shareBody(vaultKey, owner, admin), wrapSignature: shareBody(vaultKey, member, admin).wrapSignature },
    });
    expect([forgedSig.status, forgedSig.body.error.field]).toEqual([400, "wrapSignature"]);
    const wrappedForOther = await api.post(path, {
      token: owner.token,
      body: { ...shareBody(vaultKey, owner, admin), recipientUserId: member2.userId },
    });
    expect(wrappedForOther.status).toBe(204); // same modulus size: the server cannot tell; the recipient's client can
    const missing = await api.post(path, { token: owner.token, body: { recipientUserId: admin.userId } });
    expect([missing.status, missing.body.error.code]).toEqual([400, "INVALID"]);
    const again = await api.post(path, { token: owner.token, body: shareBody(vaultKey, owner, member) });
    expect([again.status, again.body.error.code]).toEqual([409, "CONFLICT"]);
  });

  test("who may do what, by vault role", async () => {
    const { vaultKey, vault } = await createShared();
    const v = `/vaults/${vault.vaultId}`;
    expect((await api.post(`${v}/members`, { token: owner.token, body: shareBody(vaultKey, owner, admin, "admin") })).status).toBe(204);
    expect((await api.post(`${v}/members`, { token: admin.token, body: shareBody(vaultKey, admin, member, "member") })).status).toBe(204);
    expect((await api.post(`${v}/members`, { token: admin.token, body: shareBody(vaultKey, admin, member2, "member") })).status).toBe(204);

    const renamed = await api.patch(v, { token: admin.token, body: { name: "Renamed" } });
    expect([renamed.status, renamed.body.vaultName, renamed.body.role]).toEqual([200, "Renamed", "admin"]);
    expect((await api.patch(v, { token: member.token, body: { name: "Nope" } })).status).toBe(403);
    expect((await api.get(v, { token: member.token })).body.vaultName).toBe("Renamed");

    expect((await api.patch(`${v}/members/${member.userId}`, { token: admin.token, body: { role: "admin" } })).status).toBe(403);
    expect((await api.delete(`${v}/members/${owner.userId}`, { token: admin.token })).status).toBe(403);
    expect((await api.delete(`${v}/members/${admin.userId}`, { token: member.token })).status).toBe(403);
    expect((await api.delete(v, { token: admin.token })).status).toBe(403);
    // A complete, well-formed rekey: a member is refused by the role rule, an admin's goes through.
    const everyone = [owner, admin, member, member2];
    const byMember = await api.post(`${v}/rekey`, { token: member.token, body: rekeyBody(newVaultKey(), member, everyone, []) });
    expect([byMember.status, byMember.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await api.get(v, { token: member.token })).body.keyVersion).toBe(1);
    expect((await api.post(`${v}/rekey`, { token: admin.token, body: rekeyBody(newVaultKey(), admin, everyone, []) })).status).toBe(204);
    expect((await api.get(v, { token: member.token })).body).toMatchObject({ keyVersion: 2, senderId: admin.userId });

    const removed = await api.delete(`${v}/members/${member2.userId}`, { token: admin.token });
    expect(removed.status).toBe(200);
    expect(removed.body.rekeyRequired).toBe(true);
    expect(removed.body.remainingMembers.map((m: any) => m.userId).sort()).toEqual([owner.userId, admin.userId, member.userId].sort());
    expect((await api.get(v, { token: member2.token })).status).toBe(404);
    expect((await api.get(v, { token: owner.token })).body.rekeyRequired).toBe(true);

    const left = await api.delete(`${v}/members/${member.userId}`, { token: member.token });
    expect([left.status, left.body.rekeyRequired]).toEqual([200, true]);

    const promoted = await api.patch(`${v}/members/${admin.userId}`, { token: owner.token, body: { role: "owner" } });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ userId: admin.userId, role: "owner", vaultId: vault.vaultId });
    // Now two owners: the first may leave, the second is the last and may not.
    expect((await api.delete(`${v}/members/${owner.userId}`, { token: owner.token })).status).toBe(200);
    const last = await api.delete(`${v}/members/${admin.userId}`, { token: admin.token });
    expect([last.status, last.body.error.code]).toEqual([400, "INVALID"]);
    const demote = await api.patch(`${v}/members/${admin.userId}`, { token: admin.token, body: { role: "member" } });
    expect([demote.status, demote.body.error.code]).toEqual([400, "INVALID"]);

    expect((await api.delete(v, { token: admin.token })).status).toBe(204);
    expect((await api.get(v, { token: admin.token })).status).toBe(404);
    expect((await api.get(`${v}/items`, { token: admin.token })).status).toBe(404);
  });

  test("remove-member errors: unknown vault, unknown member, last owner", async () => {
    const { vault } = await createShared();
    const v = `/vaults/${vault.vaultId}`;
    expect((await api.delete(`/vaults/${randomUUID()}/members/${owner.userId}`, { token: owner.token })).status).toBe(404);
    const notMember = await api.delete(`${v}/members/${member.userId}`, { token: owner.token });
    expect([notMember.status, notMember.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const lastOwner = await api.delete(`${v}/members/${owner.userId}`, { token: owner.token });
    expect([lastOwner.status, lastOwner.body.error.code]).toEqual([400, "INVALID"]);
    expect((await api.get(v, { token: owner.token })).body.rekeyRequired).toBe(false);
  });

  test("a vault is invisible to non-members on every route", async () => {
    const { vault } = await createShared();
    const v = `/vaults/${vault.vaultId}`;
    const item = randomUUID();
    const replies = await Promise.all([
      api.get(v, { token: outsider.token }),
      api.patch(v, { token: outsider.token, body: { name: "x" } }),
      api.delete(v, { token: outsider.token }),
      api.get(`${v}/members`, { token: outsider.token }),
      api.patch(`${v}/members/${owner.userId}`, { token: outsider.token, body: { role: "member" } }),
      api.delete(`${v}/members/${owner.userId}`, { token: outsider.token }),
      api.post(`${v}/rekey`, {
        token: outsider.token,
        body: { newKeys: [{ userId: owner.userId, encryptedVaultKey: "AAAA", wrapSignature: "AAAA" }], items: [] },
      }),
      api.get(`${v}/items`, { token: outsider.token }),
      api.post(`${v}/items`, { token: outsider.token, body: { encryptedData: "AAAA", encryptedName: "AAAA" } }),
      api.get(`${v}/items/${item}`, { token: outsider.token }),
      api.put(`${v}/items/${item}`, { token: outsider.token, body: { encryptedData: "AAAA", encryptedName: "AAAA" } }),
      api.delete(`${v}/items/${item}`, { token: outsider.token }),
    ]);
    for (const r of replies) expect([r.status, r.body.error.code]).toEqual([404, "NOT_FOUND"]);
    expect((await api.get("/vaults", { token: outsider.token })).body.vaults.some((x: any) => x.vaultId === vault.vaultId)).toBe(false);
  });

  test("the vault list is ordered by creation and carries every interface field", async () => {
    const fresh = await registerUser(api);
    const names = ["a", "b", "c"];
    for (const name of names) await createShared(fresh, name);
    const list = await api.get("/vaults", { token: fresh.token });
    expect(list.status).toBe(200);
    expect(list.body.vaults.map((v: any) => v.vaultName)).toEqual(names);
    for (const v of list.body.vaults) {
      for (const field of [
        "vaultId",
        "vaultName",
        "vaultType",
        "encryptedVaultKey",
        "senderId",
        "wrapSignature",
        "role",
        "createdAt",
        "updatedAt",
      ]) {
        expect(v).toHaveProperty(field);
      }
    }
  });
});
