/**
 * A device left on the old password, against a dishonest server that lets it go on. Alice changes
 * her master password on one device; her other device still holds the old stretched key. The
 * service would end that device's session and refuse its personal wraps (an account-version
 * check); the proxy in front of it (test/helpers/dishonest-proxy.ts) skips both, as a dishonest
 * server would: it lends the stale device a current session and rewrites the account version it
 * sends. Every personal wrap names the signed KDF statement and key-log version it was made under,
 * so the stale device wraps nothing once it has seen the change (`SESSION_STALE`), and a wrap it
 * made before is refused by the devices that know the change (`STALE_WRAP`). On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { VaultClient } from "../../sdk";
import { Api } from "../helpers/client";
import { honest, startDishonestProxy, writesIn, type DishonestProxy, type Rewrite } from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { newDevice } from "../helpers/devices";

jest.setTimeout(240_000);

const OLD = "correct horse battery staple";
const NEW = "a brand new and long passphrase 7";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

describe.each(SQL_ENGINES)("personal wraps name the account state they were made under, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;

  const through = (device = newDevice()) => new VaultClient({ baseUrl: proxy.url, ...device });
  const tokenOf = (c: VaultClient) => c.http.currentTokens!.accessToken;

  /** Alice on two devices (`laptop`, `phone`), a personal vault with a secret in it, then her password changed on the laptop. */
  async function changedOnLaptop() {
    const laptop = through();
    const address = email("alice");
    await laptop.register({ email: address, password: OLD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const personal = await laptop.vaults.create(`Private ${randomUUID().slice(0, 4)}`, "personal");
    await laptop.items.add(personal.vaultId, { name: "bank", fields: { password: "s1" } });
    const phoneDevice = newDevice();
    const phone = through(phoneDevice);
    await phone.login(address, OLD);
    const staleToken = tokenOf(phone);
    await laptop.changePassword(OLD, NEW);
    return { laptop, phone, phoneDevice, personal: personal.vaultId, staleToken };
  }

  /**
   * The dishonest server's leniency toward the phone: its ended session answered as the laptop's,
   * and the account version its personal wraps carry set to the current one.
   */
  const lenient =
    (staleToken: string, laptop: VaultClient): Rewrite =>
    (method, path, body, headers) => {
      if (headers.authorization === `Bearer ${staleToken}`) headers.authorization = `Bearer ${tokenOf(laptop)}`;
      if (method === "POST" && path === "/vaults" && body?.type === "personal") body.accountVersion = laptop.account.accountVersion;
      return body;
    };

  /** Alice's vaults as the service holds them, read honestly. */
  const vaultIdsOf = async (laptop: VaultClient) =>
    ((await api.get("/vaults", { token: tokenOf(laptop) })).body.vaults as Array<{ vaultId: string }>).map((v) => v.vaultId).sort();

  beforeAll(async () => {
    store = await openStore();
    server = await startTestServer({ ...store.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
  });
  afterEach(() => {
    proxy.edit = honest;
    proxy.rewrite = undefined;
  });
  afterAll(async () => {
    await proxy.close();
    await server.stop();
    await store.drop();
  });

  test("the stale device learns of the change from a wrap its account signed, and wraps nothing under the old password", async () => {
    const { laptop, phone, personal, staleToken } = await changedOnLaptop();
    proxy.rewrite = lenient(staleToken, laptop);
    // The laptop's rewrap of the personal vault names KDF statement 2: the phone, on statement 1, stops.
    await expect(phone.items.list(personal)).rejects.toMatchObject({ code: "SESSION_STALE" });
    const before = await vaultIdsOf(laptop);
    proxy.sent.length = 0;
    await expect(phone.vaults.create("Made on the phone", "personal")).rejects.toMatchObject({ code: "SESSION_STALE" });
    expect(writesIn(proxy.sent)).toEqual([]);
    expect(await vaultIdsOf(laptop)).toEqual(before);
    // The laptop, on the new password, goes on as before.
    expect((await laptop.items.list(personal)).map((i) => i.name)).toEqual(["bank"]);
  });

  test("a personal vault the stale device made under the old password is refused by the device that changed it", async () => {
    const { laptop, phone, staleToken } = await changedOnLaptop();
    proxy.rewrite = lenient(staleToken, laptop);
    // The phone has read nothing since the change: the server lets it make a vault under the old password.
    const made = await phone.vaults.create("Made on the phone", "personal");
    await phone.items.add(made.vaultId, { name: "written on the phone", fields: { password: "s2" } });
    proxy.rewrite = undefined;
    proxy.sent.length = 0;
    await expect(laptop.items.list(made.vaultId)).rejects.toMatchObject({ code: "STALE_WRAP" });
    await expect(laptop.items.add(made.vaultId, { name: "new secret", fields: { password: "s3" } })).rejects.toMatchObject({
      code: "STALE_WRAP",
    });
    expect(writesIn(proxy.sent)).toEqual([]);
    // A new device that logs in with the new password refuses it too: it verifies statement 2 at login.
    const fresh = through();
    await fresh.login(laptop.account.email, NEW);
    await expect(fresh.items.list(made.vaultId)).rejects.toMatchObject({ code: "STALE_WRAP" });
  });

  test("once seen, the change is kept on the device: a later session there wraps nothing under the old password either", async () => {
    const { laptop, phone, phoneDevice, personal, staleToken } = await changedOnLaptop();
    proxy.rewrite = lenient(staleToken, laptop);
    const saved = { account: structuredClone(phone.account), tokens: phone.http.currentTokens! };
    await expect(phone.items.list(personal)).rejects.toMatchObject({ code: "SESSION_STALE" });
    // The phone's saved login, resumed in a new process (as vaultctl does), unlocked with the old password: it reads nothing first.
    const resumed = new VaultClient({ baseUrl: proxy.url, ...phoneDevice, ...saved });
    await resumed.unlock(OLD);
    proxy.sent.length = 0;
    await expect(resumed.vaults.create("Made on the phone", "personal")).rejects.toMatchObject({ code: "SESSION_STALE" });
    expect(writesIn(proxy.sent)).toEqual([]);
  });

  test("a password change on a listing that leaves a personal vault out: refused before anything is sent, the old password still in force", async () => {
    const laptop = through();
    const address = email("alice");
    await laptop.register({ email: address, password: OLD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    await laptop.vaults.create("Private", "personal");
    const hidden = await laptop.vaults.create("Diary", "personal");
    await laptop.vaults.listChecked(); // this device knows both
    // Left out, the vault would stay wrapped under the old password after the change.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === "/vaults" ? { ...body, vaults: body.vaults.filter((v: any) => v.vaultId !== hidden.vaultId) } : body;
    proxy.sent.length = 0;
    await expect(laptop.changePassword(OLD, NEW)).rejects.toMatchObject({ code: "KNOWN_VAULT_MISSING" });
    expect(writesIn(proxy.sent)).toEqual([]);
    proxy.edit = honest;
    await through().login(address, OLD);
  });
});
