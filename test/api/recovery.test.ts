/**
 * k-of-n account recovery end to end, on SQLite and PostgreSQL: real SDK clients (the
 * user, three trustees, the user's new device) against the real service, every refusal of the
 * server over HTTP, and a dishonest server (test/helpers/dishonest.ts) that substitutes a trustee's
 * key at enrolment, swaps a request's one-time key, or adds approvals of its own: each refused with
 * a named error, and neither the server nor fewer than k trustees open the recovery copy.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { combine, split } from "shamir-secret-sharing";
import { MemoryPinStore, SecurityError, VaultClient } from "../../sdk";
import { openRecoveryCopy, sealRecoveryCopy } from "../../protocol/formats/recovery";
import { fromBase64, toBase64 } from "../../protocol/encoding";
import { rsaOaepUnwrap, rsaOaepWrap, generateRsaKeyPair } from "../../protocol/crypto/primitives";
import { openAccountKeys } from "../../protocol/crypto/keys";
import { Api, registerUser } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { dishonest, type Edit, type Sent } from "../helpers/dishonest";

jest.setTimeout(240_000);

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
const NEW_PASSWORD = "a brand new horse staple battery";

describe.each(SQL_ENGINES)("account recovery on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let dropDatabase: () => Promise<void>;
  let alice: VaultClient, carol: VaultClient, dave: VaultClient;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    alice = new VaultClient({ baseUrl: server.url });
    await alice.register({ email: email("alice"), password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    [carol, dave] = [await invited("admin"), await invited("admin")];
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  async function invited(role: "admin" | "member", pins = new MemoryPinStore(), fetchFn?: typeof fetch): Promise<VaultClient> {
    const address = email(role);
    const { code } = await alice.invites.create(address, role);
    const c = new VaultClient({ baseUrl: server.url, pins, ...(fetchFn && { fetch: fetchFn }) });
    await c.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
    return c;
  }

  /** Bob, a member, with carol and dave compared out of band (alice is vouched for by his invite). */
  async function bobWithTrustees(pins = new MemoryPinStore(), fetchFn?: typeof fetch) {
    const bob = await invited("member", pins, fetchFn);
    for (const t of [carol, dave]) await bob.keys.trust(t.account.userId, await t.keys.own(), t.account.email);
    return bob;
  }

  const tokenOf = (c: VaultClient) => c.http.currentTokens!.accessToken;

  test("enrol, two of three trustees approve after checking the code, the new device recovers: a new password, new keys, every old session ended", async () => {
    const bob = await invited("member");
    // Trustees whose keys bob knows only from the server: refused before anything is sent.
    await expect(bob.recovery.enrol([alice.account.userId, carol.account.userId], 2)).rejects.toMatchObject({ code: "TRUSTEE_UNVERIFIED" });
    for (const t of [carol, dave]) await bob.keys.trust(t.account.userId, await t.keys.own(), t.account.email);
    await bob.recovery.enrol([alice.account.userId, carol.account.userId, dave.account.userId], 2);
    expect(await bob.recovery.status()).toMatchObject({ threshold: 2, current: true });
    const personal = await bob.vaults.create("Mine", "personal");
    await bob.items.add(personal.vaultId, { name: "bank", fields: { username: "bob", password: "s3cret" } });
    const oldToken = tokenOf(bob);

    const device = new VaultClient({ baseUrl: server.url, deviceName: "Bob's new laptop" });
    const pending = await device.recovery.start(bob.account.email);
    expect(pending.code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    // Bob's signed-in device sees the request (one he did not make, he would cancel).
    expect((await bob.recovery.requests()).requests[0]).toMatchObject({ requestId: pending.requestId, status: "pending" });

    const [task] = await alice.recovery.tasks();
    expect(task).toMatchObject({ requestId: pending.requestId, email: bob.account.email, threshold: 2, approved: false });
    await expect(alice.recovery.approve(pending.requestId, "AAAA-BBBB-CCCC-DDDD")).rejects.toMatchObject({
      code: "RECOVERY_CODE_MISMATCH",
    });
    const { confirmation } = await alice.recovery.approve(pending.requestId, pending.code.toLowerCase());
    expect(await device.recovery.progress(pending)).toEqual({ approvals: 1, threshold: 2, status: "pending" });
    await expect(device.recovery.finish(pending, NEW_PASSWORD, confirmation)).rejects.toMatchObject({ code: "RECOVERY_NOT_APPROVED" });
    expect((await carol.recovery.approve(pending.requestId, pending.code)).confirmation).toBe(confirmation);
    // A weak new password is refused before anything is sent; a read-back code that is not the trustee's, before the keys are used.
    await expect(device.recovery.finish(pending, "short", confirmation)).rejects.toMatchObject({ name: "WeakPasswordError" });
    await expect(device.recovery.finish(pending, NEW_PASSWORD, "0000-0000-0000-0000")).rejects.toMatchObject({
      code: "RECOVERY_UNCONFIRMED",
    });

    const account = await device.recovery.finish(pending, NEW_PASSWORD, confirmation);
    expect(account.userId).toBe(bob.account.userId);
    // The old session ended; the old password no longer opens; the new one does, and the vault is there.
    expect((await api.get("/users/me", { token: oldToken })).status).toBe(401);
    const again = new VaultClient({ baseUrl: server.url });
    await expect(again.login(bob.account.email, SDK_PASSWORD)).rejects.toBeTruthy();
    await again.login(bob.account.email, NEW_PASSWORD);
    expect((await again.items.list(personal.vaultId)).map((i) => i.fields.password)).toEqual(["s3cret"]);
    // New keys, on the signed key log that peers follow.
    expect((await alice.keys.log(bob.account.userId)).length).toBe(2);
    // The enrolment is spent; the request is completed.
    expect(await again.recovery.status()).toBeNull();
    expect((await again.recovery.requests()).requests[0]).toMatchObject({
      status: "completed",
      approvedBy: expect.arrayContaining([alice.account.userId, carol.account.userId]),
    });
    // The audit log names each step.
    const audit = await api.get(`/audit?orgId=${alice.account.orgId}&limit=200`, { token: tokenOf(alice) });
    const types = (audit.body.events as Array<{ type: string; targetUserId?: string }>)
      .filter((e) => e.targetUserId === bob.account.userId)
      .map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["recovery.enrolled", "recovery.requested", "recovery.approved", "recovery.completed"]));
  });

  test("the server refuses: too few approvals, a trustee outside the organization or not an admin, a share for another request, a request's secret not its own", async () => {
    const bob = await bobWithTrustees();
    const token = tokenOf(bob);
    // A trustee outside the organization, and a member who is no owner or admin.
    const stranger = await registerUser(api);
    const member = await invited("member");
    const enrolment =
      (await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2), (await api.get("/users/me/recovery", { token })).body);
    const body = (trusteeId: string) => ({
      enrolmentId: randomUUID(),
      threshold: 2,
      copy: enrolment.copy,
      signature: enrolment.signature,
      shares: [enrolment.shares[0], { ...enrolment.shares[1], trusteeId }],
    });
    for (const [trusteeId, field] of [
      [stranger.userId, "shares"],
      [member.account.userId, "shares"],
      [bob.account.userId, "shares"],
    ]) {
      const r = await api.put("/users/me/recovery", { token, body: body(trusteeId!) });
      expect([r.status, r.body.error.field]).toEqual([400, field]);
    }
    // A signature that is not over what is sent.
    const unsigned = await api.put("/users/me/recovery", {
      token,
      body: { ...body(enrolment.shares[1].trusteeId), copy: toBase64(randomBytes(60)) },
    });
    expect([unsigned.status, unsigned.body.error.field]).toEqual([400, "signature"]);

    const device = new VaultClient({ baseUrl: server.url });
    const pending = await device.recovery.start(bob.account.email);
    await carol.recovery.approve(pending.requestId, pending.code);
    // Too few approvals: no session, whatever the device signs.
    const early = await api.post(`/recovery/requests/${pending.requestId}/session`, {
      body: { requestToken: pending.requestToken, signature: toBase64(randomBytes(64)) },
    });
    expect([early.status, early.body.error.code]).toEqual([409, "CONFLICT"]);
    // Another request's secret (someone else asked for bob): not found, and no state.
    const other = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    for (const route of ["state", "session"]) {
      const r = await api.post(`/recovery/requests/${pending.requestId}/${route}`, {
        body: { requestToken: other.requestToken, signature: toBase64(randomBytes(64)) },
      });
      expect(r.status).toBe(404);
    }
    // A trustee approving twice; a share with a signature that is not the trustee's; alice, no trustee of this enrolment.
    await expect(carol.recovery.approve(pending.requestId, pending.code)).rejects.toMatchObject({ status: 409 });
    const forged = await api.post(`/recovery/requests/${pending.requestId}/approvals`, {
      token: tokenOf(dave),
      body: { encryptedShare: toBase64(randomBytes(256)), signature: toBase64(randomBytes(64)) },
    });
    expect([forged.status, forged.body.error.field]).toEqual([400, "signature"]);
    const notTrustee = await api.post(`/recovery/requests/${pending.requestId}/approvals`, {
      token: tokenOf(alice),
      body: { encryptedShare: toBase64(randomBytes(256)), signature: toBase64(randomBytes(64)) },
    });
    expect([notTrustee.status, notTrustee.body.error.code]).toEqual([403, "FORBIDDEN"]);
    // Cancelled by bob from his signed-in device: it takes no more approvals, and no one else cancels it.
    expect((await api.delete(`/users/me/recovery/requests/${other.requestId}`, { token: tokenOf(carol) })).status).toBe(404);
    await bob.recovery.cancel(other.requestId);
    await expect(dave.recovery.approve(other.requestId, other.code)).rejects.toMatchObject({ code: "RECOVERY_UNKNOWN" });
    // An address with no enrolment, or none at all: the same answer, and no trustee is asked.
    const none = await api.post("/recovery/requests", { body: { email: "nobody@example.test", publicKey: pending.publicKey } });
    expect(none.status).toBe(201);
    expect(Object.keys(none.body).sort()).toEqual(["expiresAt", "requestId", "requestToken"]);
    // And polling it answers as a real request nobody approved yet: the same fields, the token of the same form and length.
    const real = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    const decoyState = await api.post(`/recovery/requests/${none.body.requestId}/state`, {
      body: { requestToken: none.body.requestToken },
    });
    const realState = await api.post(`/recovery/requests/${real.requestId}/state`, { body: { requestToken: real.requestToken } });
    expect(decoyState.body).toEqual({ ...realState.body, requestId: none.body.requestId });
    expect(none.body.requestToken.length).toBe(real.requestToken.length);
    // Enrolling again replaces the enrolment: its pending requests end.
    await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2);
    await expect(dave.recovery.approve(pending.requestId, pending.code)).rejects.toMatchObject({ code: "RECOVERY_UNKNOWN" });
  });

  test("a dishonest server: a trustee's key substituted at enrolment is refused, nothing sent", async () => {
    const sent: Sent[] = [];
    let swap = false;
    const fake = await generateRsaKeyPair(2048);
    const edit: Edit = (method, path, body) => {
      if (swap && method === "GET" && path === `/users/${carol.account.userId}/keys`)
        return { ...body, publicKey: toBase64(fake.publicKeyDer) };
      return body;
    };
    const bob = await bobWithTrustees(new MemoryPinStore(), dishonest(edit, sent));
    swap = true;
    const err = await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2).catch((e) => e);
    expect(err).toBeInstanceOf(SecurityError);
    expect(sent.filter((s) => s.path === "/users/me/recovery" && s.method === "PUT")).toEqual([]);
  });

  test("a dishonest server swaps the request's one-time key: the trustee's code check refuses", async () => {
    const bob = await bobWithTrustees();
    await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2);
    const pending = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    const own = await generateRsaKeyPair(2048);
    const edit: Edit = (method, path, body) => {
      if (method === "GET" && path === "/recovery/tasks")
        return { tasks: body.tasks.map((t: any) => ({ ...t, request: { ...t.request, publicKey: toBase64(own.publicKeyDer) } })) };
      return body;
    };
    const carolBehind = new VaultClient({ baseUrl: server.url, fetch: dishonest(edit) });
    await carolBehind.login(carol.account.email, SDK_PASSWORD);
    await expect(carolBehind.recovery.approve(pending.requestId, pending.code)).rejects.toMatchObject({ code: "RECOVERY_CODE_MISMATCH" });
  });

  test("neither the server nor fewer than k trustees open the copy; approvals the server adds do not stand in for a trustee's", async () => {
    const bob = await bobWithTrustees();
    await bob.recovery.enrol([alice.account.userId, carol.account.userId, dave.account.userId], 2);
    const stored = (await api.get("/users/me/recovery", { token: tokenOf(bob) })).body;
    // One trustee's share (carol opens hers) and anything the server could make up: the copy stays shut.
    const carolShare = await rsaOaepUnwrap(
      (await openAccountKeys(carol.exportStretchedKey(), carol.account)).rsaPrivateKey,
      fromBase64(stored.shares.find((s: any) => s.trusteeId === carol.account.userId).encryptedShare),
    );
    // A made-up share at another point of the polynomial (its last byte names the point).
    const forged = new Uint8Array(carolShare.length);
    forged.set(randomBytes(carolShare.length - 1), 0);
    forged[forged.length - 1] = carolShare[carolShare.length - 1] === 1 ? 2 : 1;
    await expect(
      openRecoveryCopy(new Uint8Array(await combine([carolShare, forged])), bob.account.userId, stored.enrolmentId, stored.copy),
    ).rejects.toBeTruthy();
    await expect(openRecoveryCopy(randomBytes(32), bob.account.userId, stored.enrolmentId, stored.copy)).rejects.toBeTruthy();

    // The recovering device behind a server that adds a second "approval" of its own, with the copy and keys it holds.
    const device = new VaultClient({ baseUrl: server.url });
    const pending = await device.recovery.start(bob.account.email);
    await carol.recovery.approve(pending.requestId, pending.code);
    const account = bob.account;
    const edit: Edit = async (method, path, body) => {
      if (method !== "POST" || path !== `/recovery/requests/${pending.requestId}/state`) return body;
      const fakeShare = toBase64(await rsaOaepWrap(fromBase64(pending.publicKey), new Uint8Array(randomBytes(33))));
      return {
        ...body,
        approvals: [
          ...body.approvals,
          {
            trusteeId: dave.account.userId,
            encryptedShare: fakeShare,
            signature: toBase64(randomBytes(64)),
            approvedAt: new Date().toISOString(),
          },
        ],
        userId: account.userId,
        enrolmentId: stored.enrolmentId,
        copy: stored.copy,
        email: account.email,
        accountVersion: account.accountVersion,
        kdf: account.kdf,
        publicKey: account.publicKey,
        signingPublicKey: account.signingPublicKey,
        encryptedPrivateKey: account.encryptedPrivateKey,
        encryptedSigningPrivateKey: account.encryptedSigningPrivateKey,
      };
    };
    const behind = new VaultClient({ baseUrl: server.url, fetch: dishonest(edit) });
    await expect(behind.recovery.finish(pending, NEW_PASSWORD, "0000-0000-0000-0000")).rejects.toMatchObject({ code: "RECOVERY_FAILED" });
    // Bob's account is as it was.
    expect((await api.get("/users/me", { token: tokenOf(bob) })).status).toBe(200);
  });

  test("a dishonest server fakes a whole recovery with keys of its own: the trustee's read-back code refuses them", async () => {
    const bob = await bobWithTrustees();
    await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2);
    const pending = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    const { confirmation } = await carol.recovery.approve(pending.requestId, pending.code);
    // The server's own account: a registered stranger whose keys and password it knows, dressed up as bob's recovery.
    const fakeAddress = email("fake");
    const fake = new VaultClient({ baseUrl: server.url });
    await fake.register({ email: fakeAddress, password: SDK_PASSWORD, kdf: TEST_KDF, rsaBits: 2048 });
    const secret = new Uint8Array(randomBytes(32));
    const shares = await split(secret, 2, 2);
    const enrolmentId = randomUUID();
    const copy = await sealRecoveryCopy(secret, fake.account.userId, enrolmentId, fake.exportStretchedKey());
    const edit: Edit = async (method, path, body) => {
      if (method !== "POST" || path !== `/recovery/requests/${pending.requestId}/state`) return body;
      const wrapped = await Promise.all(
        shares.map(async (sh) => toBase64(await rsaOaepWrap(fromBase64(pending.publicKey), new Uint8Array(sh)))),
      );
      const a = fake.account;
      return {
        requestId: pending.requestId,
        status: "pending",
        threshold: 2,
        approvals: wrapped.map((encryptedShare, i) => ({
          trusteeId: [carol, dave][i]!.account.userId,
          encryptedShare,
          signature: toBase64(randomBytes(64)),
          approvedAt: new Date().toISOString(),
        })),
        userId: a.userId,
        enrolmentId,
        copy,
        email: bob.account.email,
        accountVersion: a.accountVersion,
        kdf: a.kdf,
        publicKey: a.publicKey,
        signingPublicKey: a.signingPublicKey,
        encryptedPrivateKey: a.encryptedPrivateKey,
        encryptedSigningPrivateKey: a.encryptedSigningPrivateKey,
      };
    };
    const sent: Sent[] = [];
    const device = new VaultClient({ baseUrl: server.url, fetch: dishonest(edit, sent) });
    await expect(device.recovery.finish(pending, NEW_PASSWORD, confirmation)).rejects.toMatchObject({ code: "RECOVERY_UNCONFIRMED" });
    expect(sent.filter((x) => x.path.endsWith("/session"))).toEqual([]);
  });

  test("a device that signs in and then fails to set the password: the enrolment stays, and a new request recovers", async () => {
    const bob = await bobWithTrustees();
    await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2);
    const first = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    const { confirmation } = await carol.recovery.approve(first.requestId, first.code);
    await dave.recovery.approve(first.requestId, first.code);
    // The password change never reaches the server (the connection drops): the device is signed in, nothing else happened.
    const dropping: typeof fetch = async (input, init) =>
      String(input).endsWith("/users/me/password")
        ? Response.json({ error: { code: "UNAVAILABLE", message: "Service unavailable" } }, { status: 503 })
        : fetch(input, init);
    await expect(
      new VaultClient({ baseUrl: server.url, fetch: dropping }).recovery.finish(first, NEW_PASSWORD, confirmation),
    ).rejects.toMatchObject({
      status: 503,
    });
    // The old password is gone from nowhere: the account still opens with it, and its enrolment is still current.
    expect((await new VaultClient({ baseUrl: server.url }).login(bob.account.email, SDK_PASSWORD)).userId).toBe(bob.account.userId);
    // The enrolment is still there: the same request opens again, or a new one.
    const device = new VaultClient({ baseUrl: server.url });
    const second = await device.recovery.start(bob.account.email);
    const c2 = await carol.recovery.approve(second.requestId, second.code);
    await dave.recovery.approve(second.requestId, second.code);
    await device.recovery.finish(second, NEW_PASSWORD, c2.confirmation);
    await new VaultClient({ baseUrl: server.url }).login(bob.account.email, NEW_PASSWORD);
  });

  test("a password change makes the enrolment again to the same trustees (the copy held the old password's key)", async () => {
    const bob = await bobWithTrustees();
    await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2);
    const before = (await api.get("/users/me/recovery", { token: tokenOf(bob) })).body.enrolmentId;
    const changed = await bob.changePassword(SDK_PASSWORD, NEW_PASSWORD, { kdf: TEST_KDF });
    expect(changed.recovery).toBe("renewed");
    const after = await bob.recovery.status();
    expect(after).toMatchObject({ threshold: 2, current: true });
    expect((await api.get("/users/me/recovery", { token: tokenOf(bob) })).body.enrolmentId).not.toBe(before);
    // And it recovers under the new password's key.
    const pending = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    const { confirmation } = await carol.recovery.approve(pending.requestId, pending.code);
    await dave.recovery.approve(pending.requestId, pending.code);
    await new VaultClient({ baseUrl: server.url }).recovery.finish(pending, "yet another horse battery staple", confirmation);
  });

  test("a request its owner cancelled hands out nothing, even with k approvals; an opened one cancelled ends the session it began", async () => {
    const bob = await bobWithTrustees();
    await bob.recovery.enrol([carol.account.userId, dave.account.userId], 2);
    const hostile = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    await carol.recovery.approve(hostile.requestId, hostile.code);
    await dave.recovery.approve(hostile.requestId, hostile.code);
    const state = () => api.post(`/recovery/requests/${hostile.requestId}/state`, { body: { requestToken: hostile.requestToken } });
    expect((await state()).body.copy).toEqual(expect.any(String));
    await bob.recovery.cancel(hostile.requestId);
    const after = (await state()).body;
    expect(after.status).toBe("cancelled");
    expect(after).not.toHaveProperty("copy");
    expect(after).not.toHaveProperty("encryptedPrivateKey");

    // Opened (a device signed in with it), then cancelled by its owner: that session ends, and it sets no password.
    const again = await new VaultClient({ baseUrl: server.url }).recovery.start(bob.account.email);
    const { confirmation } = await carol.recovery.approve(again.requestId, again.code);
    await dave.recovery.approve(again.requestId, again.code);
    let sessionToken = "";
    const stopAtPassword: typeof fetch = async (input, init) => {
      if (String(input).endsWith("/users/me/password")) throw new Error("stopped before the password");
      const res = await fetch(input, init);
      if (String(input).endsWith("/session")) sessionToken = ((await res.clone().json()) as { accessToken: string }).accessToken;
      return res;
    };
    await expect(
      new VaultClient({ baseUrl: server.url, fetch: stopAtPassword }).recovery.finish(again, NEW_PASSWORD, confirmation),
    ).rejects.toThrow();
    expect((await api.get("/users/me", { token: sessionToken })).status).toBe(200);
    const owner = new VaultClient({ baseUrl: server.url });
    await owner.login(bob.account.email, SDK_PASSWORD);
    expect((await owner.recovery.requests()).requests.find((r) => r.requestId === again.requestId)?.status).toBe("opened");
    await owner.recovery.cancel(again.requestId);
    expect((await api.get("/users/me", { token: sessionToken })).status).toBe(401);
  });
});
