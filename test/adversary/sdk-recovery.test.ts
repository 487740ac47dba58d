/**
 * A dishonest server against account recovery's trustees: a proxy between real clients and the
 * real service (test/helpers/dishonest-proxy.ts) presents a trustee with a request for an enrolment
 * its user has since replaced (by enrolling again, changing the password or rotating keys), or with
 * an unversioned copy of one. The trustee's client refuses it by name (`RECOVERY_SUPERSEDED`): it
 * approves nothing, releases no share, and the service's state is unchanged. An enrolment made
 * before versions still works, marked for the user to enrol again. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { VaultClient, type PendingRecovery } from "../../sdk";
import { enrolmentBytes, enrolmentStatementOf } from "../../protocol/formats/recovery";
import { signStatement } from "../../protocol/formats/statements";
import { Api } from "../helpers/client";
import { honest, startDishonestProxy, writesIn, type DishonestProxy, type Edit } from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { newDevice } from "../helpers/devices";

jest.setTimeout(240_000);

const PASSWORD = "correct horse battery staple";
const NEW_PASSWORD = "a brand new horse staple battery";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** An enrolment as `GET /users/me/recovery` answers it. */
interface Enrolment {
  enrolmentId: string;
  userId: string;
  threshold: number;
  copy: string;
  signature: string;
  createdAt: string;
  current?: boolean;
  version?: number;
  keys?: string;
  kdfVersion?: number;
  shares: Array<{ trusteeId: string; encryptedShare: string; trusteeKeys: string }>;
}

describe.each(SQL_ENGINES)("a dishonest server against recovery's trustees, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;
  let owner: VaultClient;
  let admins: VaultClient[];

  const through = (device = newDevice()) => new VaultClient({ baseUrl: proxy.url, ...device });

  beforeAll(async () => {
    store = await openStore();
    server = await startTestServer(store.env);
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
    owner = through();
    await owner.register({ email: email("owner"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    admins = [];
    for (let i = 0; i < 3; i++) admins.push(await invited("admin"));
  });
  afterEach(() => {
    proxy.edit = honest;
  });
  afterAll(async () => {
    await proxy.close();
    await server?.stop();
    await store?.drop();
  });

  async function invited(role: "admin" | "member"): Promise<VaultClient> {
    const address = email(role);
    const c = through();
    await c.register({
      email: address,
      password: PASSWORD,
      invite: (await owner.invites.create(address, role)).link,
      kdf: TEST_KDF,
      rsaBits: 2048,
    });
    return c;
  }

  /** A member who compared fingerprints with the three admins (the owner is vouched for by the invite). */
  async function userWithTrustees(): Promise<VaultClient> {
    const user = await invited("member");
    for (const t of admins) await user.keys.trust(t.account.userId, await t.keys.own(), t.account.email);
    return user;
  }

  /** The enrolment the service holds for `user`, read honestly. */
  async function enrolmentOf(user: VaultClient): Promise<Enrolment> {
    return (await api.get("/users/me/recovery", { token: user.http.currentTokens!.accessToken })).body;
  }

  /** What the service holds of the user's recovery, read honestly (not through the proxy). */
  async function stateOf(user: VaultClient) {
    const token = { token: user.http.currentTokens!.accessToken };
    const [enrolment, requests] = await Promise.all([api.get("/users/me/recovery", token), api.get("/users/me/recovery/requests", token)]);
    return { enrolment: enrolment.body, requests: requests.body };
  }

  /**
   * The server lists, among the trustee's tasks, `request` (of `userId`, made by a device it holds)
   * as a request of `old` (its enrolment and shares, as the user signed them), whether or not the
   * trustee is a trustee of the enrolment the request is really for.
   */
  const presenting =
    (userId: string, request: PendingRecovery, old: Enrolment): Edit =>
    (method, path, body) => {
      if (method !== "GET" || path !== "/recovery/tasks") return body;
      const task = {
        request: {
          requestId: request.requestId,
          userId,
          publicKey: request.publicKey,
          status: "pending",
          createdAt: new Date().toISOString(),
          expiresAt: request.expiresAt,
          approvedBy: [],
        },
        enrolment: {
          enrolmentId: old.enrolmentId,
          threshold: old.threshold,
          copy: old.copy,
          signature: old.signature,
          createdAt: old.createdAt,
          ...(old.version !== undefined && { version: old.version, keys: old.keys, kdfVersion: old.kdfVersion }),
        },
        trustees: old.shares.map((s) => ({ trusteeId: s.trusteeId, trusteeKeys: s.trusteeKeys, encryptedShare: s.encryptedShare })),
        approved: false,
      };
      return { tasks: [...body.tasks.filter((t: any) => t.request.requestId !== request.requestId), task] };
    };

  /**
   * `trustee` is asked (the server presenting `old`) to approve a request for `user` made by a device
   * the server holds: refused as superseded; nothing sent that approves or releases a share, and the
   * service's recovery state for `user` unchanged.
   */
  async function refusedAsSuperseded(trustee: VaultClient, user: VaultClient, old: Enrolment): Promise<void> {
    const attacker = new VaultClient({ baseUrl: server.url });
    const pending = await attacker.recovery.start(user.account.email);
    const before = await stateOf(user);
    proxy.edit = presenting(user.account.userId, pending, old);
    const from = proxy.sent.length;
    await expect(trustee.recovery.approve(pending.requestId, pending.code)).rejects.toMatchObject({
      name: "SecurityError",
      code: "RECOVERY_SUPERSEDED",
    });
    await expect(trustee.recovery.tasks()).rejects.toMatchObject({ code: "RECOVERY_SUPERSEDED" });
    expect(writesIn(proxy.sent.slice(from))).toEqual([]);
    proxy.edit = honest;
    expect(await stateOf(user)).toEqual(before);
    expect(await attacker.recovery.progress(pending)).toMatchObject({ approvals: 0 });
    await user.recovery.cancel(pending.requestId);
  }

  test("a trustee shown an enrolment its user has since replaced refuses it: nothing approved, no share released", async () => {
    const user = await userWithTrustees();
    const [a, b, c] = admins as [VaultClient, VaultClient, VaultClient];
    await user.recovery.enrol([a.account.userId, b.account.userId], 2);
    const first = await enrolmentOf(user);
    expect(first).toMatchObject({ version: 1 });
    // Enrolled again: `a` stays a trustee, `b` is dropped for `c`.
    await user.recovery.enrol([a.account.userId, c.account.userId], 2);
    expect(await user.recovery.status()).toMatchObject({ version: 2, current: true, reenrol: false });
    // `a` is shown a request of the new enrolment, and her device remembers its version.
    const honestRequest = await new VaultClient({ baseUrl: server.url }).recovery.start(user.account.email);
    const task = (await a.recovery.tasks()).find((t) => t.requestId === honestRequest.requestId);
    expect(task).toMatchObject({ version: 2, legacy: false });
    await user.recovery.cancel(honestRequest.requestId);

    // The server presents the old enrolment (genuinely signed by the user) and a request of its own.
    await refusedAsSuperseded(a, user, first);
    // Nor may the server show the user an old enrolment of theirs as current.
    proxy.edit = (method, path, body) => (method === "GET" && path === "/users/me/recovery" ? { ...first, current: true } : body);
    await expect(user.recovery.status()).rejects.toMatchObject({ code: "RECOVERY_SUPERSEDED" });
  });

  test("a device that starts its recovery over replaces its own request; another device's request displaces nothing", async () => {
    const user = await userWithTrustees();
    const [a, b] = admins as [VaultClient, VaultClient];
    await user.recovery.enrol([a.account.userId, b.account.userId], 2);
    const device = new VaultClient({ baseUrl: server.url });
    const first = await device.recovery.start(user.account.email);
    const again = await device.recovery.start(user.account.email, first);
    const stranger = await new VaultClient({ baseUrl: server.url }).recovery.start(user.account.email);
    const asked = (await a.recovery.tasks()).map((t) => t.requestId);
    expect(asked).toEqual(expect.arrayContaining([again.requestId, stranger.requestId]));
    expect(asked).not.toContain(first.requestId);
    for (const r of [again, stranger]) await user.recovery.cancel(r.requestId);
  });

  test("an unversioned copy of an enrolment, after a versioned one was seen, is refused (a downgrade)", async () => {
    const user = await userWithTrustees();
    const [a, b] = admins as [VaultClient, VaultClient];
    await user.recovery.enrol([a.account.userId, b.account.userId], 2);
    const current = await enrolmentOf(user);
    const honestRequest = await new VaultClient({ baseUrl: server.url }).recovery.start(user.account.email);
    await a.recovery.tasks();
    await user.recovery.cancel(honestRequest.requestId);
    // The same enrolment in the unversioned form: as a release before versions would have signed it (with the user's key).
    const { version: _v, keys: _k, kdfVersion: _d, ...rest } = current;
    const statement = await enrolmentStatementOf({ ...rest, userId: user.account.userId });
    const signature = await signStatement(enrolmentBytes(statement), (user as any).parts.core.keys.signingPrivateKey);
    await refusedAsSuperseded(a, user, { ...rest, signature });
  });

  test("a trustee dropped from the enrolment is refused an older one once the user changed the password", async () => {
    const user = await userWithTrustees();
    const [a, b, c] = admins as [VaultClient, VaultClient, VaultClient];
    await user.recovery.enrol([a.account.userId, b.account.userId], 2);
    const first = await enrolmentOf(user);
    expect(first).toMatchObject({ version: 1, kdfVersion: 1 });
    // `b` has seen the first enrolment (and pinned the user's keys).
    const honestRequest = await new VaultClient({ baseUrl: server.url }).recovery.start(user.account.email);
    expect((await b.recovery.tasks()).map((t) => t.requestId)).toContain(honestRequest.requestId);
    await user.recovery.cancel(honestRequest.requestId);
    // A password change (the enrolment made again under it), then `b` is dropped: `b` never sees either new enrolment.
    const changed = await user.changePassword(PASSWORD, NEW_PASSWORD, { kdf: TEST_KDF });
    expect(changed.recovery).toBe("renewed");
    await user.recovery.enrol([a.account.userId, c.account.userId], 2);
    expect(await enrolmentOf(user)).toMatchObject({ version: 3, kdfVersion: 2 });
    // The server presents the first enrolment to `b`: its KDF statement is older than the account's, which the account signed.
    await refusedAsSuperseded(b, user, first);
  });

  test("a trustee refuses an enrolment made under keys the user has since rotated", async () => {
    const user = await userWithTrustees();
    const [a, b] = admins as [VaultClient, VaultClient];
    await user.recovery.enrol([a.account.userId, b.account.userId], 2);
    const first = await enrolmentOf(user);
    const honestRequest = await new VaultClient({ baseUrl: server.url }).recovery.start(user.account.email);
    await b.recovery.tasks();
    await user.recovery.cancel(honestRequest.requestId);
    // The rotation makes the enrolment again, bound to the new keys, to the same trustees.
    expect((await user.keys.rotate({ rsaBits: 2048 })).recovery).toBe("renewed");
    expect(await user.recovery.status()).toMatchObject({ current: true, reenrol: false });
    expect(await enrolmentOf(user)).toMatchObject({ version: first.version! + 1 });
    await refusedAsSuperseded(b, user, first);
  });

  test("an enrolment made before versions keeps working, marked for the user to enrol again", async () => {
    const user = await userWithTrustees();
    const [a, b] = admins as [VaultClient, VaultClient];
    // An enrolment as the previous release's client made it: unversioned, signed in the v1 form.
    await user.recovery.enrol([a.account.userId, b.account.userId], 2);
    const { version: _v, keys: _k, kdfVersion: _d, current: _c, createdAt: _t, userId: _u, ...form } = await enrolmentOf(user);
    const legacy = { ...form, enrolmentId: randomUUID() };
    const statement = await enrolmentStatementOf({ ...legacy, userId: user.account.userId });
    const signature = await signStatement(enrolmentBytes(statement), (user as any).parts.core.keys.signingPrivateKey);
    // (A device of the previous release remembers nothing of versions.)
    const legacyUser = new VaultClient({ baseUrl: proxy.url, tokens: user.http.currentTokens!, account: user.account });
    await legacyUser.unlockWithStretchedKey(user.exportStretchedKey());
    for (const t of [a, b]) await legacyUser.keys.trust(t.account.userId, await t.keys.own(), t.account.email);
    const put = await api.put("/users/me/recovery", { token: user.http.currentTokens!.accessToken, body: { ...legacy, signature } });
    expect(put.status).toBe(200);
    expect(await legacyUser.recovery.status()).toMatchObject({ current: true, reenrol: true });
    expect((await legacyUser.recovery.status())!.version).toBeUndefined();
    // A trustee whose device has seen no versioned enrolment of the account approves it, marked legacy.
    const device = new VaultClient({ baseUrl: server.url });
    const pending = await device.recovery.start(user.account.email);
    const fresh = new VaultClient({ baseUrl: proxy.url, tokens: a.http.currentTokens!, account: a.account });
    await fresh.unlockWithStretchedKey(a.exportStretchedKey());
    const task = (await fresh.recovery.tasks()).find((t) => t.requestId === pending.requestId);
    expect(task).toMatchObject({ legacy: true });
    await fresh.recovery.approve(pending.requestId, pending.code);
    expect(await device.recovery.progress(pending)).toMatchObject({ approvals: 1 });
    await legacyUser.recovery.cancel(pending.requestId);
    // The device that enrolled a versioned one before refuses to take the unversioned one for current.
    await expect(user.recovery.status()).rejects.toMatchObject({ code: "RECOVERY_SUPERSEDED" });
    // Renewing makes it versioned, one past nothing the server or this device knows.
    expect(await legacyUser.recovery.renew()).toBe("renewed");
    expect(await legacyUser.recovery.status()).toMatchObject({ version: 1, reenrol: false });
  });
});
