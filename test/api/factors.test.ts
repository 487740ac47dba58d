/**
 * Second factors and organization policies, over HTTP on SQLite and PostgreSQL: an
 * authenticator app (TOTP, codes computed here with node:crypto), a security key (a software key
 * with real ES256 signatures, test/helpers/webauthn.ts) and recovery codes, as a second step of
 * login that never tells a right password from a wrong one; replays, a cloned key's counter, a
 * recovery code used twice, a burst of guesses; and the policies an owner sets.
 */
import { Api, invite, registerUser, type TestUser } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import { enrolmentRequired, passwordProofRequired } from "../../lib/domain/accounts/refusals";
import { startTestServer, type TestServer } from "../helpers/server";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { SoftKey } from "../helpers/webauthn";
import { SecondFactorRequiredError, VaultClient } from "../../sdk";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";

jest.setTimeout(180_000);

const codeAt = (secret: string, offsetSteps = 0) => referenceTotp(fromBase32(secret), Date.now() + offsetSteps * 30_000);

describe.each(SQL_ENGINES)("second factors and policies, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open", LOGIN_MAX_FAILURES: "6" });
    api = new Api(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  const firstStep = async (who: TestUser, authHash = who.bundle.authHash) => {
    const res = await api.post("/auth/login", { body: { email: who.email, authHash } });
    expect(res.status).toBe(200);
    return res.body as { secondFactorRequired?: true; stepToken: string; methods: string[]; webauthn?: { challenge: string } };
  };
  const secondStep = (stepToken: string, answer: Record<string, unknown>) =>
    api.post("/auth/login/second-factor", { body: { stepToken, ...answer } });

  /** A user with an authenticator app enrolled (its secret, the code it was enrolled with, and the recovery codes the first factor comes with). */
  async function withTotp(): Promise<{ user: TestUser; secret: string; enrolmentCode: string; recoveryCodes: string[] }> {
    const user = await registerUser(api);
    const setup = await api.post("/users/me/factors/totp/setup", { token: user.token });
    expect(setup.status).toBe(200);
    expect(setup.body.uri).toMatch(/^otpauth:\/\/totp\//);
    // A code that is not the app's, or a setup token of someone else's: nothing is enrolled.
    const wrong = await api.post("/users/me/factors/totp", {
      token: user.token,
      body: { name: "Phone", setupToken: setup.body.setupToken, code: "000000", authHash: user.bundle.authHash },
    });
    expect([wrong.status, wrong.body.error.field]).toEqual([400, "code"]);
    const enrolmentCode = codeAt(setup.body.secret);
    const enrolled = await api.post("/users/me/factors/totp", {
      token: user.token,
      body: { name: "Phone", setupToken: setup.body.setupToken, code: enrolmentCode, authHash: user.bundle.authHash },
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.body.recoveryCodes).toHaveLength(10);
    return { user, secret: setup.body.secret, enrolmentCode, recoveryCodes: enrolled.body.recoveryCodes };
  }

  test("an authenticator app: the first step answers the same for a right and a wrong password; only both sign in; a code is good once", async () => {
    const { user, secret, enrolmentCode } = await withTotp();
    const listed = await api.get("/users/me/factors", { token: user.token });
    expect(listed.body).toMatchObject({ factors: [{ kind: "totp", name: "Phone" }], recoveryCodesLeft: 10, required: false });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    const right = await firstStep(user);
    const wrong = await firstStep(user, Buffer.alloc(32, 7).toString("base64"));
    // No tokens and the same shape, whatever the password: the first step is no oracle.
    for (const step of [right, wrong]) {
      expect(step).toEqual({ secondFactorRequired: true, stepToken: expect.any(String), methods: ["totp", "recovery-code"] });
    }
    // Not even the sealed token's length tells a right password from a wrong one.
    expect(right.stepToken.length).toBe(wrong.stepToken.length);
    // The enrolment's own code cannot sign in: a replay. (The code as sent at enrolment, not the
    // current step's again: a 30 s step may have ended since, and the next one's code is fresh.)
    const replayOfEnrolment = await secondStep(right.stepToken, { totpCode: enrolmentCode });
    // A wrong password with the right next code, and a right password with a wrong code: one answer.
    const code = codeAt(secret, 1);
    const wrongPassword = await secondStep(wrong.stepToken, { totpCode: code });
    const wrongCode = await secondStep(right.stepToken, { totpCode: code === "123456" ? "654321" : "123456" });
    for (const r of [replayOfEnrolment, wrongPassword, wrongCode]) {
      expect([r.status, r.body]).toEqual([401, { error: { code: "UNAUTHORIZED", message: "Wrong password or second-factor code" } }]);
    }
    const signedIn = await secondStep(right.stepToken, { totpCode: code });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.accessToken).toEqual(expect.any(String));
    expect((await api.get("/vaults", { token: signedIn.body.accessToken })).status).toBe(200);
    // The same code again, from a new login: refused (a step is used once).
    const again = await firstStep(user);
    expect((await secondStep(again.stepToken, { totpCode: code })).status).toBe(401);
    // A step token signs in once, even with a right answer.
    expect((await secondStep(right.stepToken, { totpCode: codeAt(secret, 1) })).status).toBe(401);
    // A forged step token.
    expect((await secondStep(right.stepToken.slice(0, -4) + "AAAA", { totpCode: code })).status).toBe(401);
  });

  test("a recovery code signs in once; a wrong password with a right recovery code does not use it up", async () => {
    const { user, recoveryCodes } = await withTotp();
    const wrong = await firstStep(user, Buffer.alloc(32, 9).toString("base64"));
    expect((await secondStep(wrong.stepToken, { recoveryCode: recoveryCodes[0] })).status).toBe(401);
    const first = await firstStep(user);
    // Typed loosely: lower case, no dashes.
    const used = await secondStep(first.stepToken, { recoveryCode: recoveryCodes[0]!.toLowerCase().replace(/-/g, "") });
    expect(used.status).toBe(200);
    const second = await firstStep(user);
    expect((await secondStep(second.stepToken, { recoveryCode: recoveryCodes[0] })).status).toBe(401);
    expect((await api.get("/users/me/factors", { token: used.body.accessToken })).body.recoveryCodesLeft).toBe(9);
    // Two at once with the same code: one signs in.
    const [a, b] = [await firstStep(user), await firstStep(user)];
    const both = await Promise.all([
      secondStep(a.stepToken, { recoveryCode: recoveryCodes[1] }),
      secondStep(b.stepToken, { recoveryCode: recoveryCodes[1] }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 401]);
    // New codes take the master password, and replace the old ones.
    const token = used.body.accessToken;
    expect(
      (await api.post("/users/me/factors/recovery-codes", { token, body: { authHash: Buffer.alloc(32, 1).toString("base64") } })).status,
    ).toBe(403);
    const fresh = await api.post("/users/me/factors/recovery-codes", { token, body: { authHash: user.bundle.authHash } });
    expect(fresh.status).toBe(201);
    const third = await firstStep(user);
    expect((await secondStep(third.stepToken, { recoveryCode: recoveryCodes[2] })).status).toBe(401);
    expect((await secondStep(third.stepToken, { recoveryCode: fresh.body.recoveryCodes[0] })).status).toBe(200);
  });

  test("a security key: its signature is checked before it is stored; a cloned key's counter, another origin or an old challenge do not sign in", async () => {
    const user = await registerUser(api);
    const key = new SoftKey(new URL(server.url).origin.replace("127.0.0.1", "localhost"));
    const options = await api.post("/users/me/factors/webauthn/options", { token: user.token });
    expect(options.status).toBe(200);
    // An answer to another challenge, or from another site: refused, nothing stored.
    const forged = key.register({ challenge: Buffer.from("not the challenge").toString("base64url") });
    const elsewhere = key.register(options.body.options, "http://localhost.evil.test");
    for (const response of [forged, elsewhere]) {
      const r = await api.post("/users/me/factors/webauthn", {
        token: user.token,
        body: { name: "YubiKey", setupToken: options.body.setupToken, response, authHash: user.bundle.authHash },
      });
      expect([r.status, r.body.error.field]).toEqual([400, "response"]);
    }
    expect((await api.get("/users/me/factors", { token: user.token })).body.factors).toEqual([]);
    // Without the master password (a stolen access token): refused, nothing stored.
    const answer = key.register(options.body.options);
    const noPassword = await api.post("/users/me/factors/webauthn", {
      token: user.token,
      body: { name: "YubiKey", setupToken: options.body.setupToken, response: answer },
    });
    expect([noPassword.status, noPassword.body.error]).toEqual([
      400,
      expect.objectContaining({ message: passwordProofRequired().message }),
    ]);
    expect((await api.get("/users/me/factors", { token: user.token })).body.factors).toEqual([]);
    const enrolled = await api.post("/users/me/factors/webauthn", {
      token: user.token,
      body: { name: "YubiKey", setupToken: options.body.setupToken, response: answer, authHash: user.bundle.authHash },
    });
    expect(enrolled.status).toBe(201);

    const step = await firstStep(user);
    expect(step.methods).toEqual(["webauthn", "recovery-code"]);
    const challenge = step.webauthn!.challenge;
    expect(step.webauthn).toMatchObject({ rpId: "localhost", allowCredentials: [{ id: key.credentialId.toString("base64url") }] });
    // Another origin: refused.
    expect((await secondStep(step.stepToken, { webauthn: key.answer(challenge, { origin: "http://localhost.evil.test" }) })).status).toBe(
      401,
    );
    const signedIn = await secondStep(step.stepToken, { webauthn: key.answer(challenge) });
    expect(signedIn.status).toBe(200);
    // The same challenge's answer on a new login (its own challenge): refused.
    const next = await firstStep(user);
    expect((await secondStep(next.stepToken, { webauthn: key.answer(challenge) })).status).toBe(401);
    // A clone of the key, whose counter went back: refused.
    key.counter = 1;
    expect((await secondStep(next.stepToken, { webauthn: key.answer(next.webauthn!.challenge, { keepCounter: true }) })).status).toBe(401);
    key.counter = 10;
    expect((await secondStep(next.stepToken, { webauthn: key.answer(next.webauthn!.challenge) })).status).toBe(200);
  });

  test("a burst of guesses at the second step compares at most the limit; the rest are 429, and the step token takes five tries", async () => {
    const { user, secret } = await withTotp();
    const steps = [await firstStep(user), await firstStep(user), await firstStep(user), await firstStep(user)];
    const wrong = codeAt(secret, 1) === "111111" ? "222222" : "111111";
    const burst = await Promise.all(steps.flatMap((s) => Array.from({ length: 6 }, () => secondStep(s.stepToken, { totpCode: wrong }))));
    const statuses = burst.map((r) => r.status);
    // LOGIN_MAX_FAILURES=6 per account and address: at most 6 compared; a step token's sixth try is refused before counting.
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(6 + 4);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(24 - 6 - 4);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // Even the right code waits now.
    const fresh = await firstStep(user).catch(() => null);
    if (fresh) expect((await secondStep(fresh.stepToken, { totpCode: codeAt(secret, 1) })).status).toBe(429);
  });

  test("a step begun before a password change does not sign in after it", async () => {
    const address = `late-${Date.now()}@example.test`;
    const owner = new VaultClient({ baseUrl: server.url });
    await owner.register({ email: address, password: SDK_PASSWORD, kdf: TEST_KDF, rsaBits: 2048 });
    const setup = await owner.factors.setupTotp();
    await owner.factors.confirmTotp(setup.setupToken, codeAt(setup.secret), "Phone", SDK_PASSWORD);
    // A first step with the right password, its token kept (as a phishing relay would).
    let stepToken = "";
    const relay: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).endsWith("/auth/login")) stepToken = ((await res.clone().json()) as { stepToken: string }).stepToken;
      return res;
    };
    const stopped = new VaultClient({ baseUrl: server.url, fetch: relay, secondFactor: async () => Promise.reject(new Error("stop")) });
    await expect(stopped.login(address, SDK_PASSWORD)).rejects.toThrow("stop");
    await owner.changePassword(SDK_PASSWORD, "a whole new horse battery staple", { kdf: TEST_KDF });
    const late = await secondStep(stepToken, { totpCode: codeAt(setup.secret, 1) });
    expect(late.status).toBe(401);
  });

  test("removing a factor takes the master password; then a login is one step again", async () => {
    const { user, secret } = await withTotp();
    const step = await firstStep(user);
    const login = await secondStep(step.stepToken, { totpCode: codeAt(secret, 1) });
    const token = login.body.accessToken;
    const [factor] = (await api.get("/users/me/factors", { token })).body.factors;
    expect(
      (await api.delete(`/users/me/factors/${factor.factorId}`, { token, body: { authHash: Buffer.alloc(32, 3).toString("base64") } }))
        .status,
    ).toBe(403);
    expect((await api.delete(`/users/me/factors/${factor.factorId}`, { token, body: { authHash: user.bundle.authHash } })).status).toBe(
      204,
    );
    const plain = await api.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } });
    expect(plain.body.accessToken).toEqual(expect.any(String));
    expect((await api.get("/users/me/factors", { token })).body).toEqual({ factors: [], recoveryCodesLeft: 0, required: false });
  });

  test("policies: only owners set them; a required factor leaves a member without one only enrolment; KDF floor and invite lifetime enforced", async () => {
    const owner = await registerUser(api);
    const inv = await invite(api, owner, "admin");
    const admin = await registerUser(api, { inviteToken: inv.token, email: inv.email });
    // The owner enrols first: a policy that requires a factor narrows every session without one, the owner's too.
    const ownerSetup = await api.post("/users/me/factors/totp/setup", { token: owner.token });
    const ownerApp = {
      name: "App",
      setupToken: ownerSetup.body.setupToken,
      code: codeAt(ownerSetup.body.secret),
      currentAuthHash: owner.bundle.authHash,
    };
    expect((await api.post("/users/me/factors/totp", { token: owner.token, body: ownerApp })).status).toBe(201);
    const body = {
      requireSecondFactor: true,
      minKdf: { argon2idMemoryKiB: 65536, argon2idIterations: 3, pbkdf2Iterations: 900_000 },
      inviteMaxLifetime: "48h",
      client: { minPasswordScore: 3 },
    };
    const refused = await api.put(`/orgs/${owner.orgId}/policies`, { token: admin.token, body });
    expect([refused.status, refused.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect(
      (await api.put(`/orgs/${owner.orgId}/policies`, { token: owner.token, body: { ...body, recoveryMinThreshold: 1 } })).status,
    ).toBe(400);
    const set = await api.put(`/orgs/${owner.orgId}/policies`, { token: owner.token, body });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ requireSecondFactor: true, clientOnly: ["client.minPasswordScore", "client.idleLockMinutes"] });
    expect((await api.get(`/orgs/${owner.orgId}/policies`, { token: admin.token })).body).toEqual(set.body);

    // The admin has no factor: a login that may only enrol.
    const login = await api.post("/auth/login", { body: { email: admin.email, authHash: admin.bundle.authHash } });
    expect(login.body.enrolOnly).toBe(true);
    const limited = login.body.accessToken;
    const blocked = await api.get("/vaults", { token: limited });
    expect([blocked.status, blocked.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect(blocked.body.error.message).toBe(enrolmentRequired().message);
    expect((await api.get("/users/me/factors", { token: limited })).body.required).toBe(true);
    // A refresh keeps the restriction.
    const refreshed = await api.post("/auth/refresh", { body: { refreshToken: login.body.refreshToken } });
    expect((await api.get("/vaults", { token: refreshed.body.accessToken })).status).toBe(403);
    // Enrolling takes the master password here too (test/api/factor-changes.test.ts: a stolen token cannot).
    const setup = await api.post("/users/me/factors/totp/setup", { token: limited });
    const enrolled = await api.post("/users/me/factors/totp", {
      token: limited,
      body: { name: "App", setupToken: setup.body.setupToken, code: codeAt(setup.body.secret), currentAuthHash: admin.bundle.authHash },
    });
    expect(enrolled.status).toBe(201);
    const step = await firstStep(admin);
    const full = await secondStep(step.stepToken, { totpCode: codeAt(setup.body.secret, 1) });
    expect(full.body.enrolOnly).toBeUndefined();
    expect((await api.get("/vaults", { token: full.body.accessToken })).status).toBe(200);
    // The last factor cannot go while the policy requires one.
    const removing = await api.delete(`/users/me/factors/${enrolled.body.factor.factorId}`, {
      token: full.body.accessToken,
      body: { authHash: admin.bundle.authHash },
    });
    expect([removing.status, removing.body.error.code]).toEqual([403, "FORBIDDEN"]);

    // Invites: asked beyond the cap, 400; without a lifetime, the cap.
    const long = await api.post("/invites", { token: owner.token, body: { email: "long@example.test", role: "member", expiresIn: "72h" } });
    expect([long.status, long.body.error.field]).toEqual([400, "expiresIn"]);
    const capped = await api.post("/invites", { token: owner.token, body: { email: "capped@example.test", role: "member" } });
    expect(Date.parse(capped.body.expiresAt) - Date.now()).toBeLessThanOrEqual(48 * 3_600_000 + 5_000);
    // Registration with a KDF below the organization's least: 400 on kdf (the test bundles use PBKDF2 at the floor, 600,000).
    const weak = await api.post("/auth/register", {
      body: { email: "capped@example.test", ...admin.bundle, inviteToken: capped.body.token },
    });
    expect([weak.status, weak.body.error.field]).toEqual([400, "kdf"]);
  });

  test("through the SDK: a login asks its prompt (again after a wrong code); without one it is SecondFactorRequiredError", async () => {
    const address = `sdk-${Date.now()}@example.test`;
    const owner = new VaultClient({ baseUrl: server.url });
    await owner.register({ email: address, password: SDK_PASSWORD, kdf: TEST_KDF, rsaBits: 2048 });
    const setup = await owner.factors.setupTotp();
    const { recoveryCodes } = await owner.factors.confirmTotp(setup.setupToken, codeAt(setup.secret), "Phone", SDK_PASSWORD);
    expect(recoveryCodes).toHaveLength(10);
    await expect(new VaultClient({ baseUrl: server.url }).login(address, SDK_PASSWORD)).rejects.toBeInstanceOf(SecondFactorRequiredError);
    const asked: boolean[] = [];
    const device = new VaultClient({
      baseUrl: server.url,
      secondFactor: async (c) => {
        asked.push(c.retry === true);
        return { totpCode: c.retry ? codeAt(setup.secret, 1) : "000000" };
      },
    });
    await device.login(address, SDK_PASSWORD);
    expect(asked).toEqual([false, true]);
    expect((await device.factors.list()).factors.map((f) => f.kind)).toEqual(["totp"]);
    expect((await device.factors.policies()).enforced).toContain("requireSecondFactor");
  });
});
