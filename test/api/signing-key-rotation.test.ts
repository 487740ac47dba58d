/**
 * Rotating the access-token signing key (JWT_SECRET): tokens name their key (`kid`); tokens signed
 * with the previous key keep working until JWT_PREVIOUS_SECRET_UNTIL, then get 401; new tokens are
 * signed with the new key; refresh tokens are not JWTs and survive any rotation.
 */
import type { OrgId, UserId } from "../../lib/domain/ids";
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import { AccessTokens, keyId } from "../../lib/auth/access-tokens";
import { loadConfig } from "../../lib/config";
import { Api, registerUser } from "../helpers/client";
import { startTestServer, tempDir } from "../helpers/server";

const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();

describe("a server restarted on a new JWT_SECRET", () => {
  const dataDir = tempDir();
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test("keeps accepting the old key's tokens during the grace period, refuses them after it, and signs new ones with the new key", async () => {
    let server = await startTestServer({ DATA_DIR: dataDir, JWT_SECRET: oldKey.toString("base64"), REGISTRATION_MODE: "open" });
    const user = await registerUser(new Api(server.url));
    expect(decodeProtectedHeader(user.token).kid).toBe(keyId(oldKey));
    await server.stop();

    // Rotated, with the old key kept for a grace period: the old token still works.
    server = await startTestServer({
      DATA_DIR: dataDir,
      JWT_SECRET: newKey.toString("base64"),
      JWT_PREVIOUS_SECRET: oldKey.toString("base64"),
      JWT_PREVIOUS_SECRET_UNTIL: inAnHour,
    });
    let api = new Api(server.url);
    expect((await api.get("/vaults", { token: user.token })).status).toBe(200);
    const refreshed = await api.post("/auth/refresh", { body: { refreshToken: user.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect(decodeProtectedHeader(refreshed.body.accessToken).kid).toBe(keyId(newKey));
    expect((await api.get("/vaults", { token: refreshed.body.accessToken })).status).toBe(200);
    await server.stop();

    // The grace period is over: the old key's token is refused, the new key's and the refresh token work.
    server = await startTestServer({
      DATA_DIR: dataDir,
      JWT_SECRET: newKey.toString("base64"),
      JWT_PREVIOUS_SECRET: oldKey.toString("base64"),
      JWT_PREVIOUS_SECRET_UNTIL: anHourAgo,
    });
    api = new Api(server.url);
    const refused = await api.get("/vaults", { token: user.token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("UNAUTHORIZED");
    expect((await api.get("/vaults", { token: refreshed.body.accessToken })).status).toBe(200);
    expect((await api.post("/auth/refresh", { body: { refreshToken: refreshed.body.refreshToken } })).status).toBe(200);
    await server.stop();

    // Without the previous key at all: refused as well.
    server = await startTestServer({ DATA_DIR: dataDir, JWT_SECRET: newKey.toString("base64") });
    expect((await new Api(server.url).get("/vaults", { token: user.token })).status).toBe(401);
    await server.stop();
  });
});

describe("AccessTokens", () => {
  const caller = { userId: "u1" as UserId, orgId: "o1" as OrgId, role: "member" as const };

  test("a token verified during the grace period is refused once it ends, even from the verification cache", async () => {
    let now = Date.now();
    const before = new AccessTokens({ current: oldKey }, 900);
    const token = await before.issue(caller);
    const rotated = new AccessTokens({ current: newKey, previous: { secret: oldKey, untilMs: now + 60_000 } }, 900, () => now);
    expect(await rotated.verify(token)).toEqual(caller);
    now += 61_000;
    await expect(rotated.verify(token)).rejects.toMatchObject({ code: 401, type: "UNAUTHORIZED" });
  });

  test("a token naming an unknown key, or signed with another key under the current kid, is refused", async () => {
    const other = await new AccessTokens({ current: randomBytes(32) }, 900).issue(caller);
    const tokens = new AccessTokens({ current: newKey }, 900);
    await expect(tokens.verify(other)).rejects.toMatchObject({ code: 401, type: "UNAUTHORIZED" });
    // The header claims the current key id; the signature is another key's.
    const [, payload, sig] = other.split(".");
    const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT", kid: keyId(newKey) })).toString("base64url");
    await expect(tokens.verify(`${header}.${payload}.${sig}`)).rejects.toMatchObject({ code: 401, type: "UNAUTHORIZED" });
  });

  test("the settings: the previous key needs its deadline and the new key", () => {
    const prev = oldKey.toString("base64");
    expect(() => loadConfig({ JWT_SECRET: newKey.toString("base64"), JWT_PREVIOUS_SECRET: prev })).toThrow(/go together/);
    expect(() => loadConfig({ JWT_PREVIOUS_SECRET: prev, JWT_PREVIOUS_SECRET_UNTIL: inAnHour })).toThrow(/needs JWT_SECRET/);
    expect(() =>
      loadConfig({ JWT_SECRET: newKey.toString("base64"), JWT_PREVIOUS_SECRET: prev, JWT_PREVIOUS_SECRET_UNTIL: "tomorrow" }),
    ).toThrow(/ISO 8601/);
    expect(
      loadConfig({ JWT_SECRET: newKey.toString("base64"), JWT_PREVIOUS_SECRET: prev, JWT_PREVIOUS_SECRET_UNTIL: inAnHour })
        .jwtPreviousSecretUntilMs,
    ).toBe(Date.parse(inAnHour));
  });
});
