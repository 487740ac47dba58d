/**
 * Bad input on every route of lib/http/routes/: malformed JSON, wrong types, invalid base64,
 * bad ids in paths, lists and objects in query strings, oversized bodies, bad tokens. Always a
 * 4xx with the error body, never a 5xx, and the process stays up. Against the server as shipped
 * (dist/bin/server.js and its pack, as `npm start` runs it): what a user meets is what is tested.
 */
import { randomUUID } from "node:crypto";
import { ROUTES, type RouteDef } from "../../lib/http/routes";
import { Api, invite, newOrg, sharedVault, type Reply, type TestUser } from "../helpers/client";
import { encryptItem } from "../helpers/crypto";
import { killAllServers, startShippedServer, type ShippedServer } from "../helpers/process";

const FIELDS = [
  "name",
  "type",
  "encryptedVaultKey",
  "wrapSignature",
  "recipientUserId",
  "role",
  "newKeys",
  "items",
  "keyVersion",
  "encryptedData",
  "encryptedName",
  "itemId",
  "revision",
  "email",
  "authHash",
  "kdf",
  "publicKey",
  "signingPublicKey",
  "publicKeySignature",
  "encryptedPrivateKey",
  "encryptedSigningPrivateKey",
  "inviteToken",
  "orgName",
  "token",
  "refreshToken",
  "expiresIn",
  "orgId",
  "userId",
  "vaultId",
  "keyStatement",
  "kdfStatement",
  "inviteBinding",
  "statement",
  "rosterLink",
];
const WEIRD: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e308,
  true,
  "",
  " ",
  "\u0000",
  "é\u202e",
  "x".repeat(5000),
  "%%%",
  "AAA=",
  "AAAA====",
  [],
  [null],
  [{}],
  [{ userId: 1, encryptedVaultKey: [], wrapSignature: {} }],
  {},
  { algorithm: "argon2id", salt: 1 },
  { __proto__: { admin: true } },
  "00000000-0000-0000-0000-000000000000",
];
const BAD_IDS = ["not-a-uuid", "123", "..%2F..%2Fetc", "%00", "x".repeat(300), "00000000-0000-0000-0000-00000000000g"];

/** Never a 5xx; any refusal carries the contract's error body. */
function expectNoServerError(res: Reply, what: string): void {
  if (res.status >= 500) throw new Error(`${what}: got ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status >= 400)
    expect(res.body).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
}

function expectClientError(res: Reply, what: string): void {
  if (res.status >= 500 || !(res.status >= 400 && res.status < 500)) {
    throw new Error(`${what}: expected a 4xx, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  expect(res.body).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
}

// A failed test must not leave a server behind.
afterAll(killAllServers);

describe("bad input on every route", () => {
  let server: ShippedServer;
  let api: Api;
  let owner: TestUser, member: TestUser;
  let ids: Record<string, string>;
  /** A second login of the owner's, for logout: whatever refresh token it is given, logout ends the session its access token names. */
  let logoutToken: string;

  beforeAll(async () => {
    server = await startShippedServer({ REDEEM_RATE_LIMIT: "100000" });
    api = new Api(server.url);
    const org = await newOrg(api, ["member"]);
    owner = org.owner;
    [member] = org.users as [TestUser];
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    const itemId = randomUUID();
    await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, "a", "b") });
    const inv = await invite(api, owner);
    // Real ids, so that bad bodies reach the code behind the existence checks.
    const recovery = await api.post("/recovery/requests", { body: { email: owner.email, publicKey: owner.bundle.publicKey } });
    ids = {
      vaultId,
      itemId,
      userId: member.userId,
      orgId: owner.orgId,
      inviteId: inv.inviteId,
      requestId: recovery.body.requestId,
      factorId: "00000000-0000-4000-8000-000000000000",
      // An upload begun on the item, so that bad chunk bodies reach the code behind its checks.
      attachmentId: (await api.post(`/vaults/${vaultId}/items/${itemId}/attachments`, { token: owner.token, body: { size: 10 } })).body
        .attachmentId,
      index: "0",
      // No such grant: a bad body is refused before the lookup, a good one after it.
      grantId: randomUUID(),
      // An unfinished send of the owner's, so that bad part bodies reach the code behind its checks.
      sendId: (
        await api.post("/sends", {
          token: owner.token,
          body: { sendId: randomUUID(), parts: 2, bytes: 4096, ownerNote: "AAAA", accessProof: "A".repeat(43) + "=" },
        })
      ).body.sendId,
    };
    logoutToken = (await api.post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } })).body.accessToken;
  });
  afterAll(() => server?.stop());

  const pathOf = (r: RouteDef, override?: string) => r.path.replace(/:(\w+)/g, (_, name: string) => override ?? ids[name]!);
  const tokenFor = (r: RouteDef) => (r.public ? undefined : owner.token);
  const withBody = ROUTES.filter((r) => r.method !== "DELETE" && r.method !== "GET");
  /** A route's body fields (not its path's), and three it does not take (STRICT routes refuse them, the others ignore them). */
  const probedFields = (r: RouteDef) => {
    const own = Object.keys(r.params ?? {}).filter((k) => !k.startsWith("$$") && !r.path.includes(`:${k}`));
    return [...own, ...FIELDS.filter((f) => !own.includes(f)).slice(0, 3)];
  };

  test("malformed JSON is 400 INVALID on every route that takes a body", async () => {
    for (const r of withBody) {
      for (const raw of ["{bad", '{"a":', "[1,2]", '"text"', "null", "123", "\u0000"]) {
        const res = await api.call(r.method, pathOf(r), { token: tokenFor(r), raw });
        expectClientError(res, `${r.method} ${r.path} ${JSON.stringify(raw)}`);
        expect(res.body.error.code).toBe("INVALID");
      }
    }
  });

  test("wrong types and odd values in every field a route takes, and in fields it does not, never cause a 5xx", async () => {
    const calls: Array<() => Promise<void>> = [];
    let refused = 0;
    let counted = 0;
    // A route that takes no body fields (a TOTP setup, a WebAuthn challenge) ignores whatever is sent: it is not counted as refusing.
    const takesFields = (r: RouteDef) => Object.keys(r.params ?? {}).some((k) => !k.startsWith("$$") && !r.path.includes(`:${k}`));
    // The streamed-body routes (a rekey, an import) go one at a time: a user's second body in
    // flight is refused at once with 503 and Retry-After by design (a quarter of REKEY_CONCURRENCY's
    // slots a user), whatever it holds; on a slow machine ten bad bodies at once overlap.
    const streamed: typeof calls = [];
    for (const r of withBody) {
      for (const field of probedFields(r)) {
        for (const value of WEIRD) {
          (r.streamBody ? streamed : calls).push(async () => {
            const token = r.action === "auth.logout" ? logoutToken : tokenFor(r);
            const res = await api.call(r.method, pathOf(r), { token, body: { [field]: value } });
            expectNoServerError(res, `${r.method} ${r.path} ${field}=${JSON.stringify(value)?.slice(0, 40)}`);
            if (!takesFields(r)) return;
            counted++;
            if (res.status >= 400) refused++;
          });
        }
      }
    }
    // Ten requests in flight at a time.
    for (let i = 0; i < calls.length; i += 10) await Promise.all(calls.slice(i, i + 10).map((c) => c()));
    for (const c of streamed) await c();
    expect(calls.length + streamed.length).toBeGreaterThan(3000);
    // A single odd field is almost always refused (logout with any string is a valid 204, which ends its own session).
    expect(refused).toBeGreaterThan(counted * 0.98);
  }, 180_000);

  test("a malformed id in the path is 404 NOT_FOUND", async () => {
    for (const r of ROUTES.filter((x) => x.path.includes(":"))) {
      for (const bad of BAD_IDS) {
        const res = await api.call(r.method, pathOf(r, bad), {
          token: owner.token,
          body: r.method === "GET" || r.method === "DELETE" ? undefined : {},
        });
        expectClientError(res, `${r.method} ${r.path} with ${bad}`);
        expect([res.status, res.body.error.code]).toEqual([404, "NOT_FOUND"]);
      }
    }
  });

  test("odd query strings are refused cleanly", async () => {
    for (const q of [
      "/invites?orgId[]=a&orgId[]=b",
      "/invites?orgId[x]=1",
      "/auth/prelogin?email[a]=b",
      "/auth/prelogin",
      "/auth/prelogin?email=%E0%A4%A",
      "/vaults?x=%",
    ]) {
      const res = await api.get(q, { token: owner.token });
      expect(res.status).toBeLessThan(500);
    }
  });

  test("a query parameter given as a list or an object is 400 INVALID naming it, on every route that reads one", async () => {
    // The query's own values for the routes' required parameters, so that the one under test is the one refused.
    const valid: Record<string, string> = { orgId: owner.orgId, email: owner.email };
    const queried = ROUTES.filter((r) => r.method === "GET").flatMap((r) =>
      Object.keys(r.params ?? {})
        .filter((k) => !k.startsWith("$$") && !r.path.includes(`:${k}`))
        .map((name) => ({ r, name, required: Object.keys(r.params ?? {}).filter((k) => k in valid && k !== name) })),
    );
    // Every kind of query parameter: numbers (limit, since, from, before), ids, emails, cursors.
    expect(new Set(queried.map((q) => q.name))).toEqual(
      new Set(["limit", "after", "since", "from", "before", "orgId", "email", "knownSigningKey", "itemId"]),
    );
    for (const { r, name, required } of queried) {
      const base = required.map((k) => `${k}=${encodeURIComponent(valid[k]!)}`);
      for (const bad of [`${name}[]=1`, `${name}[x]=1`, `${name}=1&${name}=2`]) {
        const res = await api.get(`${pathOf(r)}?${[...base, bad].join("&")}`, { token: tokenFor(r) });
        expect([`${r.path}?${bad}`, res.status, res.body.error?.code, res.body.error?.field]).toEqual([
          `${r.path}?${bad}`,
          400,
          "INVALID",
          name,
        ]);
      }
    }
  });

  test("bodies over 1 MiB are 413 PAYLOAD_TOO_LARGE", async () => {
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024) });
    for (const r of withBody.filter((x) => !x.streamBody)) {
      const res = await api.call(r.method, pathOf(r), { token: tokenFor(r), raw: big });
      expect([res.status, res.body.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    }
    // The rekey route takes large bodies: 1 MiB is checked for its meaning, not refused for its size.
    const rekey = await api.post(`/vaults/${ids.vaultId}/rekey`, { token: owner.token, raw: big });
    expect([rekey.status, rekey.body.error.code]).toEqual([400, "INVALID"]);
  });

  test("every route that needs a token answers 401 without one, or with a bad one, before looking at the body", async () => {
    for (const r of ROUTES.filter((x) => !x.public)) {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: "Bearer" },
        { authorization: "Bearer a.b.c" },
        { authorization: `Bearer ${owner.token}x` },
        { authorization: "Token abc" },
      ]) {
        const res = await api.call(r.method, pathOf(r), { headers, raw: r.method === "GET" || r.method === "DELETE" ? undefined : "{bad" });
        expect([`${r.method} ${r.path}`, res.status, res.body.error.code]).toEqual([`${r.method} ${r.path}`, 401, "UNAUTHORIZED"]);
      }
    }
  });

  test("unknown routes are 404 with or without a token; no internal route is exposed", async () => {
    for (const path of [
      "/nope",
      "/~node/options",
      "/~node/health",
      "/$node/list",
      "/list-aliases",
      "/api/list-aliases",
      "/vaults/x/y/z/w",
      "/auth",
    ]) {
      for (const token of [undefined, owner.token]) {
        const res = await api.get(path, { token });
        expect([path, res.status, res.body.error.code]).toEqual([path, 404, "NOT_FOUND"]);
      }
    }
    // Outside /api/v1 only the web vault's own files are served (the page at /); any other path is 404.
    const origin = new URL(server.url).origin;
    const root = await fetch(`${origin}/`);
    expect([root.status, root.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    for (const path of [
      "/nope",
      "/~node/options",
      "/assets/",
      "/assets/../package.json",
      "/%2e%2e/package.json",
      "/index.html/",
      "/api",
      "/api/v2/health",
    ]) {
      const res = await fetch(`${origin}${path}`);
      expect([path, res.status, ((await res.json()) as any).error.code]).toEqual([path, 404, "NOT_FOUND"]);
    }
    expect((await fetch(`${origin}/`, { method: "POST" })).status).toBe(404);
    expect((await api.call("PUT", "/vaults", { token: owner.token, body: {} })).status).toBe(404);
  });

  test("the server is still up and serving after all of it", async () => {
    expect((await api.get("/health")).body).toEqual({ status: "ok" });
    expect((await api.get("/vaults", { token: owner.token })).status).toBe(200);
  });
});
