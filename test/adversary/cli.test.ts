/**
 * A dishonest server against `vaultctl`: the real binary talks to the real service
 * through a proxy that rewrites its answers (test/helpers/dishonest-proxy.ts). Each attack ends in
 * exit 3 with the SDK's named error on stderr, nothing derived from the password or a key is sent,
 * and the service does not change. Alice's machine is set up through the SDK on vaultctl's own
 * state files (its pins, roster heads, KDF parameters and invite secrets), then attacked through
 * the binary. On SQLite and PostgreSQL.
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { CliState } from "../../cli/state";
import { VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { Api, registerUser, sharedVaultBody, type TestUser } from "../helpers/client";
import {
  colluderAs,
  honest,
  startDishonestProxy,
  swapVaultNames,
  writesIn,
  type DishonestProxy,
  type Edit,
} from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { plainShare, TEST_KDF, unsignedVault } from "../helpers/sdk";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { keyStatementOf } from "../helpers/statements";
import { vaultctl, type VaultctlRun } from "../helpers/vaultctl";

jest.setTimeout(120_000);

const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

describe.each(SQL_ENGINES)("a dishonest server against vaultctl, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;
  let alice: VaultClient, bob: VaultClient, carol: VaultClient;
  let eve: TestUser;
  const aliceHome = tempDir("zk-cli-alice-");
  let session: string;

  /** `vaultctl ... --json` as alice, on her machine, through the proxy. */
  const asAlice = (args: string[], input = "") => vaultctl([...args, "--json"], { server: proxy.url, home: aliceHome, session, input });
  const derivedFromPassword = (from: number) =>
    proxy.sent.slice(from).filter((s) => s.method === "POST" && (s.path === "/auth/login" || s.path === "/auth/register"));
  const changes = (from: number) => writesIn(proxy.sent.slice(from)).filter((s) => !s.path.startsWith("/auth/"));

  async function stateOf(vaultId: string) {
    const token = { token: alice.http.currentTokens!.accessToken };
    const parts = await Promise.all(["", "/members", "/items", "/roster"].map((p) => api.get(`/vaults/${vaultId}${p}`, token)));
    return parts.map((r) => r.body);
  }

  /** A command refused with exit 3 and `code`, having sent nothing that changes `vaultId`, which is unchanged. */
  async function refused(vaultId: string, code: string, run: () => Promise<VaultctlRun>): Promise<VaultctlRun> {
    const before = await stateOf(vaultId);
    const from = proxy.sent.length;
    const result = await run();
    expect([result.code, result.error?.code]).toEqual([3, code]);
    expect(changes(from)).toEqual([]);
    expect(await stateOf(vaultId)).toEqual(before);
    return result;
  }

  beforeAll(async () => {
    store = await openStore();
    server = await startTestServer(store.env);
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
    // Alice's machine: vaultctl's state directory, written through the SDK with vaultctl's own stores.
    const state = new CliState(aliceHome);
    const device = {
      pins: state.pins(proxy.url),
      rosterHeads: state.rosterHeads(proxy.url),
      kdfMemory: state.kdfMemory(proxy.url),
      inviteSecrets: state.inviteSecrets(proxy.url),
    };
    alice = new VaultClient({ baseUrl: proxy.url, ...device, onTokens: (t) => state.saveTokens(t) });
    await alice.register({ email: email("alice"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    state.saveLogin({ server: proxy.url, account: alice.account, tokens: alice.http.currentTokens! });
    const bobEmail = email("bob");
    bob = new VaultClient({ baseUrl: proxy.url });
    await bob.register({
      email: bobEmail,
      password: PASSWORD,
      invite: (await alice.invites.create(bobEmail)).link,
      kdf: TEST_KDF,
      rsaBits: 2048,
    });
    const carolEmail = email("carol");
    carol = new VaultClient({ baseUrl: proxy.url });
    await carol.register({
      email: carolEmail,
      password: PASSWORD,
      invite: (await alice.invites.create(carolEmail, "admin")).link,
      kdf: TEST_KDF,
    });
    const eveEmail = email("eve");
    const plain = await api.post("/invites", { token: alice.http.currentTokens!.accessToken, body: { email: eveEmail, role: "member" } });
    eve = await registerUser(api, { inviteToken: plain.body.token, email: eveEmail });
    const unlocked = await vaultctl(["unlock", "--raw"], { server: proxy.url, home: aliceHome, input: `${PASSWORD}\n` });
    expect(unlocked.code).toBe(0);
    session = unlocked.stdout.trim();
  });
  afterEach(() => {
    proxy.edit = honest;
  });
  afterAll(async () => {
    await proxy.close();
    await server.stop();
    await store.drop();
    fs.rmSync(aliceHome, { recursive: true, force: true });
  });

  test("1. a KDF downgrade: `vaultctl login` derives nothing with parameters below the floor, or other than the ones this machine logged in with", async () => {
    const prelogin =
      (replace: (kdf: any) => any): Edit =>
      (method, path, body) =>
        method === "GET" && path === "/auth/prelogin" ? { ...body, kdf: replace(body.kdf) } : body;
    const login = (home: string) => vaultctl(["login", alice.account.email, "--json"], { server: proxy.url, home, input: `${PASSWORD}\n` });
    const newMachine = tempDir("zk-cli-new-");
    for (const [replace, home, code] of [
      [(k: any) => ({ algorithm: "pbkdf2-sha256", salt: k.salt, iterations: 1 }), newMachine, "KDF_TOO_WEAK"],
      [(k: any) => ({ algorithm: "argon2id", salt: k.salt, iterations: 3, memoryKiB: 8, parallelism: 1 }), newMachine, "KDF_TOO_WEAK"],
      [(k: any) => ({ algorithm: "pbkdf2-sha256", salt: k.salt, iterations: 1 }), aliceHome, "KDF_CHANGED"],
      [(k: any) => ({ ...k, salt: toBase64(new Uint8Array(16).fill(3)) }), aliceHome, "KDF_CHANGED"],
    ] as const) {
      proxy.edit = prelogin(replace);
      const from = proxy.sent.length;
      const run = await login(home);
      expect([run.code, run.error?.code]).toEqual([3, code]);
      expect(derivedFromPassword(from)).toEqual([]);
    }
    fs.rmSync(newMachine, { recursive: true, force: true });
    proxy.edit = honest;
    expect((await login(aliceHome)).code).toBe(0);
    session = (await vaultctl(["unlock", "--raw"], { server: proxy.url, home: aliceHome, input: `${PASSWORD}\n` })).stdout.trim();
  });

  test("2. `vault share` by email, the server pairing a pinned colleague's email with a colluder: refused", async () => {
    const team = await alice.vaults.create("CLI team 2", "shared");
    await alice.members.share(team.vaultId, bob.account.userId); // alice's machine pins bob
    await alice.members.remove(team.vaultId, bob.account.userId);
    await alice.vaults.rekey(team.vaultId);
    proxy.edit = colluderAs(bob.account, eve, keyStatementOf({ ...eve, email: bob.account.email }));
    const run = await refused(team.vaultId, "IDENTITY_MISMATCH", () => asAlice(["vault", "share", team.vaultId, bob.account.email]));
    expect(run.error!.message).toContain(`this device pinned ${bob.account.email} as user ${bob.account.userId}`);
    // `vaultctl keys` shows the same entry as not checking out, rather than the server's email as if it did.
    const keys = await vaultctl(["keys", bob.account.email], { server: proxy.url, home: aliceHome, session });
    expect(keys.stdout).toContain(`NOT CHECKED OUT: the server shows ${bob.account.email} for user ${eve.userId}`);
  });

  test("3. vault names swapped: `vault list` flags them, and `item add Private` writes nowhere", async () => {
    const priv = await alice.vaults.create("Private", "personal");
    const team = await alice.vaults.create("Shared stuff", "shared");
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    proxy.edit = swapVaultNames({ vaultId: priv.vaultId, name: "Private" }, { vaultId: team.vaultId, name: "Shared stuff" });
    const listed = await asAlice(["vault", "list"]);
    expect(listed.json.find((v: any) => v.vaultId === team.vaultId)).toMatchObject({
      vaultName: "Shared stuff",
      nameCheck: { status: "mismatch", shown: "Private" },
    });
    const text = await vaultctl(["vault", "list"], { server: proxy.url, home: aliceHome, session });
    expect(text.stdout).toContain(`Shared stuff (!) the server says "Private"`);
    await refused(team.vaultId, "NAME_MISMATCH", () => asAlice(["item", "add", "Private", "Bank", "--field", "pin=4321"]));
    await refused(priv.vaultId, "NAME_MISMATCH", () => asAlice(["item", "add", priv.vaultId, "Bank", "--field", "pin=4321"]));
  });

  test("4. the rekey a removal needs, hidden: nothing is written under the key the removed member holds; `vault remove` rekeys at once", async () => {
    const team = await alice.vaults.create("CLI team 4", "shared");
    await alice.members.share(team.vaultId, bob.account.userId);
    const removed = await asAlice(["vault", "remove", team.vaultId, bob.account.email, "--yes", "--no-rekey"]);
    expect(removed.json).toMatchObject({ rekeyRequired: true });
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}` ? { ...body, rekeyRequired: false } : body;
    await refused(team.vaultId, "REKEY_REQUIRED", () => asAlice(["item", "add", team.vaultId, "New", "--field", "pw=1"]));
    proxy.edit = honest;
    await expect(alice.members.share(team.vaultId, carol.account.userId, "admin")).rejects.toMatchObject({ code: "REKEY_REQUIRED" });
    await alice.vaults.rekey(team.vaultId);
    // By default the remover rekeys right after the removal.
    await alice.members.share(team.vaultId, carol.account.userId, "admin");
    const again = await asAlice(["vault", "remove", team.vaultId, carol.account.email, "--yes"]);
    expect(again.json).toMatchObject({ rekeyRequired: false, rekey: { keyVersion: 3, members: 1 } });
    expect((await asAlice(["item", "add", team.vaultId, "New", "--field", "pw=1"])).code).toBe(0);
  });

  test("5. `vault adopt` of a vault made without a roster: a member the server injected is refused", async () => {
    const old = await unsignedVault(alice, "Old CLI");
    await plainShare(alice, old, carol.account.userId, "admin");
    const evesVault = await api.post("/vaults", { token: eve.token, body: sharedVaultBody(Buffer.alloc(32, 6), eve) });
    const evesEntry = (await api.get(`/vaults/${evesVault.body.vaultId}/members`, { token: eve.token })).body.members[0];
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${old.vaultId}/members`
        ? { members: [...body.members, { ...evesEntry, vaultId: old.vaultId, vaultName: "Old CLI" }] }
        : body;
    const run = await refused(old.vaultId, "MEMBER_LIST_MISMATCH", () =>
      asAlice(["vault", "adopt", old.vaultId, "--member", alice.account.email, "--member", `${carol.account.email}:admin`]),
    );
    expect(run.error!.message).toContain(eve.userId);
    // Writing to it before adopting is refused too.
    proxy.edit = honest;
    await refused(old.vaultId, "UNSIGNED_VAULT", () => asAlice(["item", "add", old.vaultId, "X"]));
    // Carol confirmed as a member, whom the server lists as an admin: the roles are signed too, so they must agree.
    const role = await refused(old.vaultId, "MEMBER_LIST_MISMATCH", () =>
      asAlice(["vault", "adopt", old.vaultId, "--member", alice.account.email, "--member", carol.account.email]),
    );
    expect(role.error!.message).toContain("whom you confirmed as member");
    const adopted = await asAlice([
      "vault",
      "adopt",
      old.vaultId,
      "--member",
      alice.account.email,
      "--member",
      `${carol.account.email}:admin`,
    ]);
    expect(adopted.json).toMatchObject({ seq: 0, members: 2 });
  });

  test("6. an item's ciphertext answered under another item's id, or another item's record in its place: refused", async () => {
    const team = await alice.vaults.create("CLI team 6", "shared");
    const a = await alice.items.add(team.vaultId, { name: "A", fields: { password: "a" } });
    await alice.items.add(team.vaultId, { name: "B", fields: { password: "b" } });
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/items`
        ? {
            ...body,
            items: body.items.map((i: any, _n: number, all: any[]) =>
              i.itemId === a.itemId ? { ...i, encryptedData: all[1].encryptedData, encryptedName: all[1].encryptedName } : i,
            ),
          }
        : body;
    // The signed item log names A's ciphertext digest: caught before anything is decrypted (the associated data would refuse it too).
    await refused(team.vaultId, "ITEM_HASH_MISMATCH", () => asAlice(["item", "get", team.vaultId, a.itemId]));
    // B's whole record in A's place: B shown twice, A gone: refused.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/items`
        ? {
            ...body,
            items: body.items.map((i: any, _n: number, all: any[]) => (i.itemId === a.itemId ? all.find((o) => o.itemId !== a.itemId) : i)),
          }
        : body;
    await refused(team.vaultId, "ITEM_MISMATCH", () => asAlice(["item", "list", team.vaultId]));
  });

  test("7. `register --invite` with a preview that is not what the inviter signed: refused before anything is sent", async () => {
    const danEmail = email("dan");
    const invite = await alice.invites.create(danEmail, "member");
    const danHome = tempDir("zk-cli-dan-");
    for (const lie of [(b: any) => ({ ...b, orgName: "Evil Corp" }), (b: any) => ({ ...b, role: "admin" })]) {
      proxy.edit = (method, path, body) => (method === "POST" && path === "/invites/redeem" ? lie(body) : body);
      const from = proxy.sent.length;
      const check = await vaultctl(["invite", "check", invite.link, "--json"], { server: proxy.url, home: danHome });
      expect([check.code, check.error?.code]).toEqual([3, "INVITE_MISMATCH"]);
      const run = await vaultctl(["register", danEmail, "--invite", invite.link, "--json"], {
        server: proxy.url,
        home: danHome,
        input: `${PASSWORD}\n${PASSWORD}\n`,
      });
      expect([run.code, run.error?.code]).toEqual([3, "INVITE_MISMATCH"]);
      expect(derivedFromPassword(from)).toEqual([]);
    }
    fs.rmSync(danHome, { recursive: true, force: true });
  });

  test("8. an RSA key's self-signature presented as a wrap's signature: refused before anything is unwrapped", async () => {
    const old = await unsignedVault(alice, "Context CLI");
    const publicKeySignature = (await api.get(`/users/${alice.account.userId}/keys`, { token: alice.http.currentTokens!.accessToken })).body
      .publicKeySignature;
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${old.vaultId}`
        ? { ...body, encryptedVaultKey: alice.account.publicKey, wrapSignature: publicKeySignature }
        : body;
    await refused(old.vaultId, "TAMPERED", () => asAlice(["item", "list", old.vaultId]));
    // On a signed vault, the roster names the hash of the one wrap it vouches for: refused before the signature is even looked at.
    const signed = await alice.vaults.create("Context CLI signed", "shared");
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${signed.vaultId}`
        ? { ...body, encryptedVaultKey: alice.account.publicKey, wrapSignature: publicKeySignature }
        : body;
    await refused(signed.vaultId, "WRAP_MISMATCH", () => asAlice(["item", "list", signed.vaultId]));
  });

  test("9. a colleague's signed vault under the name of alice's own, hers hidden: `item add` by that name is refused (NAME_MOVED), once confirmed it says whose it is", async () => {
    const mine = await alice.vaults.create("Passwords CLI", "personal");
    const bobs = await bob.vaults.create("Passwords CLI", "shared");
    await bob.members.share(bobs.vaultId, alice.account.userId);
    expect((await asAlice(["vault", "list"])).code).toBe(0); // alice's machine knows both
    proxy.edit = (method, path, body) =>
      method === "GET" && path === "/vaults" ? { vaults: body.vaults.filter((v: any) => v.vaultId !== mine.vaultId) } : body;
    const before = await stateOf(mine.vaultId);
    const run = await refused(bobs.vaultId, "NAME_MOVED", () => asAlice(["item", "add", "Passwords CLI", "Bank", "--field", "pin=4321"]));
    expect(run.error!.message).toContain(`vaultctl vault forget ${mine.vaultId}`);
    await refused(bobs.vaultId, "NAME_MOVED", () => asAlice(["vault", "list"]));
    expect(await stateOf(mine.vaultId)).toEqual(before);
    // Alice confirms her vault is gone: the name then finds bob's, and vaultctl says who signed it and owns it.
    expect((await asAlice(["vault", "forget", mine.vaultId, "--yes"])).code).toBe(0);
    const added = await vaultctl(["item", "add", "Passwords CLI", "Note", "--field", "x=1"], {
      server: proxy.url,
      home: aliceHome,
      session,
    });
    expect(added.code).toBe(0);
    expect(added.stderr).toContain(`named by ${bob.account.email}, owned by ${bob.account.email}`);
  });

  test("10. members shown as owners: `org people` gives each role as the organization's signed log does, and who signed it", async () => {
    proxy.edit = (method, path, body) =>
      method === "GET" && /^\/orgs\/[^/]+\/members$/.test(path)
        ? { ...body, members: body.members.map((m: any) => (m.userId === alice.account.userId ? m : { ...m, role: "owner" })) }
        : body;
    const from = proxy.sent.length;
    const run = await asAlice(["org", "people"]);
    expect(run.code).toBe(0);
    const people = new Map((run.json as any).people.map((p: any) => [p.userId, p]));
    // Bob and carol joined by invites alice signed: their roles are the log's, signed by her; eve's invite no one signed.
    expect(people.get(bob.account.userId)).toMatchObject({ role: "member", orgLog: "signed", signedBy: alice.account.userId });
    expect(people.get(carol.account.userId)).toMatchObject({ role: "admin", orgLog: "signed", signedBy: alice.account.userId });
    expect(people.get(eve.userId)).toMatchObject({ role: "member", orgLog: "unsigned" });
    expect(changes(from)).toEqual([]);
  });
});
