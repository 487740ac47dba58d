/**
 * "Remember this device" at a login's second step, over HTTP with the real SDK on SQLite and
 * PostgreSQL: the device's next logins with the password skip the code; a token of another
 * account, a wrong password, an expired or forgotten device ask it again (and tell nothing more);
 * a password change and a factor removed forget every device; the token is stored only as a hash
 * and never reaches the logs or the audit trail; remembering and forgetting a device are audit
 * records; the sweeper purges the expired ones.
 */
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { SQL_ENGINES } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { MemoryValues, VaultClient } from "../../sdk";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { hashToken } from "../../lib/domain/opaque-tokens";
import { sweepOnce } from "../../lib/workers/sweeper";
import { allAuditRecords } from "../helpers/audit";
import { eventually, sleep } from "../helpers/wait";

jest.setTimeout(180_000);

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(SQL_ENGINES)("remembered devices, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let dropDatabase: () => Promise<void>;
  const logged: string[] = [];
  const consoleSpies: jest.SpyInstance[] = [];

  beforeAll(async () => {
    // Every line the server logs, at debug level, read back at the end (the logger writes to the console).
    for (const level of ["log", "info", "warn", "error", "debug", "trace"] as const)
      consoleSpies.push(
        jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" "))),
      );
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open", LOG_LEVEL: "debug" });
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
    for (const spy of consoleSpies) spy.mockRestore();
  });

  /** A code of the app at the server's time, a step after the last one used (each code is good once). */
  const codeNow = (secret: string) => {
    server.clock.advance(30_000);
    return referenceTotp(fromBase32(secret), server.clock.nowMs());
  };

  /** A user with an authenticator app enrolled. */
  async function withTotp(): Promise<{ email: string; secret: string; owner: VaultClient }> {
    const email = `remember-${randomUUID().slice(0, 8)}@example.test`;
    const owner = new VaultClient({ baseUrl: server.url });
    await owner.register({ email, password: SDK_PASSWORD, kdf: TEST_KDF });
    const setup = await owner.factors.setupTotp();
    await owner.factors.confirmTotp(setup.setupToken, codeNow(setup.secret), "Phone", SDK_PASSWORD);
    return { email, secret: setup.secret, owner };
  }

  /** A device: its kept device tokens, and how many times a login from it was asked the second factor. */
  function device(name: string, secret: string, opts: { remember?: boolean } = {}) {
    const tokens = new MemoryValues<string>();
    const state = { asked: 0 };
    const login = async (email: string, password = SDK_PASSWORD) => {
      const c = new VaultClient({
        baseUrl: server.url,
        deviceName: name,
        deviceTokens: tokens,
        secondFactor: async () => {
          state.asked++;
          return { totpCode: codeNow(secret), rememberDevice: opts.remember ?? true };
        },
      });
      await c.login(email, password);
      return c;
    };
    return { tokens, state, login };
  }

  test("remembered: the next login skips the code, in the same account; another account's token, a wrong password and a made-up token do not", async () => {
    const ada = await withTotp();
    const laptop = device("Ada's laptop", ada.secret);
    await laptop.login(ada.email);
    expect(laptop.state.asked).toBe(1);
    const token = await laptop.tokens.get(ada.email);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const again = await laptop.login(ada.email);
    expect(laptop.state.asked).toBe(1);
    await expect(again.vaults.list()).resolves.toBeDefined();
    const listed = await again.sessions.rememberedDevices();
    expect(listed).toEqual([
      {
        deviceId: expect.any(String),
        deviceName: "Ada's laptop",
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        expiresAt: expect.any(String),
      },
    ]);
    expect(Date.parse(listed[0]!.expiresAt) - Date.parse(listed[0]!.createdAt)).toBe(30 * DAY_MS);

    // A device that did not ask to be remembered gets no token.
    const phone = device("Ada's phone", ada.secret, { remember: false });
    await phone.login(ada.email);
    await phone.login(ada.email);
    expect(phone.state.asked).toBe(2);
    expect(await phone.tokens.get(ada.email)).toBeUndefined();

    // Ada's token with Bob's password: Bob's second factor is asked all the same.
    const bob = await withTotp();
    const bobs = device("Bob's laptop", bob.secret, { remember: false });
    await bobs.tokens.set(bob.email, token!);
    await bobs.login(bob.email);
    expect(bobs.state.asked).toBe(1);
    await bobs.tokens.set(bob.email, "A".repeat(43));
    await bobs.login(bob.email);
    expect(bobs.state.asked).toBe(2);

    // The token with a wrong password: the same second step a wrong password always gets, nothing that tells the token served.
    const res = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: ada.email, authHash: Buffer.alloc(32, 7).toString("base64"), deviceToken: token }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ secondFactorRequired: true, stepToken: expect.any(String), methods: ["totp", "recovery-code"] });
  });

  test("a device remembered 30 days ago asks the code again", async () => {
    const ada = await withTotp();
    const laptop = device("Ada's laptop", ada.secret);
    await laptop.login(ada.email);
    server.clock.advance(29 * DAY_MS);
    await laptop.login(ada.email);
    expect(laptop.state.asked).toBe(1);
    server.clock.advance(1 * DAY_MS + 60_000);
    const later = await laptop.login(ada.email);
    expect(laptop.state.asked).toBe(2);
    // The second step remembered it anew; the expired one is not listed.
    expect(await later.sessions.rememberedDevices()).toHaveLength(1);
  });

  test("forgotten from the sessions list, the device is asked the code again; only one's own devices can be forgotten", async () => {
    const ada = await withTotp();
    const laptop = device("Ada's laptop", ada.secret);
    const first = await laptop.login(ada.email);
    const [remembered] = await first.sessions.rememberedDevices();

    const bob = await withTotp();
    await expect(bob.owner.sessions.forgetDevice(remembered!.deviceId)).rejects.toMatchObject({ status: 404, code: "NOT_FOUND" });
    await expect(first.sessions.forgetDevice(randomUUID())).rejects.toMatchObject({ status: 404, code: "NOT_FOUND" });
    await laptop.login(ada.email);
    expect(laptop.state.asked).toBe(1);

    await first.sessions.forgetDevice(remembered!.deviceId);
    expect(await first.sessions.rememberedDevices()).toEqual([]);
    await expect(first.sessions.forgetDevice(remembered!.deviceId)).rejects.toMatchObject({ status: 404 });
    await laptop.login(ada.email);
    expect(laptop.state.asked).toBe(2);
  });

  test("a password change forgets every remembered device; so does removing a second factor", async () => {
    const ada = await withTotp();
    const laptop = device("Ada's laptop", ada.secret);
    const signedIn = await laptop.login(ada.email);
    const NEW = "a brand new horse battery staple";
    await signedIn.changePassword(SDK_PASSWORD, NEW, { kdf: TEST_KDF });
    await laptop.login(ada.email, NEW);
    expect(laptop.state.asked).toBe(2);

    const again = await laptop.login(ada.email, NEW);
    expect(laptop.state.asked).toBe(2);
    expect(await again.sessions.rememberedDevices()).toHaveLength(1);
    const [factor] = (await again.factors.list()).factors;
    await again.factors.remove(factor!.factorId, NEW);
    expect(await again.sessions.rememberedDevices()).toEqual([]);
    // Enrolled again: the laptop is a stranger to the new factor, and is asked its code.
    const setup = await again.factors.setupTotp();
    await again.factors.confirmTotp(setup.setupToken, codeNow(setup.secret), "New phone", NEW);
    const laptopAfter = device("Ada's laptop", setup.secret);
    await laptop.tokens.entries().then((kept) => Promise.all(kept.map(([email, t]) => laptopAfter.tokens.set(email, t))));
    await laptopAfter.login(ada.email, NEW);
    expect(laptopAfter.state.asked).toBe(1);
  });

  test("the token is stored as its hash only, and reaches neither the logs nor the audit trail", async () => {
    const ada = await withTotp();
    const laptop = device("Ada's laptop", ada.secret);
    const c = await laptop.login(ada.email);
    await laptop.login(ada.email);
    const token = (await laptop.tokens.get(ada.email))!;
    // Found by its hash; the token itself is in none of the server's files.
    const stored = await server.node.runtime.store.sessions.findRememberedDevice(hashToken(token));
    expect(stored).toMatchObject({ userId: c.account.userId, deviceName: "Ada's laptop" });
    const files = fs.readdirSync(server.dataDir, { recursive: true }).map((f) => path.join(server.dataDir, String(f)));
    for (const file of files.filter((f) => fs.statSync(f).isFile())) expect(fs.readFileSync(file).includes(token)).toBe(false);
    await c.sessions.forgetDevice(stored!.deviceId);

    const audit = await c.http.request<unknown>("GET", "/audit", { query: { orgId: c.account.orgId, limit: 500 } });
    expect(JSON.stringify(audit)).not.toContain(token);
    expect(logged.join("\n")).not.toContain(token);
  });

  test("remembering a device and forgetting it are records of the account's audit log, by the account; a forget refused records nothing", async () => {
    const ada = await withTotp();
    const laptop = device("Ada's laptop", ada.secret);
    const c = await laptop.login(ada.email);
    const [remembered] = await c.sessions.rememberedDevices();
    await c.sessions.forgetDevice(remembered!.deviceId);
    await expect(c.sessions.forgetDevice(remembered!.deviceId)).rejects.toMatchObject({ status: 404 });
    const deviceRecords = async () => (await allAuditRecords(c)).filter((r) => r.type.startsWith("user.device_")).reverse();
    await eventually("the device records in the audit log", async () => (await deviceRecords()).length >= 2);
    await sleep(500);
    const me = c.account.userId;
    expect((await deviceRecords()).map(({ type, actorId, targetUserId }) => ({ type, actorId, targetUserId }))).toEqual([
      { type: "user.device_remembered", actorId: me, targetUserId: me },
      { type: "user.device_forgotten", actorId: me, targetUserId: me },
    ]);
    // Checked here, the chain holds with them.
    await expect(c.audit.verify()).resolves.toBeDefined();
  });

  // Last: it moves the server's clock a month on.
  test("the sweeper purges a device past its 30 days and keeps one remembered since", async () => {
    const ada = await withTotp();
    const adas = device("Ada's laptop", ada.secret);
    await adas.login(ada.email);
    const expiring = hashToken((await adas.tokens.get(ada.email))!);
    server.clock.advance(31 * DAY_MS);
    const bob = await withTotp();
    const bobs = device("Bob's laptop", bob.secret);
    await bobs.login(bob.email);
    const live = hashToken((await bobs.tokens.get(bob.email))!);

    const { store, locks } = server.node.runtime;
    expect(await store.sessions.findRememberedDevice(expiring)).not.toBeNull();
    const swept = await sweepOnce(store, locks, { leaseMs: 60_000, inviteRetentionMs: 90 * DAY_MS }, new Date(server.clock.nowMs()));
    expect(swept).toMatchObject({ ran: true, rememberedDevices: expect.any(Number) });
    expect(swept.ran && swept.rememberedDevices).toBeGreaterThanOrEqual(1);
    expect(await store.sessions.findRememberedDevice(expiring)).toBeNull();
    expect(await store.sessions.findRememberedDevice(live)).toMatchObject({ deviceName: "Bob's laptop" });
  });
});
