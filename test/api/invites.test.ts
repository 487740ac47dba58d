/** Invites: create, list, revoke, redeem, expiry and the redeem rate limit. */
import { randomUUID } from "node:crypto";
import { Api, invite, newOrg, registerUser, uniqueEmail, type TestUser } from "../helpers/client";
import { newUserKeys, registrationBundle } from "../helpers/crypto";
import { startTestServer, type TestServer } from "../helpers/server";
import { sleep } from "../helpers/wait";

describe("invites", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, admin: TestUser, member: TestUser, otherOwner: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open", REDEEM_RATE_LIMIT: "1000" });
    api = new Api(server.url);
    const org = await newOrg(api, ["admin", "member"]);
    owner = org.owner;
    [admin, member] = org.users as [TestUser, TestUser];
    otherOwner = await registerUser(api);
  });
  afterAll(() => server.stop());

  test("create returns the id and the raw token once; redeem reports the organization and role", async () => {
    const email = uniqueEmail("New.Person");
    const res = await api.post("/invites", { token: admin.token, body: { email, role: "member", expiresIn: "24h" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      inviteId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.any(String),
    });
    const ttl = Date.parse(res.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3600_000);

    const redeemed = await api.post("/invites/redeem", { body: { token: res.body.token } });
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toEqual({
      inviteId: res.body.inviteId,
      inviter: {
        userId: admin.userId,
        email: admin.email,
        publicKey: admin.bundle.publicKey,
        signingPublicKey: admin.bundle.signingPublicKey,
        publicKeySignature: admin.bundle.publicKeySignature,
      },
      orgId: owner.orgId,
      orgName: expect.any(String),
      email: email.toLowerCase(),
      role: "member",
      expiresAt: expect.any(String),
    });
    expect(redeemed.body.orgName).toBe((await api.get(`/orgs/${owner.orgId}`, { token: owner.token })).body.name);
    // Redeeming only checks: it can be repeated until registration consumes the invite.
    expect((await api.post("/invites/redeem", { body: { token: res.body.token } })).status).toBe(200);

    const listed = await api.get(`/invites?orgId=${owner.orgId.toUpperCase()}`, { token: owner.token });
    const entry = listed.body.find((i: any) => i.id === res.body.inviteId);
    expect(entry).toEqual({
      id: res.body.inviteId,
      email: email.toLowerCase(),
      role: "member",
      inviterId: admin.userId,
      expiresAt: res.body.expiresAt,
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(listed.body)).not.toContain(res.body.token);
  });

  test("the default lifetime is 72 hours", async () => {
    const res = await api.post("/invites", { token: owner.token, body: { email: uniqueEmail(), role: "admin" } });
    const ttl = Date.parse(res.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(72 * 3600_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(72 * 3600_000);
  });

  test("validation: email, role and expiresIn", async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ email: "not-an-email", role: "member" }, "email"],
      [{ email: "a b@example.test", role: "member" }, "email"],
      [{ email: uniqueEmail(), role: "owner" }, "role"],
      [{ email: uniqueEmail(), role: "member", expiresIn: "31d" }, "expiresIn"],
      [{ email: uniqueEmail(), role: "member", expiresIn: "0h" }, "expiresIn"],
      [{ email: uniqueEmail(), role: "member", expiresIn: "12" }, "expiresIn"],
      [{ email: uniqueEmail(), role: "member", expiresIn: 24 }, "expiresIn"],
      [{ role: "member" }, "email"],
    ];
    for (const [body, field] of bad) {
      const res = await api.post("/invites", { token: owner.token, body });
      expect([res.status, res.body.error.code, res.body.error.field]).toEqual([400, "INVALID", field]);
    }
    const existing = await api.post("/invites", { token: owner.token, body: { email: member.email, role: "member" } });
    expect([existing.status, existing.body.error.code]).toEqual([409, "CONFLICT"]);
  });

  test("only organization owners and admins create, list and revoke invites", async () => {
    const create = await api.post("/invites", { token: member.token, body: { email: uniqueEmail(), role: "member" } });
    expect([create.status, create.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await api.get(`/invites?orgId=${owner.orgId}`, { token: member.token })).status).toBe(403);
    expect((await api.get(`/invites?orgId=${owner.orgId}`, { token: otherOwner.token })).status).toBe(403);
    expect((await api.get(`/invites?orgId=not-a-uuid`, { token: owner.token })).status).toBe(403);
    const missing = await api.get("/invites", { token: owner.token });
    expect([missing.status, missing.body.error.code]).toEqual([400, "INVALID"]);

    const inv = await invite(api, owner);
    const byMember = await api.delete(`/invites/${inv.inviteId}`, { token: member.token });
    expect([byMember.status, byMember.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const byOtherOrg = await api.delete(`/invites/${inv.inviteId}`, { token: otherOwner.token });
    expect([byOtherOrg.status, byOtherOrg.body.error.code]).toEqual([404, "NOT_FOUND"]);
    expect((await api.delete(`/invites/${randomUUID()}`, { token: owner.token })).status).toBe(404);
    expect((await api.post("/invites/redeem", { body: { token: inv.token } })).status).toBe(200);
  });

  test("revoked, used and expired invites are not redeemable and leave the list", async () => {
    const revoked = await invite(api, owner);
    expect((await api.delete(`/invites/${revoked.inviteId}`, { token: admin.token })).status).toBe(204);
    expect((await api.delete(`/invites/${revoked.inviteId}`, { token: admin.token })).status).toBe(204);

    const used = await invite(api, owner);
    await registerUser(api, { inviteToken: used.token, email: used.email });

    const expired = await invite(api, owner, "member", uniqueEmail(), "1s");
    server.clock.advance(1_000);

    for (const inv of [revoked, used, expired]) {
      const res = await api.post("/invites/redeem", { body: { token: inv.token } });
      expect([res.status, res.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
      const reg = await api.post("/auth/register", {
        body: { email: inv.email, ...registrationBundle(await newUserKeys()), inviteToken: inv.token },
      });
      expect([reg.status, reg.body.error?.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
    }
    const ids = (await api.get(`/invites?orgId=${owner.orgId}`, { token: owner.token })).body.map((i: any) => i.id);
    for (const inv of [revoked, used, expired]) expect(ids).not.toContain(inv.inviteId);

    const unknown = await api.post("/invites/redeem", { body: { token: "never-issued" } });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "NOT_FOUND"]);
  });

  test("the list holds pending invites only, newest first", async () => {
    const fresh = await registerUser(api);
    const pause = () => sleep(5); // distinct createdAt values
    const a = await invite(api, fresh);
    await pause();
    const b = await invite(api, fresh);
    await pause();
    const c = await invite(api, fresh);
    await api.delete(`/invites/${b.inviteId}`, { token: fresh.token });
    const list = await api.get(`/invites?orgId=${fresh.orgId}`, { token: fresh.token });
    expect(list.status).toBe(200);
    expect(list.body.map((i: any) => i.id)).toEqual([c.inviteId, a.inviteId]);
  });
});

describe("redeem rate limit", () => {
  test("60 requests a minute per client address, then 429 with Retry-After", async () => {
    const server = await startTestServer();
    try {
      const api = new Api(server.url);
      const statuses: number[] = [];
      for (let i = 0; i < 50; i++) statuses.push((await api.post("/invites/redeem", { body: { token: `t${i}` } })).status);
      // Malformed requests count too (unparseable JSON is refused at the gateway, before any service).
      for (const body of [
        {},
        { token: 5 },
        { token: "" },
        { token: null },
        { token: ["x"] },
        { token: {} },
        { token: true },
        { token: "x".repeat(513) },
        { tok: "x" },
        { token: 1.5 },
      ]) {
        statuses.push((await api.post("/invites/redeem", { body })).status);
      }
      expect(statuses.slice(0, 50).every((s) => s === 404)).toBe(true);
      expect(statuses.slice(50).every((s) => s === 400)).toBe(true);
      const limited = await api.post("/invites/redeem", { body: { token: "again" } });
      expect([limited.status, limited.body.error.code]).toEqual([429, "RATE_LIMITED"]);
      const retry = Number(limited.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      // No other route is limited.
      expect((await api.get("/health")).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
