/**
 * The split deployment for real: every service its own OS process, two gateways, over the
 * machine's NATS, on PostgreSQL and Redis. Requests alternate between the two gateways.
 */
import { TestPasskeyAuthenticator } from "../helpers/passkey-authenticator";
import { randomUUID, sign } from "node:crypto";
import { keyFingerprint } from "../../protocol/crypto/keys";
import { orgLinkSigningBytes } from "../../protocol/formats/org-log";
import { ROUTES } from "../../lib/http/routes";
import {
  Api,
  invite,
  registerUser,
  rekeyBody,
  shareBody,
  sharedVault,
  sharedVaultBody,
  uniqueEmail,
  type TestUser,
} from "../helpers/client";
import { decryptItem, encryptItem, newUserKeys, newVaultKey, registrationBundle } from "../helpers/crypto";
import { killAllClusters, startCluster, type Cluster } from "../helpers/cluster";
import { Chain, fingerprintOf, linkHashOf, wrapHash } from "../helpers/roster";
import { itemLinkHashOf, signItemLinkAs } from "../helpers/item-log";
import { itemDigestOf, itemSetDigestOf } from "../../lib/domain/items/log";
import { auditCheckpointVerifies } from "../../protocol/formats/audit";
import { openSend, VaultClient } from "../../sdk";
import { TEST_KDF } from "../helpers/sdk";
import { inviteStatementOf, kdfStatementOf, keyStatementOf } from "../helpers/statements";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { SoftKey } from "../helpers/webauthn";

jest.setTimeout(180_000);

let cluster: Cluster;
let gw: [Api, Api];
let owner: TestUser;

beforeAll(async () => {
  cluster = await startCluster();
  gw = [new Api(cluster.urls[0]!), new Api(cluster.urls[1]!)];
  owner = await registerUser(gw[0]);
});
afterAll(async () => {
  await cluster?.stop();
  killAllClusters();
});

/**
 * One step of a long test: a failure names the step and carries the cluster's last output (the
 * 10,000-item rekey below once failed with a bare EPIPE; see there why).
 */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    throw new Error(
      `${name}: ${(err as Error).message}${cause ? ` (${String(cause)})` : ""}\n--- the cluster's last output:\n${cluster.output().slice(-4000)}`,
    );
  }
}

/** Runs `n` tasks at most `width` at a time. */
async function pool<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

test("every route of the interface works through both gateways", async () => {
  const seen = new Set<string>();
  // Each call names its route, and goes to the gateway after the previous one's.
  let turn = 0;
  const call = async (route: string, path: string, opts: Parameters<Api["call"]>[2] = {}) => {
    seen.add(route);
    const [method] = route.split(" ");
    return gw[turn++ % 2]!.call(method!, path, opts);
  };
  const t = { token: owner.token };

  expect((await call("GET /health", "/health")).body).toEqual({ status: "ok" });
  expect((await call("GET /openapi.json", "/openapi.json")).body.openapi).toBe("3.1.0");
  expect((await call("GET /auth/registration", "/auth/registration")).body).toEqual({ mode: "invite", firstAccount: false });
  const inv = (await call("POST /invites", "/invites", { ...t, body: { email: uniqueEmail("admin"), role: "admin" } })).body;
  expect((await call("GET /invites", `/invites?orgId=${owner.orgId}`, t)).body.map((i: any) => i.id)).toContain(inv.inviteId);
  const email = (await call("GET /invites", `/invites?orgId=${owner.orgId}`, t)).body.find((i: any) => i.id === inv.inviteId).email;
  expect((await call("POST /invites/redeem", "/invites/redeem", { body: { token: inv.token } })).body).toMatchObject({
    orgId: owner.orgId,
    role: "admin",
  });
  expect((await call("GET /auth/prelogin", `/auth/prelogin?email=${encodeURIComponent(email)}`)).status).toBe(200);
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const reg = await call("POST /auth/register", "/auth/register", { body: { email, ...bundle, inviteToken: inv.token } });
  expect(reg.status).toBe(201);
  const login = await call("POST /auth/login", "/auth/login", { body: { email, authHash: bundle.authHash } });
  expect(login.status).toBe(200);
  const admin: TestUser = { ...reg.body, email, keys, bundle, token: login.body.accessToken, refreshToken: login.body.refreshToken };
  const refreshed = await call("POST /auth/refresh", "/auth/refresh", { body: { refreshToken: admin.refreshToken } });
  expect(refreshed.status).toBe(200);
  expect(
    (await call("POST /auth/logout", "/auth/logout", { token: admin.token, body: { refreshToken: refreshed.body.refreshToken } })).status,
  ).toBe(204);
  // Logout ended the session: its access token with it, through either gateway. A new login goes on.
  for (const api of gw) expect((await api.get("/users/me", { token: admin.token })).status).toBe(401);
  admin.token = (await gw[1].post("/auth/login", { body: { email, authHash: bundle.authHash } })).body.accessToken;

  // An account made without statements signs them later (what the SDK does at its first login).
  expect(
    (
      await call("POST /users/me/statements", "/users/me/statements", {
        token: admin.token,
        body: { keyStatement: keyStatementOf(admin), kdfStatement: kdfStatementOf(admin) },
      })
    ).status,
  ).toBe(204);
  expect((await gw[0].get(`/users/${admin.userId}/keys`, t)).body.keyStatement).toEqual(keyStatementOf(admin));
  const signedInvite = (await gw[1].post("/invites", { ...t, body: { email: uniqueEmail("signed"), role: "member" } })).body;
  const orgName = (await gw[0].get(`/orgs/${owner.orgId}`, t)).body.name;
  const inviteStatement = inviteStatementOf(owner, {
    inviteId: signedInvite.inviteId,
    orgId: owner.orgId,
    orgName,
    email: (await gw[0].get(`/invites?orgId=${owner.orgId}`, t)).body.find((i: any) => i.id === signedInvite.inviteId).email,
    role: "member",
    expiresAt: signedInvite.expiresAt,
    inviterId: owner.userId,
  });
  expect(
    (
      await call("POST /invites/:inviteId/statement", `/invites/${signedInvite.inviteId}/statement`, {
        ...t,
        body: { statement: inviteStatement },
      })
    ).status,
  ).toBe(204);
  expect((await gw[0].post("/invites/redeem", { body: { token: signedInvite.token } })).body.inviteStatement).toEqual(inviteStatement);

  expect((await call("GET /users/me", "/users/me", t)).body.userId).toBe(owner.userId);
  expect((await call("GET /users/:userId/keys", `/users/${admin.userId}/keys`, t)).body.publicKey).toBe(bundle.publicKey);
  expect((await call("GET /orgs/:orgId", `/orgs/${owner.orgId}`, t)).status).toBe(200);
  expect((await call("GET /orgs/:orgId/members", `/orgs/${owner.orgId}/members`, t)).status).toBe(200);
  // The organization's signed log: the owner adopts it with the members as they are now, through one gateway, read through the other.
  const current = (await gw[0].get(`/orgs/${owner.orgId}/members`, t)).body.members.filter((m: { removedAt?: string }) => !m.removedAt);
  const orgMembers = await Promise.all(
    current.map(
      async (m: { userId: string; email: string; role: "owner" | "admin" | "member"; publicKey: string; signingPublicKey: string }) => ({
        userId: m.userId,
        email: m.email,
        role: m.role,
        key: await keyFingerprint(m),
      }),
    ),
  );
  const orgAdopt = {
    orgId: owner.orgId,
    seq: 0,
    prev: "0".repeat(64),
    actorId: owner.userId,
    at: new Date().toISOString(),
    op: "adopt" as const,
    members: orgMembers,
  };
  const orgAdoptLink = {
    ...orgAdopt,
    sig: Buffer.from(sign(null, Buffer.from(orgLinkSigningBytes(orgAdopt)), owner.keys.edPrivate)).toString("base64"),
  };
  expect((await call("POST /orgs/:orgId/log", `/orgs/${owner.orgId}/log`, { ...t, body: { link: orgAdoptLink } })).status).toBe(201);
  expect((await call("GET /orgs/:orgId/log", `/orgs/${owner.orgId}/log`, t)).body.links).toEqual([orgAdoptLink]);

  const vaultKey = newVaultKey();
  const created = await call("POST /vaults", "/vaults", { ...t, body: sharedVaultBody(vaultKey, owner) });
  expect(created.status).toBe(201);
  const v = `/vaults/${created.body.vaultId}`;
  expect((await call("GET /vaults", "/vaults", t)).body.vaults.map((x: any) => x.vaultId)).toContain(created.body.vaultId);
  expect((await call("GET /vaults/:vaultId", v, t)).body.keyVersion).toBe(1);
  expect((await call("PATCH /vaults/:vaultId", v, { ...t, body: { name: "Renamed" } })).status).toBe(200);
  expect(
    (await call("POST /vaults/:vaultId/members", `${v}/members`, { ...t, body: shareBody(vaultKey, owner, admin, "member") })).status,
  ).toBe(204);
  expect((await call("GET /vaults/:vaultId/members", `${v}/members`, t)).body.members).toHaveLength(2);
  expect(
    (await call("PATCH /vaults/:vaultId/members/:userId", `${v}/members/${admin.userId}`, { ...t, body: { role: "admin" } })).status,
  ).toBe(200);

  const itemId = randomUUID();
  expect(
    (
      await call("POST /vaults/:vaultId/items", `${v}/items`, {
        ...t,
        body: encryptItem(vaultKey, created.body.vaultId, itemId, "pw", "site"),
      })
    ).status,
  ).toBe(201);
  expect((await call("GET /vaults/:vaultId/items", `${v}/items`, t)).body.items).toHaveLength(1);
  expect(decryptItem(vaultKey, (await call("GET /vaults/:vaultId/items/:itemId", `${v}/items/${itemId}`, t)).body).data).toBe("pw");
  expect(
    (
      await call("PUT /vaults/:vaultId/items/:itemId", `${v}/items/${itemId}`, {
        ...t,
        body: encryptItem(vaultKey, created.body.vaultId, itemId, "pw2", "site"),
      })
    ).status,
  ).toBe(200);
  // History and trash: the replaced revision kept; an item deleted, restored, deleted again and purged.
  expect((await call("GET /vaults/:vaultId/history", `${v}/history?itemId=${itemId}`, t)).body.revisions).toHaveLength(1);
  const spare = randomUUID();
  await gw[0].post(`${v}/items`, { ...t, body: encryptItem(vaultKey, created.body.vaultId, spare, "x", "spare") });
  expect((await gw[1].delete(`${v}/items/${spare}`, t)).status).toBe(204);
  expect((await call("GET /vaults/:vaultId/trash", `${v}/trash`, t)).body.items.map((i: any) => i.itemId)).toEqual([spare]);
  expect((await call("POST /vaults/:vaultId/trash/:itemId/restore", `${v}/trash/${spare}/restore`, t)).body.revision).toBe(2);
  // Many items at once (the streamed bulk route), then out again for good.
  const bulk = [randomUUID(), randomUUID()];
  const imported = await call("POST /vaults/:vaultId/items/bulk", `${v}/items/bulk`, {
    ...t,
    body: { items: bulk.map((id) => encryptItem(vaultKey, created.body.vaultId, id, "b", "bulk")) },
  });
  expect([imported.status, imported.body]).toEqual([201, { created: 2 }]);
  for (const id of [spare, ...bulk]) {
    await gw[0].delete(`${v}/items/${id}`, t);
    expect((await call("DELETE /vaults/:vaultId/trash/:itemId", `${v}/trash/${id}`, t)).status).toBe(204);
  }
  expect((await call("POST /vaults/:vaultId/exports", `${v}/exports`, { ...t, body: { format: "json" } })).status).toBe(204);
  expect((await call("DELETE /vaults/:vaultId/members/:userId", `${v}/members/${admin.userId}`, t)).body.rekeyRequired).toBe(true);
  const newKey = newVaultKey();
  const items = [encryptItem(newKey, created.body.vaultId, itemId, "pw2", "site")];
  expect((await call("POST /vaults/:vaultId/rekey", `${v}/rekey`, { ...t, body: rekeyBody(newKey, owner, [owner], items) })).status).toBe(
    204,
  );
  expect(decryptItem(newKey, (await gw[0].get(`${v}/items/${itemId}`, t)).body).data).toBe("pw2");
  // The signed roster: the owner, now its only member, adopts one for the vault (a rekey with an
  // adopt link) and reads it back.
  const adoptKey = newVaultKey();
  const adoptRekey = rekeyBody(adoptKey, owner, [owner], [encryptItem(adoptKey, created.body.vaultId, itemId, "pw2", "site")]);
  const adopt = new Chain(created.body.vaultId).next(owner, {
    op: "adopt",
    keyVersion: 3,
    vaultType: "shared",
    name: "Renamed",
    members: [{ userId: owner.userId, role: "owner", key: fingerprintOf(owner.bundle) }],
    wraps: [{ userId: owner.userId, sha256: wrapHash(adoptRekey.newKeys[0]!.encryptedVaultKey) }],
  });
  expect((await call("POST /vaults/:vaultId/rekey", `${v}/rekey`, { ...t, body: { ...adoptRekey, rosterLink: adopt } })).status).toBe(204);
  expect((await call("GET /vaults/:vaultId/roster", `${v}/roster`, t)).body.links).toEqual([adopt]);
  // The signed item log: started with a checkpoint of the one item, then the item's deletion as its next link.
  const item = (await gw[0].get(`${v}/items/${itemId}`, t)).body;
  const at = new Date().toISOString();
  const common = { vaultId: created.body.vaultId, actorId: owner.userId, at, keyVersion: 3, rosterSeq: 0, rosterHead: linkHashOf(adopt) };
  const checkpoint = signItemLinkAs(owner, {
    ...common,
    seq: 0,
    prev: "0".repeat(64),
    op: "checkpoint",
    count: 1,
    setDigest: itemSetDigestOf([[itemId, { revision: item.revision, sha256: itemDigestOf(item) }]]),
  });
  expect((await call("POST /vaults/:vaultId/item-log", `${v}/item-log`, { ...t, body: { itemLink: checkpoint } })).status).toBe(204);
  expect((await call("GET /vaults/:vaultId/item-log", `${v}/item-log`, t)).body).toEqual({ links: [checkpoint], baseSeq: 0, next: null });
  const deletion = signItemLinkAs(owner, {
    ...common,
    seq: 1,
    prev: itemLinkHashOf(checkpoint),
    op: "delete",
    itemId,
    revision: item.revision,
    prevSha256: itemDigestOf(item),
  });
  expect((await call("DELETE /vaults/:vaultId/items/:itemId", `${v}/items/${itemId}`, { ...t, body: { itemLink: deletion } })).status).toBe(
    204,
  );
  expect((await call("DELETE /vaults/:vaultId", v, t)).status).toBe(204);

  const revocable = await invite(gw[1], owner);
  expect((await call("DELETE /invites/:inviteId", `/invites/${revocable.inviteId}`, t)).status).toBe(204);
  // The revoked invite is refused at once through either gateway (the cached lookup was dropped).
  for (const api of gw) {
    const res = await api.post("/invites/redeem", { body: { token: revocable.token } });
    expect([res.status, res.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
  }
  const audit = await call("GET /audit", `/audit?orgId=${owner.orgId}&limit=500`, t);
  expect(audit.status).toBe(200);
  expect(audit.body.events.every((r: any) => r.orgId === owner.orgId)).toBe(true);
  expect((await call("GET /audit/verify", `/audit/verify?orgId=${owner.orgId}`, t)).body).toMatchObject({ ok: true });
  // The audit checkpoint, signed by the key GET /audit/key gives, the same through either gateway (one key for every node).
  const { publicKey } = (await call("GET /audit/key", "/audit/key")).body;
  const cp = (await call("GET /audit/checkpoint", `/audit/checkpoint?orgId=${owner.orgId}`, t)).body;
  expect(await auditCheckpointVerifies(cp, publicKey)).toBe(true);
  expect((await gw[0].get("/audit/key")).body.publicKey).toBe((await gw[1].get("/audit/key")).body.publicKey);
  // Sessions: a second login of the owner's, listed through either gateway, ended, then the rest.
  const second = (await gw[1].post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash, deviceName: "phone" } }))
    .body;
  const third = (await gw[0].post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } })).body;
  const listed = (await call("GET /users/me/sessions", "/users/me/sessions", t)).body.sessions;
  expect(listed.map((s: any) => s.sessionId)).toEqual(expect.arrayContaining([second.sessionId, third.sessionId]));
  expect((await call("DELETE /users/me/sessions/:sessionId", `/users/me/sessions/${second.sessionId}`, t)).status).toBe(204);
  expect((await call("DELETE /users/me/sessions", "/users/me/sessions", t)).body.ended).toBeGreaterThanOrEqual(1);
  // A password change through the SDK (it builds the re-wraps), through the other gateway.
  const sdkUser = new VaultClient({
    baseUrl: cluster.urls[1]!,
    fetch: (input, init) => {
      const url = String(input);
      if (url.endsWith("/users/me/password")) seen.add("POST /users/me/password");
      if (url.endsWith("/users/me/keys")) seen.add("POST /users/me/keys");
      if (url.endsWith("/key-log")) seen.add("GET /users/:userId/key-log");
      return fetch(input, init);
    },
  });
  const sdkInvite = await invite(gw[0], owner);
  await sdkUser.register({ email: sdkInvite.email, password: "correct horse battery staple", invite: sdkInvite.token, kdf: TEST_KDF });
  await sdkUser.vaults.create("Mine", "personal");
  expect(await sdkUser.changePassword("correct horse battery staple", "purple monkey dishwasher 77", { kdf: TEST_KDF })).toMatchObject({
    accountVersion: 2,
    vaults: 1,
  });
  // A key rotation through the SDK (it reads its key log, signs the step and wraps the vault's key to the new keys).
  expect(await sdkUser.keys.rotate({ rsaBits: 2048 })).toMatchObject({ keyVersion: 2, accountVersion: 3, vaults: 1 });
  // The SDK's user leaves the organization, through the other gateway.
  expect(
    (await call("DELETE /orgs/:orgId/members/:userId", `/orgs/${owner.orgId}/members/${sdkUser.account.userId}`, t)).body,
  ).toMatchObject({
    userId: sdkUser.account.userId,
    vaults: [{ needs: "none" }],
  });

  // Second factors, policies and account recovery: the owner's policies by hand, the rest
  // through the SDK, its clients spread over both gateways, each call recorded by its route.
  const routeOf = (method: string, path: string) =>
    ROUTES.find((r) => r.method === method && new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, "[^/]+")}$`).test(path));
  const recorded: typeof fetch = (input, init) => {
    const route = routeOf(init?.method ?? "GET", new URL(String(input)).pathname.replace(/^\/api\/v1/, ""));
    if (route) seen.add(`${route.method} ${route.path}`);
    return fetch(input, init);
  };
  const sdkOn = (i: number) => new VaultClient({ baseUrl: cluster.urls[i % 2]!, fetch: recorded });
  const policies = { requireSecondFactor: false, recoveryMinThreshold: 2, client: { minPasswordScore: 2 } };
  expect((await call("PUT /orgs/:orgId/policies", `/orgs/${owner.orgId}/policies`, { ...t, body: policies })).body).toMatchObject(policies);
  expect((await call("GET /orgs/:orgId/policies", `/orgs/${owner.orgId}/policies`, t)).body.clientOnly).toContain(
    "client.minPasswordScore",
  );
  const member = async (i: number, role: "admin" | "member") => {
    const c = sdkOn(i);
    const inv = await invite(gw[i % 2]!, owner, role);
    await c.register({ email: inv.email, password: "correct horse battery staple", invite: inv.token, kdf: TEST_KDF, rsaBits: 2048 });
    return c;
  };
  const [t1, t2, user] = [await member(0, "admin"), await member(1, "admin"), await member(0, "member")];
  const setup = await user.factors.setupTotp();
  await user.factors.confirmTotp(
    setup.setupToken,
    referenceTotp(fromBase32(setup.secret), Date.now()),
    "Phone",
    "correct horse battery staple",
  );
  const key = new SoftKey();
  const enrolled = await user.factors.enrolWebauthn(
    "Key",
    async (options) => key.register(options as { challenge: string }),
    "correct horse battery staple",
  );
  expect((await user.factors.list()).factors).toHaveLength(2);
  const codes = await user.factors.newRecoveryCodes("correct horse battery staple");
  await user.factors.remove(enrolled.factor.factorId, "correct horse battery staple");
  // A device remembered at the second step, listed and forgotten.
  const tokens = new Map<string, string>();
  const remembering = new VaultClient({
    baseUrl: cluster.urls[1]!,
    fetch: recorded,
    deviceTokens: { get: async (id) => tokens.get(id), set: async (id, v) => void tokens.set(id, v), entries: async () => [...tokens] },
    secondFactor: async () => ({ recoveryCode: codes[0]!, rememberDevice: true }),
  });
  await remembering.login(user.account.email, "correct horse battery staple");
  const [remembered] = await remembering.sessions.rememberedDevices();
  await remembering.sessions.forgetDevice(remembered!.deviceId);
  expect(await remembering.sessions.rememberedDevices()).toEqual([]);
  // A passkey that signs in and unlocks: registered through one gateway, used through the other, removed.
  const authenticator = new TestPasskeyAuthenticator();
  const passkey = await t1.accountPasskeys.add({ name: "Laptop", password: "correct horse battery staple", authenticator });
  expect(passkey.unlock).toBe(true);
  expect((await sdkOn(1).loginWithPasskey(authenticator)).unlocked).toBe(true);
  expect((await t1.accountPasskeys.list()).passkeys.map((p) => p.lastUsedAt !== undefined)).toEqual([true]);
  await t1.accountPasskeys.remove(passkey.credentialId);
  // A file on an item: an upload broken off through one gateway and resumed through the other (its
  // chunks streamed to the attachments node), read back through the other, taken off, deleted.
  const files = (await t1.vaults.create("Files", "personal")).vaultId;
  const fileItemId = (await t1.items.add(files, { name: "Contract", fields: {} })).itemId;
  const fileBytes = new Uint8Array(Buffer.alloc(2 * 1024 * 1024 + 99, 7));
  let begun: Parameters<VaultClient["attachments"]["resume"]>[0] | undefined;
  const breaking = { size: fileBytes.length, read: async () => Promise.reject(new Error("the disk went away")) };
  await expect(t1.attachments.upload(files, fileItemId, "contract.pdf", breaking, { onBegun: (b) => (begun = b) })).rejects.toThrow(
    "the disk went away",
  );
  const t1There = sdkOn(1);
  await t1There.login(t1.account.email, "correct horse battery staple");
  const attached = await t1There.attachments.resume(begun!, fileBytes);
  expect(Buffer.from((await t1.attachments.download(files, attached.attachments![0]!))!).equals(Buffer.from(fileBytes))).toBe(true);
  await t1.attachments.remove(files, fileItemId, attached.attachments![0]!.id);
  expect(
    (
      await call("DELETE /vaults/:vaultId/attachments/:attachmentId", `/vaults/${files}/attachments/${attached.attachments![0]!.id}`, {
        token: t1.http.currentTokens!.accessToken,
      })
    ).status,
  ).toBe(204);
  // A send: a file made through one gateway (its parts streamed to the sends node), opened once
  // through the other by someone with no account, then gone; listed and deleted by its sender.
  const sendBytes = new Uint8Array(Buffer.alloc(1024 * 1024 + 5, 9));
  const made = await t1.sends.create({ file: { name: "handover.bin", data: sendBytes } }, { maxViews: 1 });
  const opened = await openSend(made.link, { apiUrl: cluster.urls[1]!, fetch: recorded });
  expect(Buffer.from(opened.file!.data).equals(Buffer.from(sendBytes))).toBe(true);
  await expect(openSend(made.link, { apiUrl: cluster.urls[1]!, fetch: recorded })).rejects.toMatchObject({ status: 404 });
  expect((await t1.sends.list()).map((s) => s.sendId)).toContain(made.sendId);
  await t1.sends.remove(made.sendId);
  // Emergency access: granted through one gateway, asked for, refused and asked again through the
  // other (the recovery node's), its session refused while the wait runs, then revoked.
  await t1.keys.trust(t2.account.userId, await t2.keys.own(), t2.account.email);
  await t2.keys.trust(t1.account.userId, await t1.keys.own(), t1.account.email);
  const grant = await t1.emergency.grant(t2.account.userId, { level: "read", waitHours: 24 });
  expect((await t2.emergency.request(grant.grantId)).status).toBe("waiting");
  expect((await t1.emergency.refuse(grant.grantId)).status).toBe("idle");
  await t2.emergency.request(grant.grantId);
  await expect(t2.emergency.open(grant.grantId)).rejects.toMatchObject({ status: 409 });
  expect((await t1.emergency.list()).granted.map((g) => g.status)).toEqual(["waiting"]);
  await t1.emergency.remove(grant.grantId);
  expect((await t2.emergency.list()).received).toEqual([]);
  const step = (await gw[1].post("/auth/login", { body: { email: user.account.email, authHash: "A".repeat(43) + "=" } })).body;
  expect(step.secondFactorRequired).toBe(true);
  const secondStep = await call("POST /auth/login/second-factor", "/auth/login/second-factor", {
    body: { stepToken: step.stepToken, totpCode: "000000" },
  });
  expect(secondStep.status).toBe(401);
  for (const trustee of [t1, t2]) await user.keys.trust(trustee.account.userId, await trustee.keys.own(), trustee.account.email);
  await user.recovery.enrol([t1.account.userId, t2.account.userId], 2);
  expect((await user.recovery.status())!.threshold).toBe(2);
  const stray = await sdkOn(1).recovery.start(user.account.email);
  await user.recovery.cancel(stray.requestId);
  const pending = await sdkOn(1).recovery.start(user.account.email);
  expect((await user.recovery.requests()).requests.map((r) => r.status)).toEqual(expect.arrayContaining(["pending", "cancelled"]));
  expect(await t1.recovery.tasks()).toHaveLength(1);
  const { confirmation } = await t1.recovery.approve(pending.requestId, pending.code);
  await t2.recovery.approve(pending.requestId, pending.code);
  const device = sdkOn(1);
  expect(await device.recovery.progress(pending)).toMatchObject({ approvals: 2, threshold: 2 });
  await device.recovery.finish(pending, "a brand new horse staple battery", confirmation);
  // The recovered device enrols again (the recovery used the enrolment up), then leaves recovery.
  for (const trustee of [t1, t2]) await device.keys.trust(trustee.account.userId, await trustee.keys.own(), trustee.account.email);
  await device.recovery.enrol([t1.account.userId, t2.account.userId], 2);
  await device.recovery.unenrol();
  expect(await device.recovery.status()).toBeNull();
  expect([...seen].sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
});

test("an ended session's access tokens stop through both gateways within SESSION_CHECK_INTERVAL, its refresh token at once", async () => {
  const login = async () => (await gw[0].post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } })).body;
  for (const via of [0, 1] as const) {
    const victim = await login();
    // Both gateways have seen the session live (and remember it so).
    for (const api of gw) expect((await api.get("/users/me", { token: victim.accessToken })).status).toBe(200);
    const ended = Date.now();
    expect((await gw[via].delete(`/users/me/sessions/${victim.sessionId}`, { token: owner.token })).status).toBe(204);
    expect((await gw[via].get("/users/me", { token: victim.accessToken })).status).toBe(401);
    const refreshed = await gw[1 - via]!.post("/auth/refresh", { body: { refreshToken: victim.refreshToken } });
    expect(refreshed.status).toBe(401);
    // The other gateway: at once when the broadcast arrives; in any case within the interval (5 s).
    let other = 200;
    while (other !== 401 && Date.now() - ended < 6_000) {
      other = (await gw[1 - via]!.get("/users/me", { token: victim.accessToken })).status;
      if (other !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    expect(other).toBe(401);
    expect(Date.now() - ended).toBeLessThan(6_000);
  }
});

test("a 10,000-item rekey crosses from the gateway to the rekey node, and every item opens with the new key", async () => {
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const v = `/vaults/${vaultId}`;
  const pad = "x".repeat(2048);
  await pool(10_000, 32, async (i) => {
    const res = await gw[i % 2]!.post(`${v}/items`, {
      token: owner.token,
      body: encryptItem(vaultKey, vaultId, randomUUID(), `${pad}${i}`, `item ${i}`),
    });
    if (res.status !== 201) throw new Error(`item ${i}: ${res.status} ${JSON.stringify(res.body)}`);
  });
  // About 30 MB of items: the list comes back from the items node as a stream.
  const listed = await step("the list before the rekey", () => gw[1].get(`${v}/items`, { token: owner.token }));
  expect(listed.status).toBe(200);
  expect(listed.body.items).toHaveLength(10_000);

  const newKey = newVaultKey();
  // Re-encrypted a batch at a time, yielding between batches, as the SDK's asynchronous crypto
  // does. Done in one synchronous stretch, it held this process's event loop past the gateways'
  // 5 s keep-alive on a slow machine: the gateway closed the idle connections, the client had no
  // turn to notice, and the next request went out on a closed socket (a bare EPIPE).
  const items: Array<ReturnType<typeof encryptItem>> = [];
  for (const it of listed.body.items) {
    if (items.length % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
    const plain = decryptItem(vaultKey, it);
    items.push(encryptItem(newKey, vaultId, it.itemId, plain.data, plain.name));
  }
  const body = rekeyBody(newKey, owner, [owner], items);
  expect(JSON.stringify(body).length).toBeGreaterThan(20 * 1024 * 1024);
  const res = await step("the rekey", () => gw[0].post(`${v}/rekey`, { token: owner.token, body }));
  expect(res.status).toBe(204);

  const after = (await step("the list after the rekey", () => gw[1].get(`${v}/items`, { token: owner.token }))).body.items;
  expect(after).toHaveLength(10_000);
  // Read before the 10,000 decryptions below hold the event loop (see above).
  expect((await step("the vault after the rekey", () => gw[0].get(v, { token: owner.token }))).body.keyVersion).toBe(2);
  const texts = new Set(after.map((it: any) => decryptItem(newKey, it).data));
  expect(texts.size).toBe(10_000);
});

test("one invite token, twenty registrations spread over both gateways: exactly one account is created", async () => {
  const inv = await invite(gw[0], owner);
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      gw[i % 2]!.post("/auth/register", { body: { email: inv.email, ...bundle, inviteToken: inv.token } }),
    ),
  );
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.every((s) => s === 201 || s === 400 || s === 409)).toBe(true);
  const members = (await gw[1].get(`/orgs/${owner.orgId}/members`, { token: owner.token })).body.members;
  expect(members.filter((m: any) => m.email === inv.email)).toHaveLength(1);
  const again = await gw[1].post("/invites/redeem", { body: { token: inv.token } });
  expect([again.status, again.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
});

test("two owners leaving at once through different gateways: one owner always stays", async () => {
  const inv = await invite(gw[0], owner, "admin");
  const second = await registerUser(gw[1], { inviteToken: inv.token, email: inv.email });
  for (let round = 0; round < 10; round++) {
    const { vaultId, vaultKey } = await sharedVault(gw[round % 2]!, owner);
    const share = await gw[0].post(`/vaults/${vaultId}/members`, {
      token: owner.token,
      body: shareBody(vaultKey, owner, second, "member"),
    });
    expect(share.status).toBe(204);
    expect((await gw[1].patch(`/vaults/${vaultId}/members/${second.userId}`, { token: owner.token, body: { role: "owner" } })).status).toBe(
      200,
    );
    const [a, b] = await Promise.all([
      gw[0].delete(`/vaults/${vaultId}/members/${owner.userId}`, { token: owner.token }),
      gw[1].delete(`/vaults/${vaultId}/members/${second.userId}`, { token: second.token }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const stayer = a.status === 200 ? second : owner;
    const members = (await gw[round % 2]!.get(`/vaults/${vaultId}/members`, { token: stayer.token })).body.members;
    expect(members.map((m: any) => [m.userId, m.role])).toEqual([[stayer.userId, "owner"]]);
  }
});

test("the gateways answer with generic bodies and nothing else: no ~node, no alias listing", async () => {
  for (const path of ["/~node/options", "/~node/health", "/list-aliases", "/api/list-aliases"]) {
    const res = await gw[0].get(path, { token: owner.token });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("NOT_FOUND");
  }
});

test("every gateway serves the web vault under /, with its Content-Security-Policy", async () => {
  for (const url of cluster.urls) {
    const page = await fetch(new URL("/", url));
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self' 'wasm-unsafe-eval'");
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(await page.text())![1]!;
    expect((await fetch(new URL(script, url))).status).toBe(200);
  }
});

test("a burst of second-step guesses spread over both gateways: the shared limits compare at most LOGIN_MAX_FAILURES (10)", async () => {
  const inv = await invite(gw[0], owner);
  const user = await registerUser(gw[0], { inviteToken: inv.token, email: inv.email });
  const setup = (await gw[1].post("/users/me/factors/totp/setup", { token: user.token })).body;
  const code = referenceTotp(fromBase32(setup.secret), Date.now());
  expect(
    (
      await gw[0].post("/users/me/factors/totp", {
        token: user.token,
        body: { name: "App", setupToken: setup.setupToken, code, authHash: user.bundle.authHash },
      })
    ).status,
  ).toBe(201);
  const steps: string[] = [];
  for (let i = 0; i < 8; i++)
    steps.push((await gw[i % 2]!.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } })).body.stepToken);
  const wrong = code === "111111" ? "222222" : "111111";
  const burst = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      gw[i % 2]!.post("/auth/login/second-factor", { body: { stepToken: steps[i % 8], totpCode: wrong } }),
    ),
  );
  const statuses = burst.map((r) => r.status);
  // Counted in Redis, shared by both gateways: 10 compared at most (each step token also stops at its sixth try).
  expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10 + 8);
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(40 - 10 - 8);
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
});
