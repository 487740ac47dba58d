/**
 * A password change against a dishonest server that kept a copy of its data from before the
 * change, and learns the old password (it leaked: the reason people change one). Real clients talk
 * to the real service through a proxy (test/helpers/dishonest-proxy.ts) that rewrites its answers;
 * the "old copy" is what the service held before the change. A plain change leaves everything
 * written after it open to that pair; the protective change (`oldPasswordMayBeKnown`) leaves only
 * the shared vaults the user may not rekey, and says so. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { ProtectionInterruptedError, VaultClient, type Account } from "../../sdk";
import { fromBase64, type Bytes } from "../../protocol/encoding";
import { deriveAccountSecrets, openAccountKeys } from "../../protocol/crypto/keys";
import { aesKwUnwrap, rsaOaepUnwrap } from "../../protocol/crypto/primitives";
import { openItem } from "../../sdk/items";
import { Api } from "../helpers/client";
import { honest, startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { newDevice } from "../helpers/devices";

jest.setTimeout(240_000);

const OLD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** What the service held of one user before a change: the account (keys sealed under the password) and their wrap of each vault. */
interface OldCopy {
  account: Account;
  wraps: Array<{ vaultId: string; vaultType: string; encryptedVaultKey: string }>;
}

describe.each(SQL_ENGINES)("a password change against an old copy of the server's data, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;
  let n = 0;

  const through = (device = newDevice()) => new VaultClient({ baseUrl: proxy.url, ...device });
  const tokenOf = (c: VaultClient) => ({ token: c.http.currentTokens!.accessToken });

  /**
   * Alice (owner of the organization) with bob (a member, invited by a signed link): alice's
   * personal vault, a shared vault she owns with bob in it, a shared vault bob owns with alice a
   * member, and a shared vault bob owns where alice is an admin; one secret in each.
   */
  async function world() {
    const alice = through();
    await alice.register({ email: email("alice"), password: OLD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const bobEmail = email("bob");
    const bob = through();
    await bob.register({
      email: bobEmail,
      password: OLD,
      invite: (await alice.invites.create(bobEmail)).link,
      kdf: TEST_KDF,
      rsaBits: 2048,
    });
    const personal = await alice.vaults.create(`Private ${++n}`, "personal");
    const team = await alice.vaults.create(`Team ${n}`, "shared");
    await alice.members.share(team.vaultId, bob.account.userId, "member");
    const bobs = await bob.vaults.create(`Bob's ${n}`, "shared");
    await bob.members.share(bobs.vaultId, alice.account.userId, "member");
    const managed = await bob.vaults.create(`Ops ${n}`, "shared");
    await bob.members.share(managed.vaultId, alice.account.userId, "admin");
    for (const v of [personal, team]) await alice.items.add(v.vaultId, { name: "before", fields: { password: "s1" } });
    for (const v of [bobs, managed]) await bob.items.add(v.vaultId, { name: "before", fields: { password: "s1" } });
    return { alice, bob, personal: personal.vaultId, team: team.vaultId, bobs: bobs.vaultId, managed: managed.vaultId };
  }

  /** The service's copy of what alice's old password opens, read honestly. */
  async function copyOf(client: VaultClient): Promise<OldCopy> {
    const { body } = await api.get("/vaults", tokenOf(client));
    return {
      account: structuredClone(client.account),
      wraps: body.vaults.map((v: any) => ({ vaultId: v.vaultId, vaultType: v.vaultType, encryptedVaultKey: v.encryptedVaultKey })),
    };
  }

  /**
   * What the old password and the old copy open among what the service holds now: the private keys
   * and vault keys of the copy, and any wrap the service holds now that those keys open, tried on
   * every item. Answers the names of the items that open, by vault.
   */
  async function opensNow(copy: OldCopy, reader: VaultClient, vaultIds: readonly string[]): Promise<Record<string, string[]>> {
    const { stretchedKey } = await deriveAccountSecrets(OLD, copy.account.kdf);
    const keys = await openAccountKeys(stretchedKey, copy.account);
    const unwrap = async (type: string, wrap: string): Promise<Bytes | undefined> => {
      try {
        return type === "personal"
          ? await aesKwUnwrap(stretchedKey, fromBase64(wrap))
          : await rsaOaepUnwrap(keys.rsaPrivateKey, fromBase64(wrap));
      } catch {
        return undefined;
      }
    };
    const candidates: Bytes[] = [];
    for (const w of copy.wraps) candidates.push(...[await unwrap(w.vaultType, w.encryptedVaultKey)].filter((k): k is Bytes => !!k));
    const { body: now } = await api.get("/vaults", tokenOf(reader));
    for (const v of now.vaults) candidates.push(...[await unwrap(v.vaultType, v.encryptedVaultKey)].filter((k): k is Bytes => !!k));
    const out: Record<string, string[]> = {};
    for (const vaultId of vaultIds) {
      const { body } = await api.get(`/vaults/${vaultId}/items`, tokenOf(reader));
      const opened: string[] = [];
      for (const item of body.items)
        for (const key of candidates) {
          try {
            opened.push((await openItem(key, vaultId, item)).name);
            break;
          } catch {
            /* not under this key */
          }
        }
      out[vaultId] = opened.sort();
    }
    return out;
  }

  beforeAll(async () => {
    store = await openStore();
    server = await startTestServer({ ...store.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
  });
  afterEach(() => {
    proxy.edit = honest;
  });
  afterAll(async () => {
    await proxy.close();
    await server.stop();
    await store.drop();
  });

  test("a plain change keeps every key: the old password and an old copy open what is written after it", async () => {
    const w = await world();
    const copy = await copyOf(w.alice);
    const result = await w.alice.changePassword(OLD, "a brand new and long passphrase 7");
    expect(result.protection).toBeUndefined();
    for (const v of [w.personal, w.team]) await w.alice.items.add(v, { name: "after", fields: { password: "s2" } });
    expect(await opensNow(copy, w.alice, [w.personal, w.team])).toEqual({
      [w.personal]: ["after", "before"],
      [w.team]: ["after", "before"],
    });
  });

  test("the protective change: keys rotated, personal and managed vaults rekeyed; only vaults others manage stay open, listed", async () => {
    const w = await world();
    const copy = await copyOf(w.alice);
    // The server shows alice as a mere member of the vault she owns, and of the one she is admin of:
    // the verified rosters decide which vaults she rekeys, not the listing.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === "/vaults"
        ? { vaults: body.vaults.map((v: any) => (v.vaultType === "shared" ? { ...v, role: "member" } : v)) }
        : body;
    const steps: string[] = [];
    const result = await w.alice.changePassword(OLD, "a brand new and long passphrase 7", {
      oldPasswordMayBeKnown: true,
      onProgress: (s) => steps.push(s.phase),
    });
    proxy.edit = honest;
    expect(result.protection!.keyVersion).toBe(2);
    expect(result.protection!.rekeyed.map((v) => v.vaultId).sort()).toEqual([w.personal, w.team, w.managed].sort());
    expect(result.protection!.left).toEqual([expect.objectContaining({ vaultId: w.bobs, reason: "not-a-manager" })]);
    expect(steps).toContain("rotate");
    // What is written after the change: none of it opens with the old password and the old copy, but in the vault bob manages.
    for (const v of [w.personal, w.team]) await w.alice.items.add(v, { name: "after", fields: { password: "s2" } });
    for (const v of [w.bobs, w.managed]) await w.bob.items.add(v, { name: "after", fields: { password: "s2" } });
    expect(await opensNow(copy, w.alice, [w.personal, w.team, w.managed, w.bobs])).toEqual({
      [w.personal]: [],
      [w.team]: [],
      [w.managed]: [],
      [w.bobs]: ["after", "before"],
    });
    // Everything still opens for alice with the new password, on a new device, and for bob.
    const again = through();
    await again.login(w.alice.account.email, "a brand new and long passphrase 7");
    for (const v of [w.personal, w.team, w.managed, w.bobs])
      expect((await again.items.list(v)).map((i) => i.name).sort()).toEqual(["after", "before"]);
    for (const v of [w.team, w.managed]) expect((await w.bob.items.list(v)).map((i) => i.name).sort()).toEqual(["after", "before"]);
  });

  test("interrupted part way, every vault opens with the new password, and resuming finishes it", async () => {
    const w = await world();
    const copy = await copyOf(w.alice);
    // Once the first rekey is in, the server answers the next vault read with another vault's record: the protection stops there.
    const from = proxy.sent.length;
    proxy.edit = (method, path, body) =>
      method === "GET" &&
      /^\/vaults\/[^/]+$/.test(path) &&
      proxy.sent.slice(from).some((s) => s.method === "POST" && /^\/vaults\/[^/]+\/rekey$/.test(s.path))
        ? { ...body, vaultId: randomUUID() }
        : body;
    const err = await w.alice
      .changePassword(OLD, "a brand new and long passphrase 7", { oldPasswordMayBeKnown: true })
      .catch((e: unknown) => e);
    proxy.edit = honest;
    expect(err).toBeInstanceOf(ProtectionInterruptedError);
    const { progress } = err as ProtectionInterruptedError;
    expect(progress.keysRotated?.keyVersion).toBe(2);
    expect(progress.rekeyed).toHaveLength(1);
    // The state it leaves: the new password in force, every vault open with it.
    const other = through();
    await other.login(w.alice.account.email, "a brand new and long passphrase 7");
    for (const v of [w.personal, w.team, w.managed, w.bobs]) expect((await other.items.list(v)).map((i) => i.name)).toEqual(["before"]);
    const result = await w.alice.protect({ resume: progress });
    expect([...progress.rekeyed, ...result.rekeyed.map((v) => v.vaultId)].sort()).toEqual(
      expect.arrayContaining([w.personal, w.team, w.managed].sort()),
    );
    for (const v of [w.personal, w.team]) await w.alice.items.add(v, { name: "after", fields: { password: "s2" } });
    const opened = await opensNow(copy, w.alice, [w.personal, w.team, w.managed]);
    expect(opened).toEqual({ [w.personal]: [], [w.team]: [], [w.managed]: [] });
  });
});
