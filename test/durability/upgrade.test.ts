/**
 * Data from the previous release keeps working: today's server and clients on the data
 * directory and vaultctl state that release left (test/fixtures/previous-release, made by its
 * make.js with that release). Accounts get their statements at their first login; an account
 * registered below today's KDF floor is refused with a clear message; a signed vault's name is
 * flagged until someone signs it; an unsigned vault is read as before and written to only after
 * its owner adopts it; vaultctl's old state (a login, string pins, roster heads) is taken up.
 */
import fs from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { hashToken } from "../../lib/domain/opaque-tokens";
import { VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { deriveAccountSecrets } from "../../protocol/crypto/keys";
import { Api } from "../helpers/client";
import { startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { vaultctl } from "../helpers/vaultctl";

jest.setTimeout(120_000);

const FIXTURE = path.resolve(__dirname, "../fixtures/previous-release");
const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURE, "fixture.json"), "utf8")) as {
  madeWith: string;
  people: Record<"ada" | "bob" | "cy", { email: string; password: string; userId: string }>;
  vaults: Record<"team" | "old" | "private", string>;
};
const { ada: ADA, bob: BOB, cy: CY } = fixture.people;
/** vaultctl's saved login on ada's machine, made by the previous release: tokens from before sessions. */
const savedLogin = JSON.parse(fs.readFileSync(path.join(FIXTURE, "home-ada", "login.json"), "utf8")) as {
  tokens: { accessToken: string; refreshToken: string };
};

describe("upgrading from the previous release's data", () => {
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;
  const dataDir = tempDir("upgrade-data-");
  const adaHome = tempDir("upgrade-ada-home-");
  const asAda = (args: string[], input = "") => vaultctl([...args, "--json"], { server: proxy.url, home: adaHome, input });

  beforeAll(async () => {
    fs.cpSync(path.join(FIXTURE, "data"), dataDir, { recursive: true });
    // Ada's saved login, as if the previous release had issued it today (the fixture's own expires a month after it was made).
    const db = new DatabaseSync(path.join(dataDir, "vault.sqlite"));
    db.prepare("UPDATE refresh_tokens SET expires_at = ? WHERE token_hash = ?").run(
      new Date(Date.now() + 86_400_000).toISOString(),
      hashToken(savedLogin.tokens.refreshToken),
    );
    db.close();
    server = await startTestServer({ DATA_DIR: dataDir });
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
    // vaultctl's state names the server it was made with: the same machine, now talking to this one.
    for (const file of fs.readdirSync(path.join(FIXTURE, "home-ada"))) {
      const text = fs
        .readFileSync(path.join(FIXTURE, "home-ada", file), "utf8")
        .split(fixture.madeWith)
        .join(proxy.url);
      fs.writeFileSync(path.join(adaHome, file), text, { mode: 0o600 });
    }
  });
  afterAll(async () => {
    await proxy.close();
    await server.stop();
    for (const dir of [dataDir, adaHome]) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a login from before sessions is one: listed at once, ended by 'end all others' without ever refreshing; its access token names none and is refused", async () => {
    expect((await api.get("/users/me", { token: savedLogin.tokens.accessToken })).status).toBe(401);
    // Another login of ada's, made here without the SDK (whose first login would sign her statements: the next test's).
    const { kdf } = (await api.get(`/auth/prelogin?email=${encodeURIComponent(ADA.email)}`)).body;
    const { authHash } = await deriveAccountSecrets(ADA.password, kdf);
    const now = (await api.post("/auth/login", { body: { email: ADA.email, authHash: toBase64(authHash), deviceName: "upgrade test" } }))
      .body;
    const listed = (await api.get("/users/me/sessions", { token: now.accessToken })).body.sessions;
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ current: false, deviceName: "signed in before sessions were recorded", address: "unknown" }),
      ]),
    );
    const ended = await api.delete("/users/me/sessions", { token: now.accessToken });
    expect(ended.body.ended).toBeGreaterThanOrEqual(1);
    expect((await api.post("/auth/refresh", { body: { refreshToken: savedLogin.tokens.refreshToken } })).status).toBe(401);
    expect((await api.get("/users/me", { token: now.accessToken })).body.email).toBe(ADA.email);
  });

  test("accounts: each signs its statements at its first login; one registered below today's floor is refused, sending nothing", async () => {
    const keysOf = async (token: string, userId: string) => (await api.get(`/users/${userId}/keys`, { token })).body;
    const ada = new VaultClient({ baseUrl: server.url });
    const bob = new VaultClient({ baseUrl: server.url });
    await bob.login(BOB.email, BOB.password);
    expect(await keysOf(bob.http.currentTokens!.accessToken, ADA.userId)).not.toHaveProperty("keyStatement");
    // The organization has no signed log yet, and a member's session does not start one: clients say so.
    expect(await bob.people.log()).toEqual({ signed: false });
    await ada.login(ADA.email, ADA.password);
    // Its owner's next session adopts it: from then on, roles are the signed log's.
    expect(await bob.people.log()).toMatchObject({ signed: true, seq: 0 });
    expect(await bob.people.findMember(ADA.email)).toMatchObject({ role: "owner", orgLog: "signed", signedBy: ADA.userId });
    expect(await keysOf(bob.http.currentTokens!.accessToken, ADA.userId)).toHaveProperty("keyStatement");
    expect((await api.get(`/auth/prelogin?email=${ADA.email}`)).body.kdfStatement.version).toBe(1);
    // Bob's client now checks ada's statement, and pins her with her email.
    await expect(bob.people.find(ADA.email)).resolves.toMatchObject({ userId: ADA.userId, trust: "first-use" });

    const cy = new VaultClient({ baseUrl: proxy.url });
    const from = proxy.sent.length;
    await expect(cy.login(CY.email, CY.password)).rejects.toMatchObject({
      code: "KDF_TOO_WEAK",
      message: expect.stringContaining("Argon2id over 19456 KiB; at least 65536 KiB"),
    });
    expect(proxy.sent.slice(from).filter((s) => s.path === "/auth/login")).toEqual([]);
  });

  test("vaults: the signed one is read and written, its name flagged until signed; the unsigned one is read, and written after its owner adopts it", async () => {
    const ada = new VaultClient({ baseUrl: server.url });
    await ada.login(ADA.email, ADA.password);
    const bob = new VaultClient({ baseUrl: server.url });
    await bob.login(BOB.email, BOB.password);

    const OLD_MEMBERS = [
      { userId: ADA.userId, role: "owner" as const },
      { userId: BOB.userId, role: "member" as const },
    ];
    const checked = await ada.vaults.listChecked();
    const byId = (id: string) => checked.find((v) => v.vaultId === id)!;
    expect(byId(fixture.vaults.team).nameCheck).toMatchObject({ status: "unverified", name: "Team" });
    expect(byId(fixture.vaults.old).nameCheck).toMatchObject({ status: "unverified", why: "the vault has no signed roster" });
    expect((await ada.items.list(fixture.vaults.team)).map((i) => i.fields)).toEqual([{ username: "acme-bot", password: "team-secret-1" }]);
    expect((await ada.items.list(fixture.vaults.private)).map((i) => i.name)).toEqual(["Bank"]);
    await ada.items.add(fixture.vaults.team, { name: "After the upgrade", fields: { password: "new" } });
    // The signed vault's item log started at the first open (a checkpoint of its one item), and the write is its next link.
    const log = await ada.http.request<{ links: Array<{ op: string; count?: number }> }>("GET", `/vaults/${fixture.vaults.team}/item-log`, {
      query: { from: 0 },
    });
    expect(log.links.map((l) => [l.op, l.count])).toEqual([
      ["checkpoint", 1],
      ["create", undefined],
    ]);
    expect(await bob.vaults.verify(fixture.vaults.team)).toMatchObject({ ok: true, items: { seq: 1, count: 2 } });
    // Renaming it to its own name signs the name into the roster.
    await ada.vaults.rename(fixture.vaults.team, "Team");
    expect((await bob.vaults.getChecked(fixture.vaults.team)).nameCheck).toEqual({ status: "verified", name: "Team" });

    expect((await bob.items.list(fixture.vaults.old)).map((i) => i.fields)).toEqual([{ password: "old-secret-2" }]);
    await expect(ada.items.add(fixture.vaults.old, { name: "x", fields: {} })).rejects.toMatchObject({ code: "UNSIGNED_VAULT" });
    await expect(bob.members.adoptRoster(fixture.vaults.old, { members: OLD_MEMBERS })).rejects.toMatchObject({ status: 403 });
    const adopted = await ada.members.adoptRoster(fixture.vaults.old, { members: OLD_MEMBERS, name: "Old" });
    expect(adopted.state).toMatchObject({ name: "Old", keyVersion: 2 });
    await ada.items.add(fixture.vaults.old, { name: "Adopted", fields: { password: "fresh" } });
    expect((await bob.items.list(fixture.vaults.old)).map((i) => i.name).sort()).toEqual(["Adopted", "Wiki"]);
    expect(await bob.vaults.verify(fixture.vaults.old)).toMatchObject({ ok: true, roster: { seq: 0 } });
  });

  test("vaultctl's old state: its login's KDF parameters are remembered, its string pins and roster heads still hold", async () => {
    // The machine logged in with the previous release: a salt the server now chose is refused, before anything is derived.
    proxy.edit = (method, p, body) =>
      method === "GET" && p === "/auth/prelogin" ? { ...body, kdf: { ...body.kdf, salt: toBase64(new Uint8Array(16).fill(1)) } } : body;
    const from = proxy.sent.length;
    const refused = await asAda(["login", ADA.email], `${ADA.password}\n`);
    expect([refused.code, refused.error?.code]).toEqual([3, "KDF_CHANGED"]);
    expect(proxy.sent.slice(from).filter((s) => s.path === "/auth/login")).toEqual([]);
    proxy.edit = (_m, _p, body) => body;
    expect((await asAda(["login", ADA.email], `${ADA.password}\n`)).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(adaHome, "kdf.json"), "utf8"))[proxy.url][ADA.email].kdf).toMatchObject({
      algorithm: "argon2id",
      memoryKiB: 65536,
    });
    // Bob's and cy's keys were pinned as bare fingerprints; they still match, and now carry their emails.
    const keys = await asAda(["keys", BOB.email]);
    expect(keys.json).toMatchObject({ email: BOB.email, trust: "first-use" });
    expect(keys.json.pinned).toBe(keys.json.fingerprint);
    // Cy has not logged in since statements came (her KDF is below the floor): her email is the server's word, and vaultctl says so.
    const cys = await vaultctl(["keys", CY.email], { server: proxy.url, home: adaHome });
    expect(cys.stdout).toContain(`${CY.email} has not signed their email and keys yet`);
    expect((await asAda(["keys", CY.email])).json).toMatchObject({ stated: false });
    expect((await asAda(["keys", BOB.email])).json).toMatchObject({ stated: true });
    const listed = await asAda(["item", "list", fixture.vaults.team], `${ADA.password}\n`);
    expect(listed.json.map((i: any) => i.name)).toContain("GitHub");
    const pins = JSON.parse(fs.readFileSync(path.join(adaHome, "pins.json"), "utf8"))[proxy.url];
    expect(pins[BOB.userId]).toMatchObject({ email: BOB.email });
    // The roster head it saw (link 2) still guards the team vault against a rollback.
    proxy.edit = (method, p, body) =>
      method === "GET" && p === `/vaults/${fixture.vaults.team}/roster` ? { links: body.links.slice(0, 2) } : body;
    const rolledBack = await asAda(["item", "list", fixture.vaults.team], `${ADA.password}\n`);
    expect([rolledBack.code, rolledBack.error?.code]).toEqual([3, "ROSTER_ROLLBACK"]);
    proxy.edit = (_m, _p, body) => body;
  });

  test("keys: bob, registered by the previous release, rotates his keys; ada's vaultctl, with the bare pin that release kept, follows his signed log", async () => {
    const bob = new VaultClient({ baseUrl: server.url });
    await bob.login(BOB.email, BOB.password);
    const before = await asAda(["keys", BOB.email]);
    // His log, before any rotation, is the keys he registered with under the previous release.
    expect((await bob.keys.log(BOB.userId)).map((e) => e.fingerprint)).toEqual([before.json.fingerprint]);
    const rotated = await bob.keys.rotate();
    expect(rotated.keyVersion).toBe(2);
    // Ada's old pin (a bare fingerprint) leads through his signed step to the new keys: no warning, the pin moves.
    const listed = await asAda(["item", "list", fixture.vaults.team], `${ADA.password}\n`);
    expect(listed.code).toBe(0);
    const after = await asAda(["keys", BOB.email]);
    expect(after.json).toMatchObject({ fingerprint: rotated.fingerprint, pinned: rotated.fingerprint });
    const log = await asAda(["keys", "log", BOB.email]);
    expect(log.json.map((e: { version: number; fingerprint: string }) => [e.version, e.fingerprint])).toEqual([
      [1, before.json.fingerprint],
      [2, rotated.fingerprint],
    ]);
    // Bob, on a new device, opens what the previous release shared with him.
    const fresh = new VaultClient({ baseUrl: server.url });
    await fresh.login(BOB.email, BOB.password);
    expect((await fresh.items.list(fixture.vaults.team)).map((i) => i.fields.password)).toContain("team-secret-1");
  });
});
