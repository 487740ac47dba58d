/**
 * The statements users sign, as the server takes them (protocol/formats/statements.ts; lib/domain/accounts/statements.ts):
 * at registration, as the upgrade of an account made without them, and an inviter's statement of
 * an invite. Each refusal is 400 INVALID naming the field, and stores nothing; what is stored is
 * answered back exactly. Signed here with node:crypto (the SDK signs with WebCrypto). On SQLite and
 * PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { userIdForKey } from "../../lib/domain/ids";
import { Api, invite, newOrg, registerUser, uniqueEmail, type TestUser } from "../helpers/client";
import { newUserKeys, registrationBundle } from "../helpers/crypto";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { inviteStatementOf, kdfStatementOf, keyStatementOf } from "../helpers/statements";
import { startTestServer, type TestServer } from "../helpers/server";

describe.each(SQL_ENGINES)("signed statements on %s", (_engine, openStore) => {
  let server: TestServer;
  let store: ServerStore;
  let api: Api;
  let owner: TestUser, admin: TestUser;

  beforeAll(async () => {
    store = await openStore();
    // Open registration: an outsider's organization, for the cross-organization refusals.
    server = await startTestServer({ ...store.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    const org = await newOrg(api, ["admin"]);
    owner = org.owner;
    [admin] = org.users as [TestUser];
  });
  afterAll(async () => {
    await server.stop();
    await store.drop();
  });

  /** A registration by invite with both statements, over the user id its signing key gives (ids.ts), each part replaceable. */
  async function registration(patch: (body: any, signer: any) => Record<string, unknown> = () => ({})) {
    const inv = await invite(api, owner);
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const userId = userIdForKey(bundle.signingPublicKey);
    const signer = { userId, email: inv.email, keys, bundle };
    const body: any = {
      email: inv.email,
      ...bundle,
      inviteToken: inv.token,
      keyStatement: keyStatementOf(signer),
      kdfStatement: kdfStatementOf(signer),
    };
    return { inv, signer, res: await api.post("/auth/register", { body: { ...body, ...patch(body, signer) } }) };
  }

  test("a registration's user id is derived from its signing key; its statements are kept and answered back", async () => {
    const { signer, res } = await registration();
    expect(res.body).toMatchObject({ userId: signer.userId });
    const login = await api.post("/auth/login", { body: { email: signer.email, authHash: signer.bundle.authHash } });
    expect(login.body).toMatchObject({ keyStatement: keyStatementOf(signer), kdfStatement: kdfStatementOf(signer) });
    const keys = await api.get(`/users/${signer.userId}/keys`, { token: owner.token });
    expect(keys.body.keyStatement).toEqual(keyStatementOf(signer));
    const listed = (await api.get(`/orgs/${owner.orgId}/members`, { token: owner.token })).body.members.find(
      (m: any) => m.userId === signer.userId,
    );
    expect(listed.keyStatement).toEqual(keyStatementOf(signer));
    expect((await api.get(`/auth/prelogin?email=${encodeURIComponent(signer.email)}`)).body).toEqual({
      kdf: signer.bundle.kdf,
      kdfStatement: kdfStatementOf(signer),
    });
  });

  test("statements that do not verify over the registration's own id, email, keys or KDF are refused, and nobody is registered", async () => {
    const keys = await newUserKeys();
    const stranger = { userId: randomUUID(), email: uniqueEmail(), keys, bundle: registrationBundle(keys) };
    const cases: Array<[string, (body: any, signer: any) => Record<string, unknown>]> = [
      ["keyStatement.signature", (_b, s) => ({ keyStatement: keyStatementOf({ ...s, userId: randomUUID() }) })],
      ["keyStatement.signature", (_b, s) => ({ keyStatement: keyStatementOf({ ...s, email: uniqueEmail() }) })],
      ["keyStatement.signature", () => ({ keyStatement: keyStatementOf(stranger) })],
      ["keyStatement.version", (b) => ({ keyStatement: { ...b.keyStatement, version: 2 } })],
      [
        "kdfStatement.signature",
        (_b, s) => ({ kdfStatement: kdfStatementOf({ ...s, bundle: { ...s.bundle, kdf: { ...s.bundle.kdf, iterations: 700_000 } } }) }),
      ],
      ["kdfStatement.signature", (b) => ({ kdfStatement: b.keyStatement })],
      ["inviteBinding", () => ({ inviteBinding: Buffer.alloc(16).toString("base64") })],
    ];
    for (const [field, patch] of cases) {
      const { inv, res } = await registration(patch);
      expect([field, res.status, res.body.error?.code, res.body.error?.field]).toEqual([field, 400, "INVALID", field]);
      // The invite is still pending: nothing was registered.
      expect((await api.post("/invites/redeem", { body: { token: inv.token } })).status).toBe(200);
    }
    // A binding MAC without an invite; a signing key already registered (its user id is taken).
    const alone = await api.post("/auth/register", {
      body: { email: uniqueEmail(), ...registrationBundle(await newUserKeys()), inviteBinding: Buffer.alloc(32).toString("base64") },
    });
    expect([alone.status, alone.body.error.field]).toEqual([400, "inviteBinding"]);
    const taken = await registration(() => ({
      publicKey: owner.bundle.publicKey,
      signingPublicKey: owner.bundle.signingPublicKey,
      publicKeySignature: owner.bundle.publicKeySignature,
      keyStatement: undefined,
      kdfStatement: undefined,
    }));
    expect([taken.res.status, taken.res.body.error.code, taken.res.body.error.field]).toEqual([409, "CONFLICT", "signingPublicKey"]);
  });

  test("an account made without statements signs them later, once: the same again is fine, another is a conflict", async () => {
    const plainInvite = await invite(api, owner);
    const plain = await registerUser(api, { inviteToken: plainInvite.token, email: plainInvite.email });
    const post = (body: unknown, token = plain.token) => api.post("/users/me/statements", { token, body });
    expect((await post({})).status).toBe(400);
    const wrong = await post({ keyStatement: keyStatementOf({ ...plain, email: uniqueEmail() }) });
    expect([wrong.status, wrong.body.error.field]).toEqual([400, "keyStatement.signature"]);
    // Another user's statement, sent with this user's token, does not verify over this account.
    expect((await post({ kdfStatement: kdfStatementOf(admin) })).body.error.field).toBe("kdfStatement.signature");
    expect((await api.get(`/users/${plain.userId}/keys`, { token: owner.token })).body.keyStatement).toBeUndefined();

    expect((await post({ keyStatement: keyStatementOf(plain) })).status).toBe(204);
    expect((await post({ kdfStatement: kdfStatementOf(plain), keyStatement: keyStatementOf(plain) })).status).toBe(204);
    expect((await api.get(`/users/${plain.userId}/keys`, { token: owner.token })).body.keyStatement).toEqual(keyStatementOf(plain));
    const login = await api.post("/auth/login", { body: { email: plain.email, authHash: plain.bundle.authHash } });
    expect(login.body).toMatchObject({ keyStatement: keyStatementOf(plain), kdfStatement: kdfStatementOf(plain) });
    expect((await post({ keyStatement: { version: 1, signature: Buffer.alloc(64, 1).toString("base64") } })).status).toBe(400);
  });

  test("an invite's statement: by its inviter only, over the invite as it is, once", async () => {
    const inv = await invite(api, admin, "member");
    const orgName = (await api.get(`/orgs/${owner.orgId}`, { token: owner.token })).body.name;
    const expiresAt = (await api.get(`/invites?orgId=${owner.orgId}`, { token: owner.token })).body.find(
      (i: any) => i.id === inv.inviteId,
    ).expiresAt;
    const facts = {
      inviteId: inv.inviteId,
      orgId: owner.orgId,
      orgName,
      email: inv.email,
      role: "member" as const,
      expiresAt,
      inviterId: admin.userId,
    };
    const attach = (statement: unknown, by: TestUser = admin, inviteId = inv.inviteId) =>
      api.post(`/invites/${inviteId}/statement`, { token: by.token, body: { statement } });

    expect((await attach(inviteStatementOf(owner, { ...facts, inviterId: owner.userId }), owner)).status).toBe(403);
    expect((await attach(inviteStatementOf(admin, facts), admin, randomUUID())).status).toBe(404);
    const outsider = (await newOrg(api)).owner;
    expect((await attach(inviteStatementOf(admin, facts), outsider)).status).toBe(404);
    for (const lie of [
      { role: "admin" as const },
      { orgName: "Another" },
      { email: uniqueEmail() },
      { expiresAt: new Date().toISOString() },
    ]) {
      const res = await attach(inviteStatementOf(admin, { ...facts, ...lie }));
      expect([JSON.stringify(lie), res.status, res.body.error.field]).toEqual([JSON.stringify(lie), 400, "statement.signature"]);
    }
    expect((await api.post("/invites/redeem", { body: { token: inv.token } })).body.inviteStatement).toBeUndefined();
    const statement = inviteStatementOf(admin, facts);
    expect((await attach(statement)).status).toBe(204);
    expect((await attach(statement)).status).toBe(204);
    expect((await api.post("/invites/redeem", { body: { token: inv.token } })).body.inviteStatement).toEqual(statement);
    // A used invite takes none.
    await registerUser(api, { inviteToken: inv.token, email: inv.email });
    const later = await invite(api, admin, "member");
    const laterExpiry = (await api.get(`/invites?orgId=${owner.orgId}`, { token: owner.token })).body.find(
      (i: any) => i.id === later.inviteId,
    ).expiresAt;
    await registerUser(api, { inviteToken: later.token, email: later.email });
    const laterFacts = { ...facts, inviteId: later.inviteId, email: later.email, expiresAt: laterExpiry };
    const used = await attach(inviteStatementOf(admin, laterFacts), admin, later.inviteId);
    expect([used.status, used.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
  });

  test("KDF parameters beyond the caps every client derives within are refused at registration", async () => {
    for (const [kdf, field] of [
      [{ algorithm: "argon2id", iterations: 3, memoryKiB: 2 * 1048576, parallelism: 4 }, "memoryKiB"],
      [{ algorithm: "argon2id", iterations: 11, memoryKiB: 65536, parallelism: 4 }, "iterations"],
      [{ algorithm: "pbkdf2-sha256", iterations: 2_000_001 }, "iterations"],
    ] as const) {
      const inv = await invite(api, owner);
      const bundle = registrationBundle(await newUserKeys());
      const res = await api.post("/auth/register", {
        body: { email: inv.email, ...bundle, kdf: { ...kdf, salt: bundle.kdf.salt }, inviteToken: inv.token },
      });
      expect([res.status, res.body.error.field]).toEqual([400, field]);
    }
    const inv = await invite(api, owner);
    const bundle = registrationBundle(await newUserKeys());
    const longSalt = await api.post("/auth/register", {
      body: { email: inv.email, ...bundle, kdf: { ...bundle.kdf, salt: Buffer.alloc(65).toString("base64") }, inviteToken: inv.token },
    });
    expect([longSalt.status, longSalt.body.error.field]).toEqual([400, "salt"]);
  });
});
