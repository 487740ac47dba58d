/**
 * Findings of the security audit, each probed over HTTP the way an
 * attacker would, against a real server: real headers, real bodies, real concurrency.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { clientAddress } from "../../lib/http/client-address";
import { DEFAULT_ARGON2ID } from "../../protocol/crypto/keys";
import { VaultClient } from "../../sdk";
import { decryptItem, encryptItem } from "../helpers/crypto";
import { Api, newOrg, sharedVault, sharedVaultBody, type TestUser } from "../helpers/client";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { sleep } from "../helpers/wait";

let server: TestServer;
let api: Api;
let owner: TestUser;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATION_MODE: "open" }); // a second organization for the cross-vault probes
  api = new Api(server.url);
  ({ owner } = await newOrg(api));
});
afterAll(() => server.stop());

describe("OPTIONS runs no action", () => {
  test("an OPTIONS request naming POST with a vault body creates nothing; it gets the path's methods", async () => {
    const before = (await api.get("/vaults", { token: owner.token })).body.vaults.length;
    const res = await api.call("OPTIONS", "/vaults", {
      token: owner.token,
      headers: { "access-control-request-method": "POST", origin: "https://evil.example" },
      body: sharedVaultBody(randomBytes(32), owner, "smuggled"),
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, POST, OPTIONS");
    expect((await api.get("/vaults", { token: owner.token })).body.vaults).toHaveLength(before);
  });

  test("an OPTIONS request naming DELETE on a vault leaves the vault; an unknown path is 404", async () => {
    const created = await api.post("/vaults", { token: owner.token, body: sharedVaultBody(randomBytes(32), owner, "kept") });
    expect(created.status).toBe(201);
    const res = await api.call("OPTIONS", `/vaults/${created.body.vaultId}`, {
      token: owner.token,
      headers: { "access-control-request-method": "DELETE" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, PATCH, DELETE, OPTIONS");
    expect((await api.get(`/vaults/${created.body.vaultId}`, { token: owner.token })).status).toBe(200);
    const unknown = await api.call("OPTIONS", "/nothing-here", { headers: { "access-control-request-method": "GET" } });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "NOT_FOUND"]);
    // A method the path does not declare reaches no action either.
    for (const method of ["PUT", "DELETE", "PATCH", "PROPFIND"]) {
      expect([
        method,
        (await api.call(method, "/vaults", { token: owner.token, body: sharedVaultBody(randomBytes(32), owner, "x") })).status,
      ]).toEqual([method, 404]);
    }
    expect((await api.call("POST", `/vaults/${created.body.vaultId}`, { token: owner.token, body: {} })).status).toBe(404);
    expect((await api.get(`/vaults/${created.body.vaultId}`, { token: owner.token })).status).toBe(200);
  });
});

describe("headers", () => {
  test("every answer, tokens and keys above all, says no-store and nosniff", async () => {
    const login = await api.post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } });
    const keys = await api.get(`/users/${owner.userId}/keys`, { token: owner.token });
    const missing = await api.get("/no-such-route");
    const refused = await api.get("/vaults");
    for (const res of [login, keys, missing, refused]) {
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    expect([login.status, keys.status, missing.status, refused.status]).toEqual([200, 200, 404, 401]);
  });

  test("a client's request id is echoed only when short and plain; markup gets a new id instead", async () => {
    const plain = await api.get("/health", { headers: { "x-request-id": "req-42.a_b" } });
    expect(plain.headers.get("x-request-id")).toBe("req-42.a_b");
    const markup = `<script>alert(1)</script>${"<b>x</b>".repeat(400)}`;
    for (const header of ["x-request-id", "x-correlation-id"]) {
      const res = await api.get("/health", { headers: { [header]: markup } });
      const echoed = res.headers.get("x-request-id") ?? "";
      expect(echoed).not.toContain("<");
      expect(echoed).toMatch(/^[0-9a-f]{16}$/);
    }
  });
});

describe("files of the embedded store", () => {
  test("the database, its WAL and the signing key are owner-only even in a folder that others may read", async () => {
    const dir = tempDir("vault-perm-");
    fs.chmodSync(dir, 0o755);
    const oldUmask = process.umask(0o022);
    const own = await startTestServer({ DATA_DIR: dir });
    try {
      const ownApi = new Api(own.url);
      await newOrg(ownApi); // writes, so the WAL exists
      const modes = ["vault.sqlite", "vault.sqlite-wal", "jwt-secret"]
        .filter((f) => fs.existsSync(path.join(dir, f)))
        .map((f) => [f, (fs.statSync(path.join(dir, f)).mode & 0o777).toString(8)]);
      expect(modes.map(([f]) => f)).toEqual(expect.arrayContaining(["vault.sqlite", "jwt-secret"]));
      for (const [, mode] of modes) expect(mode).toBe("600");
    } finally {
      process.umask(oldUmask);
      await own.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("deeply nested JSON", () => {
  test("400,000 nested arrays in a login or a rekey body: 400 INVALID, never a 500, and no ERROR line", async () => {
    const errors: string[] = [];
    const gateway = server.node.broker.getLocalService("api") as unknown as { logger: { error: (...a: unknown[]) => void } };
    const spy = jest.spyOn(gateway.logger, "error").mockImplementation((...a: unknown[]) => void errors.push(a.join(" ")));
    try {
      const deep = `${"[".repeat(400_000)}${"]".repeat(400_000)}`;
      const login = await api.post("/auth/login", { raw: `{"email": ${deep}, "authHash": "AAAA"}` });
      expect([login.status, login.body.error.code]).toEqual([400, "INVALID"]);
      const created = await api.post("/vaults", { token: owner.token, body: sharedVaultBody(randomBytes(32), owner, "deep") });
      const rekey = await api.post(`/vaults/${created.body.vaultId}/rekey`, {
        token: owner.token,
        raw: `{"newKeys": ${deep}, "items": []}`,
      });
      expect([rekey.status, rekey.body.error.code]).toEqual([400, "INVALID"]);
      // A body of ordinary depth still goes through to its checks.
      const shallow = await api.post("/auth/login", { body: { email: [[["x"]]], authHash: "AAAA" } });
      expect(shallow.status).toBe(400);
      expect((await api.get("/health")).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
    expect(errors).toEqual([]);
  });
});

describe("X-Forwarded-For behind TRUST_PROXY", () => {
  test("rotating the entries a client writes does not beat the redeem limit; the address the proxy appended counts", async () => {
    const proxied = await startTestServer({ TRUST_PROXY: "1", REDEEM_RATE_LIMIT: "3" });
    try {
      const p = new Api(proxied.url);
      const redeem = (forwardedFor: string) =>
        p.post("/invites/redeem", { body: { token: "x".repeat(43) }, headers: { "x-forwarded-for": forwardedFor } });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await redeem(`10.9.8.${i}, 203.0.113.7`)).status);
      expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
      expect(statuses.slice(3)).toEqual([429, 429, 429]);
      // Another client, as the proxy saw it, has its own budget.
      expect((await redeem("10.9.8.1, 198.51.100.4")).status).not.toBe(429);
    } finally {
      await proxied.stop();
    }
  });

  test("the client address: the entry that many proxies from the right, else the socket's", () => {
    expect(clientAddress("127.0.0.1", "1.1.1.1, 2.2.2.2, 3.3.3.3", 1)).toBe("3.3.3.3");
    expect(clientAddress("127.0.0.1", "1.1.1.1, 2.2.2.2, 3.3.3.3", 2)).toBe("2.2.2.2");
    expect(clientAddress("127.0.0.1", "3.3.3.3", 2)).toBe("127.0.0.1"); // fewer entries than proxies
    expect(clientAddress("127.0.0.1", "1.1.1.1, <script>", 1)).toBe("127.0.0.1"); // not an address
    expect(clientAddress("127.0.0.1", "1.1.1.1", 0)).toBe("127.0.0.1"); // no proxy trusted
    expect(clientAddress("127.0.0.1", ["1.1.1.1", "2001:db8::1"], 1)).toBe("2001:db8::1");
  });
});

describe.each([
  ["in-process counters", {}],
  ["Redis counters", { REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379" }],
])("a burst of logins for one email (%s)", (_name, env: Record<string, string>) => {
  test("40 at once, 39 wrong and 1 right: at most LOGIN_MAX_FAILURES of them are compared, the rest 429", async () => {
    const limited = await startTestServer({ ...env, NAMESPACE: `sec-${randomBytes(4).toString("hex")}`, LOGIN_MAX_FAILURES: "10" });
    try {
      const p = new Api(limited.url);
      const { owner: victim } = await newOrg(p);
      const wrong = (i: number) => Buffer.alloc(32, i + 1).toString("base64");
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          p.post("/auth/login", { body: { email: victim.email, authHash: i === 20 ? victim.bundle.authHash : wrong(i) } }),
        ),
      );
      const statuses = replies.map((r) => r.status);
      const compared = statuses.filter((s) => s !== 429);
      expect(compared.length).toBeLessThanOrEqual(10);
      expect(compared.every((s) => s === 401 || s === 200)).toBe(true);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40 - compared.length);
      for (const r of replies.filter((x) => x.status === 429)) expect(r.body.error.code).toBe("RATE_LIMITED");
    } finally {
      await limited.stop();
    }
  });

  test("logins one at a time: a success gives its attempt back, so only failures use up the window", async () => {
    const limited = await startTestServer({ ...env, NAMESPACE: `sec-${randomBytes(4).toString("hex")}`, LOGIN_MAX_FAILURES: "3" });
    try {
      const p = new Api(limited.url);
      const { owner: user } = await newOrg(p);
      const right = () => p.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } });
      const wrong = () => p.post("/auth/login", { body: { email: user.email, authHash: Buffer.alloc(32, 7).toString("base64") } });
      const seq: number[] = [];
      for (let i = 0; i < 5; i++) seq.push((await right()).status);
      for (let i = 0; i < 4; i++) seq.push((await wrong()).status);
      seq.push((await right()).status);
      expect(seq).toEqual([200, 200, 200, 200, 200, 401, 401, 401, 429, 429]);
    } finally {
      await limited.stop();
    }
  });
});

describe("emails", () => {
  test("invisible (format and control) characters and mixed scripts are refused, wherever they are; compatibility forms are one address", async () => {
    const tag = String(randomBytes(4).readUInt32BE()); // digits: they belong to every script
    const refused = [
      `an\u00adn-${tag}@example.test`,
      `ann-${tag}@exa\u2060mple.test`,
      `a\u200cnn-${tag}@example.test`,
      `ann-${tag}\u200d@example.test`,
      `ann-${tag}@example.test\u202e`,
      `\u0440ay\u0440al-${tag}@example.test`,
      `paypal-${tag}@ex\u0430mple.test`,
      `ann-${tag}@\ue000.test`,
    ];
    for (const email of refused) {
      const invite = await api.post("/invites", { token: owner.token, body: { email, role: "member" } });
      expect([email, invite.status, invite.body.error?.code, invite.body.error?.field]).toEqual([email, 400, "INVALID", "email"]);
      const login = await api.post("/auth/login", { body: { email, authHash: owner.bundle.authHash } });
      expect([email, login.status]).toEqual([email, 400]);
    }
    // One script, any script: accepted.
    for (const email of [
      `\u043f\u0440\u0438\u043c\u0435\u0440-${tag}@example.test`,
      `\u03b1\u03b2\u03b3-${tag}@example.test`,
      `\u5c71\u7530\u3072\u308d-${tag}@example.test`,
    ]) {
      expect([email, (await api.post("/invites", { token: owner.token, body: { email, role: "member" } })).status]).toEqual([email, 201]);
    }
    // Full-width letters are the same address as their plain form.
    const wide = await api.post("/invites", {
      token: owner.token,
      body: { email: `\uff57\uff49\uff44\uff45-${tag}@example.test`, role: "member" },
    });
    expect(wide.status).toBe(201);
    const listed = (await api.get(`/invites?orgId=${owner.orgId}`, { token: owner.token })).body.map((i: any) => i.email);
    expect(listed).toContain(`wide-${tag}@example.test`);
  });
});

describe("prelogin", () => {
  test("an unknown email answers exactly like a user the SDK registered: same fields, order, values and salt form, and a KDF statement of the same form; stable per address", async () => {
    const email = `sdk-user-${randomBytes(3).toString("hex")}@example.test`;
    const inv = await api.post("/invites", { token: owner.token, body: { email, role: "member" } });
    // Registered by the SDK itself: its defaults, its signed KDF statement.
    const sdkUser = new VaultClient({ baseUrl: server.url });
    await sdkUser.register({ email, password: "correct horse battery staple", invite: inv.body.token, rsaBits: 2048 });
    const sdkKdf = sdkUser.account.kdf;
    const realAnswer = (await api.get(`/auth/prelogin?email=${encodeURIComponent(email)}`)).body;
    const unknownEmail = `nobody-${randomBytes(3).toString("hex")}@example.test`;
    const fakeAnswer = (await api.get(`/auth/prelogin?email=${encodeURIComponent(unknownEmail)}`)).body;
    expect(Object.keys(fakeAnswer)).toEqual(Object.keys(realAnswer));
    expect(Object.keys(realAnswer.kdfStatement)).toEqual(["version", "signature"]);
    expect(Object.keys(fakeAnswer.kdfStatement)).toEqual(["version", "signature"]);
    expect([fakeAnswer.kdfStatement.version, realAnswer.kdfStatement.version]).toEqual([1, 1]);
    expect(Buffer.from(fakeAnswer.kdfStatement.signature, "base64")).toHaveLength(64);
    expect(Buffer.from(realAnswer.kdfStatement.signature, "base64")).toHaveLength(64);
    expect((await api.get(`/auth/prelogin?email=${encodeURIComponent(unknownEmail)}`)).body).toEqual(fakeAnswer);
    const [real, fake] = [realAnswer.kdf, fakeAnswer.kdf];
    expect(real).toEqual(sdkKdf);
    expect(real).toMatchObject(DEFAULT_ARGON2ID);
    expect(Object.keys(fake)).toEqual(Object.keys(real));
    expect({ ...fake, salt: undefined }).toEqual({ ...real, salt: undefined });
    expect(Buffer.from(fake.salt, "base64")).toHaveLength(16);
    expect(fake.salt).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(real.salt).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect((await api.get(`/auth/prelogin?email=${encodeURIComponent(unknownEmail)}`)).body.kdf).toEqual(fake);
  });
});

describe("item ids", () => {
  test("an id taken in a vault the caller cannot see answers like a fresh one (201), and each vault keeps its own item", async () => {
    const { owner: outsider } = await newOrg(api);
    const theirs = await sharedVault(api, owner, [], "theirs");
    const mine = await sharedVault(api, outsider, [], "mine");
    const itemId = randomUUID();
    const post = (v: { vaultId: string; vaultKey: Buffer }, who: TestUser, id: string, data: string) =>
      api.post(`/vaults/${v.vaultId}/items`, { token: who.token, body: encryptItem(v.vaultKey, v.vaultId, id, data, "router") });
    expect((await post(theirs, owner, itemId, "theirs")).status).toBe(201);
    const probe = await post(mine, outsider, itemId, "mine");
    const fresh = await post(mine, outsider, randomUUID(), "x");
    expect([probe.status, fresh.status]).toEqual([201, 201]);
    // Each vault holds its own item under the id, opened with its own key; the same id twice in one vault is still a conflict.
    expect(
      decryptItem(theirs.vaultKey, (await api.get(`/vaults/${theirs.vaultId}/items/${itemId}`, { token: owner.token })).body).data,
    ).toBe("theirs");
    expect(
      decryptItem(mine.vaultKey, (await api.get(`/vaults/${mine.vaultId}/items/${itemId}`, { token: outsider.token })).body).data,
    ).toBe("mine");
    expect((await post(mine, outsider, itemId, "again")).status).toBe(409);
    expect((await api.delete(`/vaults/${mine.vaultId}/items/${itemId}`, { token: outsider.token })).status).toBe(204);
    expect((await api.get(`/vaults/${theirs.vaultId}/items/${itemId}`, { token: owner.token })).status).toBe(200);
  });
});

describe("large bodies held at once", () => {
  test("a user's second rekey while the first is read waits its turn: served when the first ends in time, else 429 with Retry-After", async () => {
    const capped = await startTestServer({ REKEY_CONCURRENCY: "1" });
    try {
      const p = new Api(capped.url);
      const { owner: o } = await newOrg(p);
      const created = await p.post("/vaults", { token: o.token, body: sharedVaultBody(randomBytes(32), o, "v") });
      const url = `${capped.url}/vaults/${created.body.vaultId}/rekey`;
      const headers = { authorization: `Bearer ${o.token}`, "content-type": "application/json" };
      let finish: () => void = () => undefined;
      const slow = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"newKeys": [], "items": [], "pad": "'));
          finish = () => {
            c.enqueue(new TextEncoder().encode('"}'));
            c.close();
          };
        },
      });
      const first = fetch(url, { method: "POST", headers, body: slow, duplex: "half" } as RequestInit);
      await sleep(300); // the first is being read
      const second = await p.post(`/vaults/${created.body.vaultId}/rekey`, { token: o.token, body: { newKeys: [], items: [] } });
      // The user's share (the one slot) stays taken past the wait: asked to slow down, not told the service is down.
      expect([second.status, second.body.error.code, second.headers.get("retry-after")]).toEqual([429, "RATE_LIMITED", "1"]);
      // Sent while the first is still read, and the first ends within the wait: served in turn.
      const inTurn = p.post(`/vaults/${created.body.vaultId}/rekey`, { token: o.token, body: { newKeys: [], items: [] } });
      await sleep(300);
      finish();
      expect([(await inTurn).status, (await inTurn).body.error.code]).toEqual([400, "INVALID"]);
      expect((await first).status).toBe(400); // read to its end, then refused for its fields
      const third = await p.post(`/vaults/${created.body.vaultId}/rekey`, { token: o.token, body: { newKeys: [], items: [] } });
      expect([third.status, third.body.error.code]).toEqual([400, "INVALID"]);
    } finally {
      await capped.stop();
    }
  });
});
