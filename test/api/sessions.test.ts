/**
 * Sessions: each login is one, with the device name its client gave, when it began, its
 * last use and the address of that use. A user lists theirs and ends one or all the others; an
 * ended session's refresh token is refused at once, and its access tokens at once on the gateway
 * that heard of the end, within SESSION_CHECK_INTERVAL on any other. Logout and a stolen refresh
 * token caught being reused end the session too. On SQLite and PostgreSQL.
 */
import { decodeJwt } from "jose";
import { Api, registerUser, type TestUser } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(120_000);

describe.each(SQL_ENGINES)("sessions, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let ada: TestUser;
  let bob: TestUser;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    ada = await registerUser(api);
    bob = await registerUser(api);
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  const login = async (who: TestUser, deviceName?: string) => {
    const res = await api.post("/auth/login", { body: { email: who.email, authHash: who.bundle.authHash, deviceName } });
    expect(res.status).toBe(200);
    return res.body as { accessToken: string; refreshToken: string; sessionId: string };
  };
  const sessionsOf = async (token: string) => {
    const res = await api.get("/users/me/sessions", { token });
    expect(res.status).toBe(200);
    return res.body.sessions as Array<{ sessionId: string; deviceName: string; current: boolean; address: string; lastUsedAt: string }>;
  };
  const works = async (token: string) => (await api.get("/users/me", { token })).status;

  test("a login is a session with its device name; the list marks the current one; its tokens name it", async () => {
    const laptop = await login(ada, "  Ada's laptop (Firefox)  ");
    const phone = await login(ada, "Ada's phone");
    expect(decodeJwt(laptop.accessToken).sid).toBe(laptop.sessionId);
    const listed = await sessionsOf(laptop.accessToken);
    const mine = listed.find((s) => s.sessionId === laptop.sessionId)!;
    expect(mine).toMatchObject({ deviceName: "Ada's laptop (Firefox)", current: true, address: expect.stringContaining("127.0.0.1") });
    expect(listed.find((s) => s.sessionId === phone.sessionId)).toMatchObject({ deviceName: "Ada's phone", current: false });
    // Without a name: called so. Nobody else's sessions are listed.
    const unnamed = await login(ada);
    expect((await sessionsOf(unnamed.accessToken)).find((s) => s.current)).toMatchObject({ deviceName: "unnamed device" });
    expect((await sessionsOf(bob.token)).map((s) => s.sessionId)).not.toContain(laptop.sessionId);
  });

  test("a device name that would not print honestly, or is too long, is 400 on deviceName, and nobody is signed in", async () => {
    for (const deviceName of ["", "   ", "line\nbreak", "tab\there", "evil\u202Egnp.exe", "zero\u200Bwidth", "x".repeat(65)]) {
      const res = await api.post("/auth/login", { body: { email: ada.email, authHash: ada.bundle.authHash, deviceName } });
      expect([res.status, res.body.error.code, res.body.error.field]).toEqual([400, "INVALID", "deviceName"]);
    }
    expect((await login(ada, "x".repeat(64))).sessionId).toBeDefined();
  });

  test("ending a session stops its access token at once and its refresh token; the ender's own goes on", async () => {
    const laptop = await login(ada, "laptop");
    const stolen = await login(ada, "stolen phone");
    expect(await works(stolen.accessToken)).toBe(200);
    expect((await api.delete(`/users/me/sessions/${stolen.sessionId}`, { token: laptop.accessToken })).status).toBe(204);
    const refused = await api.get("/users/me", { token: stolen.accessToken });
    expect([refused.status, refused.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
    expect((await api.post("/auth/refresh", { body: { refreshToken: stolen.refreshToken } })).status).toBe(401);
    expect(await works(laptop.accessToken)).toBe(200);
    expect((await sessionsOf(laptop.accessToken)).map((s) => s.sessionId)).not.toContain(stolen.sessionId);
    // Once ended, it is not found again.
    expect((await api.delete(`/users/me/sessions/${stolen.sessionId}`, { token: laptop.accessToken })).status).toBe(404);
  });

  test("a session that is not the caller's, or none, is 404 alike, and stays live", async () => {
    const bobs = await login(bob, "bob's laptop");
    for (const id of [bobs.sessionId, "00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      const res = await api.delete(`/users/me/sessions/${id}`, { token: ada.token });
      expect([res.status, res.body.error.code]).toEqual([404, "NOT_FOUND"]);
    }
    expect(await works(bobs.accessToken)).toBe(200);
  });

  test("ending all the others leaves only the current session, and says how many ended", async () => {
    const keep = await login(ada, "keep");
    const others = [await login(ada, "a"), await login(ada, "b")];
    const res = await api.delete("/users/me/sessions", { token: keep.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.ended).toBeGreaterThanOrEqual(2);
    for (const o of others) expect(await works(o.accessToken)).toBe(401);
    expect((await sessionsOf(keep.accessToken)).map((s) => s.sessionId)).toEqual([keep.sessionId]);
    expect(await works(keep.accessToken)).toBe(200);
  });

  test("logout ends the session: its access token is refused at once", async () => {
    const s = await login(ada, "shared computer");
    expect((await api.post("/auth/logout", { token: s.accessToken, body: { refreshToken: s.refreshToken } })).status).toBe(204);
    expect(await works(s.accessToken)).toBe(401);
  });

  test("a refresh token presented twice ends its session: the thief's and the owner's access tokens both stop", async () => {
    const s = await login(ada, "phished");
    const first = await api.post("/auth/refresh", { body: { refreshToken: s.refreshToken } });
    expect(first.status).toBe(200);
    expect(await works(first.body.accessToken)).toBe(200);
    expect((await api.post("/auth/refresh", { body: { refreshToken: s.refreshToken } })).status).toBe(401);
    expect(await works(first.body.accessToken)).toBe(401);
    expect(await works(s.accessToken)).toBe(401);
  });

  test("a refresh records the use: the address and the time, and the same session goes on", async () => {
    const s = await login(ada, "desk");
    const before = (await sessionsOf(s.accessToken)).find((x) => x.current)!;
    server.clock.advance(61_000);
    const next = await api.post("/auth/refresh", { body: { refreshToken: s.refreshToken } });
    expect(decodeJwt(next.body.accessToken).sid).toBe(s.sessionId);
    const after = (await sessionsOf(next.body.accessToken)).find((x) => x.current)!;
    expect(after.sessionId).toBe(s.sessionId);
    expect(Date.parse(after.lastUsedAt)).toBeGreaterThan(Date.parse(before.lastUsedAt));
  });

  test("a session ended where this gateway did not hear of it: its access token works at most SESSION_CHECK_INTERVAL (5 s) longer", async () => {
    const s = await login(ada, "elsewhere");
    expect(await works(s.accessToken)).toBe(200);
    // Ended in the store directly, as another node would, with no broadcast heard here.
    await server.node.runtime.store.sessions.endSessions({ userId: ada.userId as never, now: server.clock.timestamp(), only: s.sessionId });
    expect(await works(s.accessToken)).toBe(200);
    server.clock.advance(5_000);
    expect(await works(s.accessToken)).toBe(401);
  });
});
