/**
 * Access tokens signed with the server's own key (read from its DATA_DIR) that claim what the server
 * would never issue: refused with 401 and the contract's error body, over real HTTP. Each forged
 * token carries a live session id, so only the claim checked here can refuse it.
 */
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { SignJWT, decodeJwt, type JWTPayload } from "jose";
import { AUDIENCE, ISSUER, keyId } from "../../lib/auth/access-tokens";
import { MAX_CLOCK_SKEW_SEC } from "../../lib/domain/accounts/access-tokens";
import { Api, invite, newOrg, registerUser, type TestUser } from "../helpers/client";
import { startTestServer, type TestServer } from "../helpers/server";

describe("access tokens the server's key signed, checked for what they claim", () => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser;
  let member: TestUser;
  let secret: Buffer;

  beforeAll(async () => {
    server = await startTestServer();
    api = new Api(server.url);
    ({
      owner,
      users: [member],
    } = (await newOrg(api, ["member"])) as { owner: TestUser; users: [TestUser] });
    secret = Buffer.from(fs.readFileSync(path.join(server.dataDir, "jwt-secret"), "utf8").trim(), "base64");
  });
  afterAll(() => server.stop());

  const nowSec = () => Math.floor(server.clock.nowMs() / 1000);

  /** A token as the server signs one (its key, key id, issuer, audience, 15 minutes), with `change` applied. */
  async function forge(
    of: TestUser,
    change: { claims?: JWTPayload; iat?: number; exp?: number; header?: Record<string, unknown> } = {},
  ): Promise<string> {
    const iat = change.iat ?? nowSec();
    const claims = { sub: of.userId, org: of.orgId, role: of.role, sid: decodeJwt(of.token).sid, ...change.claims };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: keyId(secret), ...change.header } as never)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(change.exp ?? iat + 15 * 60)
      .setJti(randomUUID())
      .sign(secret);
  }

  /** What a request with `token` gets, right after the holder's own token was used (its session is fresh in the gateway's check). */
  async function answer(holder: TestUser, token: string) {
    expect((await api.get("/vaults", { token: holder.token })).status).toBe(200);
    // A route that reads no more of the user than the token says (GET /users/me would look the user up).
    const res = await api.get("/vaults", { token });
    return [res.status, res.body];
  }
  const refused = [401, { error: { code: "UNAUTHORIZED", message: expect.any(String) } }];

  test("the control: a token forged as the server issues one is accepted", async () => {
    expect(await answer(owner, await forge(owner))).toEqual([200, { vaults: [] }]);
    // Issued within the clock skew ahead, and living exactly the setting's lifetime: still accepted.
    const ahead = nowSec() + MAX_CLOCK_SKEW_SEC - 5;
    expect((await answer(owner, await forge(owner, { iat: ahead, exp: ahead + 15 * 60 })))[0]).toBe(200);
  });

  test("issued an hour in the future: 401", async () => {
    const iat = nowSec() + 3600;
    expect(await answer(owner, await forge(owner, { iat, exp: iat + 15 * 60 }))).toEqual(refused);
  });

  test("living ten years, or one second longer than ACCESS_TOKEN_TTL: 401", async () => {
    expect(await answer(owner, await forge(owner, { exp: nowSec() + 10 * 365 * 86_400 }))).toEqual(refused);
    expect(await answer(owner, await forge(owner, { exp: nowSec() + 15 * 60 + 1 }))).toEqual(refused);
  });

  test("naming no signing key, or one the server does not hold: 401", async () => {
    expect(await answer(owner, await forge(owner, { header: { kid: undefined } }))).toEqual(refused);
    expect(await answer(owner, await forge(owner, { header: { kid: "not-a-key-id" } }))).toEqual(refused);
  });

  test("naming a user who does not exist, with a live session's id: 401", async () => {
    expect(await answer(owner, await forge(owner, { claims: { sub: randomUUID() } }))).toEqual(refused);
  });

  test("claiming another role or organization than the user's: 401", async () => {
    expect(await answer(member, await forge(member, { claims: { role: "owner" } }))).toEqual(refused);
    expect(await answer(member, await forge(member, { claims: { org: randomUUID() } }))).toEqual(refused);
  });

  test("a user taken out of the organization: their own token stops at once, and so does one forged for them", async () => {
    const inv = await invite(api, owner, "member");
    const leaving = await registerUser(api, { inviteToken: inv.token, email: inv.email });
    expect((await api.get("/users/me", { token: leaving.token })).status).toBe(200);
    expect((await api.delete(`/orgs/${owner.orgId}/members/${leaving.userId}`, { token: owner.token })).status).toBe(200);
    const own = await api.get("/users/me", { token: leaving.token });
    expect([own.status, own.body]).toEqual(refused);
    // Forged for them, with the owner's live session: the removed user is refused all the same.
    expect(await answer(owner, await forge(owner, { claims: { sub: leaving.userId, role: "member" } }))).toEqual(refused);
  });
});
