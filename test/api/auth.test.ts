/** Registration, prelogin, login, refresh, logout, users and organizations, over real HTTP. */
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { SignJWT, decodeJwt, type JWTPayload } from "jose";
import { AUDIENCE, ISSUER, keyId } from "../../lib/auth/access-tokens";
import { Api, invite, registerUser, uniqueEmail, type TestUser } from "../helpers/client";
import { b64, deriveFromPassword, newUserKeys, openPrivateKeys, registrationBundle } from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";

describe("auth in invite mode (the default)", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    api = new Api(server.url);
  });
  afterAll(() => server.stop());

  test("the very first user registers without an invite and owns a new organization", async () => {
    // An empty server says so (the web vault's first page then leads with making the first account).
    expect((await api.get("/auth/registration")).body).toEqual({ mode: "invite", firstAccount: true });
    const keys = await newUserKeys();
    const email = "  First.Owner@Example.TEST ";
    const res = await api.post("/auth/register", { body: { email, ...registrationBundle(keys), orgName: "Acme" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      userId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      orgId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      role: "owner",
    });
    const login = await api.post("/auth/login", { body: { email: "first.owner@example.test", authHash: b64(keys.authHash) } });
    expect(login.status).toBe(200);
    owner = {
      ...res.body,
      email: "first.owner@example.test",
      keys,
      bundle: registrationBundle(keys),
      token: login.body.accessToken,
      refreshToken: login.body.refreshToken,
    };
    const org = await api.get(`/orgs/${owner.orgId}`, { token: owner.token });
    expect(org.body).toEqual({
      orgId: owner.orgId,
      name: "Acme",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  test("a second user without an invite is refused with 403", async () => {
    expect((await api.get("/auth/registration")).body).toEqual({ mode: "invite", firstAccount: false });
    const res = await api.post("/auth/register", { body: { email: uniqueEmail(), ...registrationBundle(await newUserKeys()) } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: "FORBIDDEN", message: expect.any(String) } });
  });

  test("an invite only registers its own email address", async () => {
    const inv = await invite(api, owner, "member");
    const res = await api.post("/auth/register", {
      body: { email: owner.email, ...registrationBundle(await newUserKeys()), inviteToken: inv.token },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "INVALID", field: "email" });
  });

  test("an invited user joins the inviter's organization with the invite's role, and the invite is used", async () => {
    const inv = await invite(api, owner, "admin");
    const user = await registerUser(api, { inviteToken: inv.token, email: inv.email.toUpperCase() });
    expect(user.orgId).toBe(owner.orgId);
    expect(user.role).toBe("admin");
    const again = await api.post("/auth/register", {
      body: { email: inv.email, ...registrationBundle(await newUserKeys()), inviteToken: inv.token },
    });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("INVITE_NOT_REDEEMABLE");
    const unknown = await api.post("/auth/register", {
      body: { email: uniqueEmail(), ...registrationBundle(await newUserKeys()), inviteToken: "no-such-token" },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
  });

  test("prelogin, the real PBKDF2 derivation, login and decryption of the private keys", async () => {
    const inv = await invite(api, owner);
    const keys = await newUserKeys({ password: "correct horse battery staple" });
    const bundle = registrationBundle(keys);
    expect((await api.post("/auth/register", { body: { email: inv.email, ...bundle, inviteToken: inv.token } })).status).toBe(201);

    const pre = await api.get(`/auth/prelogin?email=${encodeURIComponent(inv.email)}`);
    expect(pre.status).toBe(200);
    // A plain client signed no KDF statement: prelogin answers one that only looks like a signature, as for an unknown email.
    expect(pre.body).toEqual({ kdf: keys.kdf, kdfStatement: { version: 1, signature: expect.any(String) } });
    const derived = await deriveFromPassword("correct horse battery staple", pre.body.kdf);
    const login = await api.post("/auth/login", { body: { email: inv.email, authHash: b64(derived.authHash) } });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({
      tokenType: "Bearer",
      expiresIn: 900,
      role: "member",
      orgId: owner.orgId,
      kdf: keys.kdf,
      publicKey: bundle.publicKey,
      signingPublicKey: bundle.signingPublicKey,
      publicKeySignature: bundle.publicKeySignature,
    });
    const opened = openPrivateKeys(derived.stretchedKey, login.body);
    expect(opened.rsaPrivate.asymmetricKeyType).toBe("rsa");
    expect(opened.edPrivate.asymmetricKeyType).toBe("ed25519");

    const me = await api.get("/users/me", { token: login.body.accessToken });
    expect(me.body).toEqual({
      userId: login.body.userId,
      email: inv.email,
      orgId: owner.orgId,
      role: "member",
      createdAt: expect.any(String),
      accountVersion: 1,
      kdf: login.body.kdf,
    });
  });

  test("prelogin for an unknown email answers stable, plausible parameters", async () => {
    const a = await api.get("/auth/prelogin?email=nobody@example.test");
    const b = await api.get("/auth/prelogin?email=NOBODY@example.test");
    const c = await api.get("/auth/prelogin?email=someone-else@example.test");
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    expect(a.body.kdf.salt).not.toEqual(c.body.kdf.salt);
    expect(Buffer.from(a.body.kdf.salt, "base64")).toHaveLength(16);
    expect((await api.get("/auth/prelogin?email=not-an-email")).status).toBe(400);
  });

  test("wrong hash and unknown email are the same 401", async () => {
    const wrong = await api.post("/auth/login", { body: { email: owner.email, authHash: b64(Buffer.alloc(32, 7)) } });
    const unknown = await api.post("/auth/login", { body: { email: "ghost@example.test", authHash: b64(Buffer.alloc(32, 7)) } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error.code).toBe("UNAUTHORIZED");
  });

  test("refresh rotates the token; presenting a used one revokes the whole login", async () => {
    const login = await api.post("/auth/login", { body: { email: owner.email, authHash: b64(owner.keys.authHash) } });
    const first = login.body.refreshToken;
    const r1 = await api.post("/auth/refresh", { body: { refreshToken: first } });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({
      tokenType: "Bearer",
      expiresIn: 900,
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    expect(r1.body.refreshToken).not.toBe(first);
    expect((await api.get("/users/me", { token: r1.body.accessToken })).status).toBe(200);

    const reused = await api.post("/auth/refresh", { body: { refreshToken: first } });
    expect(reused.status).toBe(401);
    // The reuse revoked the family: the newest token is dead too.
    expect((await api.post("/auth/refresh", { body: { refreshToken: r1.body.refreshToken } })).status).toBe(401);
    expect((await api.post("/auth/refresh", { body: { refreshToken: "made-up" } })).status).toBe(401);
  });

  test("logout revokes the refresh token", async () => {
    const login = await api.post("/auth/login", { body: { email: owner.email, authHash: b64(owner.keys.authHash) } });
    const out = await api.post("/auth/logout", { token: login.body.accessToken, body: { refreshToken: login.body.refreshToken } });
    expect(out.status).toBe(204);
    expect(out.body).toBeUndefined();
    expect((await api.post("/auth/refresh", { body: { refreshToken: login.body.refreshToken } })).status).toBe(401);
    expect((await api.post("/auth/logout", { body: { refreshToken: "x" } })).status).toBe(401);
  });

  test("user keys and organization members are visible inside the organization only", async () => {
    const keys = await api.get(`/users/${owner.userId}/keys`, { token: owner.token });
    expect(keys.body).toEqual({
      userId: owner.userId,
      email: owner.email,
      publicKey: owner.bundle.publicKey,
      signingPublicKey: owner.bundle.signingPublicKey,
      publicKeySignature: owner.bundle.publicKeySignature,
    });
    const members = await api.get(`/orgs/${owner.orgId}/members`, { token: owner.token });
    expect(members.status).toBe(200);
    expect(members.body.members.length).toBeGreaterThanOrEqual(3);
    expect(members.body.members[0]).toEqual({
      userId: owner.userId,
      email: owner.email,
      role: "owner",
      publicKey: owner.bundle.publicKey,
      signingPublicKey: owner.bundle.signingPublicKey,
      publicKeySignature: owner.bundle.publicKeySignature,
      createdAt: expect.any(String),
    });
    const otherOrg = "0e3f4a1c-2b5d-4c6e-8f70-123456789abc";
    expect((await api.get(`/orgs/${otherOrg}`, { token: owner.token })).status).toBe(403);
    expect((await api.get(`/orgs/${otherOrg}/members`, { token: owner.token })).body.error.code).toBe("FORBIDDEN");
    expect((await api.get(`/users/${otherOrg}/keys`, { token: owner.token })).status).toBe(404);
  });

  test("registration refuses a key bundle that does not hold together", async () => {
    const inv = await invite(api, owner);
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const other = registrationBundle(await newUserKeys());
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ publicKeySignature: other.publicKeySignature }, "publicKeySignature"],
      [{ signingPublicKey: other.signingPublicKey }, "publicKeySignature"],
      [{ publicKey: b64(Buffer.from("not a key")) }, "publicKey"],
      [{ kdf: { algorithm: "pbkdf2-sha256", salt: keys.kdf.salt, iterations: 1000 } }, "iterations"],
      [{ kdf: { algorithm: "argon2id", salt: keys.kdf.salt, iterations: 3, memoryKiB: 1024, parallelism: 1 } }, "memoryKiB"],
      [{ kdf: { algorithm: "pbkdf2-sha256", salt: b64(Buffer.alloc(8)), iterations: 600000 } }, "salt"],
      [{ authHash: b64(Buffer.alloc(16)) }, "authHash"],
      [{ encryptedPrivateKey: b64(Buffer.alloc(17 * 1024)) }, "encryptedPrivateKey"],
    ];
    for (const [patch, field] of cases) {
      const res = await api.post("/auth/register", { body: { email: inv.email, ...bundle, inviteToken: inv.token, ...patch } });
      expect([res.status, res.body.error?.code, res.body.error?.field]).toEqual([400, "INVALID", field]);
    }
    // A 1024-bit RSA key is below the floor.
    const weak = registrationBundle(await newUserKeys({ rsaBits: 1024 }));
    const res = await api.post("/auth/register", { body: { email: inv.email, ...weak, inviteToken: inv.token } });
    expect(res.body.error).toMatchObject({ code: "INVALID", field: "publicKey" });
    // None of the refusals used the invite up.
    expect((await api.post("/invites/redeem", { body: { token: inv.token } })).status).toBe(200);
  });

  test("forged, alg:none, tampered, malformed, wrong-audience and wrong-issuer tokens are 401", async () => {
    const claims = { sub: owner.userId, org: owner.orgId, role: "owner", sid: decodeJwt(owner.token).sid };
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("vault-service")
      .setAudience("vault-service-api")
      .setIssuedAt()
      .setExpirationTime("5m")
      .setJti("x")
      .sign(new Uint8Array(32).fill(1));
    const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    const payload = Buffer.from(
      JSON.stringify({
        ...claims,
        iss: "vault-service",
        aud: "vault-service-api",
        exp: Math.floor(Date.now() / 1000) + 300,
        iat: 1,
        jti: "y",
      }),
    ).toString("base64url");
    const [h, p, s] = owner.token.split(".");
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, "base64url").toString()), role: "admin" })).toString("base64url")}.${s}`;
    // Signed with the server's own key (and its key id): only the audience, or the issuer, is wrong.
    const secret = Buffer.from(fs.readFileSync(path.join(server.dataDir, "jwt-secret"), "utf8").trim(), "base64");
    const signedByServer = (audience: string, issuer = ISSUER, body: JWTPayload = claims) =>
      new SignJWT(body)
        .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: keyId(secret) })
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime("5m")
        .setJti(randomUUID())
        .sign(secret);
    // The control: with the right audience and issuer the same construction is accepted.
    expect((await api.get("/vaults", { token: await signedByServer(AUDIENCE) })).status).toBe(200);
    const wrongAudience = await signedByServer("another-service-api");
    const wrongIssuer = await signedByServer(AUDIENCE, "another-issuer");
    // Signed by the server, but naming no session (as tokens did before sessions): refreshed, not accepted.
    const { sid: _sid, ...sessionless } = claims;
    const noSession = await signedByServer(AUDIENCE, ISSUER, sessionless);
    for (const token of [forged, `${header}.${payload}.`, tampered, "garbage", `${h}.${p}`, wrongAudience, wrongIssuer, noSession]) {
      const res = await api.get("/vaults", { token });
      expect([res.status, res.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
    }
    expect((await api.get("/vaults", { headers: { authorization: `Basic ${owner.token}` } })).status).toBe(401);
  });
});

describe("auth settings", () => {
  test("expired access tokens are refused", async () => {
    const server = await startTestServer({ ACCESS_TOKEN_TTL: "1s" });
    try {
      const api = new Api(server.url);
      const user = await registerUser(api);
      expect((await api.get("/users/me", { token: user.token })).status).toBe(200);
      server.clock.advance(1_000);
      const res = await api.get("/users/me", { token: user.token });
      expect([res.status, res.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
    } finally {
      await server.stop();
    }
  });

  test("open mode lets anyone create an organization; disabled mode refuses everyone", async () => {
    const open = await startTestServer({ REGISTRATION_MODE: "open" });
    try {
      const api = new Api(open.url);
      const a = await registerUser(api);
      const b = await registerUser(api);
      expect(a.orgId).not.toBe(b.orgId);
      expect(b.role).toBe("owner");
      const again = await api.post("/auth/register", {
        body: { email: a.email.toUpperCase(), ...registrationBundle(await newUserKeys()) },
      });
      expect([again.status, again.body.error.code]).toEqual([409, "CONFLICT"]);
    } finally {
      await open.stop();
    }
    const disabled = await startTestServer({ REGISTRATION_MODE: "disabled" });
    try {
      const res = await new Api(disabled.url).post("/auth/register", {
        body: { email: uniqueEmail(), ...registrationBundle(await newUserKeys()) },
      });
      expect([res.status, res.body.error.code]).toEqual([403, "FORBIDDEN"]);
    } finally {
      await disabled.stop();
    }
  });

  test("after 10 failed logins for one email, further attempts get 429 with Retry-After", async () => {
    const server = await startTestServer();
    try {
      const api = new Api(server.url);
      const user = await registerUser(api);
      for (let i = 0; i < 10; i++) {
        expect((await api.post("/auth/login", { body: { email: user.email, authHash: b64(Buffer.alloc(32, i)) } })).status).toBe(401);
      }
      const blocked = await api.post("/auth/login", { body: { email: user.email, authHash: b64(user.keys.authHash) } });
      expect([blocked.status, blocked.body.error.code]).toEqual([429, "RATE_LIMITED"]);
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(800);
      // Other addresses are not affected.
      expect((await api.post("/auth/login", { body: { email: "other@example.test", authHash: b64(Buffer.alloc(32)) } })).status).toBe(401);
    } finally {
      await server.stop();
    }
  });
});
