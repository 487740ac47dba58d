/**
 * Second factors bound to the master password, and sessions that follow factor and policy changes,
 * over HTTP on SQLite and PostgreSQL: a stolen access token (one that may only enrol included)
 * cannot bind the thief's factor nor read recovery codes; a refresh keeps a session's scope; a
 * policy that comes to require a factor narrows the sessions already signed in, at their next
 * request; a setup enrols once, and a key once per account; a factor change ends the account's
 * other sessions, which are told why. Real TOTP codes (test/helpers/totp.ts) and a software
 * security key with real signatures (test/helpers/webauthn.ts).
 */
import { Api, invite, registerUser, type TestUser } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import {
  credentialEnrolledAlready,
  enrolmentRequired,
  factorSetupUsed,
  passwordProofRequired,
  sessionEndedByFactorChange,
  wrongCurrentPassword,
} from "../../lib/domain/accounts/refusals";
import { startTestServer, type TestServer } from "../helpers/server";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { SoftKey } from "../helpers/webauthn";

jest.setTimeout(180_000);

const wrongProof = Buffer.alloc(32, 5).toString("base64");

describe.each(SQL_ENGINES)("factor changes and session scope, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await openDatabase();
    dropDatabase = db.drop;
    server = await startTestServer({ ...db.env, REGISTRATION_MODE: "open", LOGIN_MAX_FAILURES: "3", SESSION_CHECK_INTERVAL: "30s" });
    api = new Api(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  /** A TOTP code on the server's clock (a test moves it on). */
  const codeAt = (secret: string, offsetSteps = 0) => referenceTotp(fromBase32(secret), server.clock.nowMs() + offsetSteps * 30_000);
  const softKey = () => new SoftKey(new URL(server.url).origin.replace("127.0.0.1", "localhost"));

  /** A password login (one step: the account has no factor). */
  async function login(who: TestUser, deviceName = "laptop") {
    const res = await api.post("/auth/login", { body: { email: who.email, authHash: who.bundle.authHash, deviceName } });
    expect(res.status).toBe(200);
    return res.body as { accessToken: string; refreshToken: string; enrolOnly?: true };
  }
  const vaults = async (token: string) => (await api.get("/vaults", { token })).status;
  /** What an access token says of itself (`enr`: it may only enrol), read as any holder can. */
  const claims = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { enr?: true };

  async function totpSetup(token: string) {
    const setup = await api.post("/users/me/factors/totp/setup", { token });
    expect(setup.status).toBe(200);
    return setup.body as { secret: string; setupToken: string };
  }
  const enrolTotp = (token: string, setup: { secret: string; setupToken: string }, proof?: Record<string, string>, step = 0) =>
    api.post("/users/me/factors/totp", {
      token,
      body: { name: "Phone", setupToken: setup.setupToken, code: codeAt(setup.secret, step), ...proof },
    });
  async function keyOptions(token: string) {
    const options = await api.post("/users/me/factors/webauthn/options", { token });
    expect(options.status).toBe(200);
    return options.body as { options: { challenge: string }; setupToken: string };
  }
  const enrolKey = (token: string, setupToken: string, response: unknown, proof?: Record<string, string>) =>
    api.post("/users/me/factors/webauthn", { token, body: { name: "YubiKey", setupToken, response, ...proof } });

  /**
   * An organization whose owner has an authenticator app (their session `owner.token` stays whole
   * under any policy), a member with a whole session (`member.token`), and the policy's switch.
   */
  async function org() {
    const owner = await registerUser(api);
    expect((await enrolTotp(owner.token, await totpSetup(owner.token), { currentAuthHash: owner.bundle.authHash })).status).toBe(201);
    const inv = await invite(api, owner, "member");
    const member = await registerUser(api, { inviteToken: inv.token, email: inv.email });
    const requireFactor = async (on: boolean) => {
      const body = { requireSecondFactor: on, recoveryMinThreshold: 2, client: { minPasswordScore: 0 } };
      expect((await api.put(`/orgs/${owner.orgId}/policies`, { token: owner.token, body })).status).toBe(200);
    };
    return { owner, member, requireFactor };
  }

  test("a stolen enrol-only access token cannot enrol the thief's factor without the password, nor read the recovery codes", async () => {
    const { member, requireFactor } = await org();
    await requireFactor(true);
    // The thief holds a login that may only enrol (its access token, taken from the member's device).
    const stolen = await login(member, "stolen");
    expect(stolen.enrolOnly).toBe(true);
    const setup = await totpSetup(stolen.accessToken);
    const noProof = await enrolTotp(stolen.accessToken, setup);
    expect([noProof.status, noProof.body.error]).toEqual([
      400,
      { code: "INVALID", message: passwordProofRequired().message, field: "currentAuthHash" },
    ]);
    expect(noProof.body.recoveryCodes).toBeUndefined();
    const key = softKey();
    const options = await keyOptions(stolen.accessToken);
    const keyNoProof = await enrolKey(stolen.accessToken, options.setupToken, key.register(options.options));
    expect([keyNoProof.status, keyNoProof.body.error.message]).toEqual([400, passwordProofRequired().message]);
    // A guess at the password counts as a failed password check: LOGIN_MAX_FAILURES (3) per session, then 429.
    for (let i = 0; i < 3; i++) {
      const guess = await enrolTotp(stolen.accessToken, setup, { currentAuthHash: wrongProof });
      expect([guess.status, guess.body.error.message]).toEqual([403, wrongCurrentPassword().message]);
    }
    expect((await enrolTotp(stolen.accessToken, setup, { currentAuthHash: wrongProof })).status).toBe(429);
    expect((await api.get("/users/me/factors", { token: stolen.accessToken })).body).toMatchObject({ factors: [], recoveryCodesLeft: 0 });

    // The member, with the password, enrols their own app: it comes with the recovery codes, and the thief's login ends, saying why.
    const own = await login(member, "phone");
    const enrolled = await enrolTotp(own.accessToken, await totpSetup(own.accessToken), { currentAuthHash: member.bundle.authHash });
    expect(enrolled.status).toBe(201);
    expect(enrolled.body.recoveryCodes).toHaveLength(10);
    const after = await api.get("/users/me/factors", { token: stolen.accessToken });
    expect([after.status, after.body.error.message]).toEqual([401, sessionEndedByFactorChange().message]);
    expect((await api.post("/auth/refresh", { body: { refreshToken: stolen.refreshToken } })).status).toBe(401);
  });

  test("a refresh of an enrol-only session stays enrol-only; only the enrolment with the password, or a login, makes a session whole", async () => {
    const { member, requireFactor } = await org();
    await requireFactor(true);
    const limited = await login(member);
    expect(limited.enrolOnly).toBe(true);
    // The policy is turned off again: the enrol-only session stays so across a refresh; a new login is whole.
    await requireFactor(false);
    const refreshed = await api.post("/auth/refresh", { body: { refreshToken: limited.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect(claims(refreshed.body.accessToken).enr).toBe(true);
    const blocked = await api.get("/vaults", { token: refreshed.body.accessToken });
    expect([blocked.status, blocked.body.error.message]).toEqual([403, enrolmentRequired().message]);
    const fresh = await login(member);
    expect(fresh.enrolOnly).toBeUndefined();
    expect(await vaults(fresh.accessToken)).toBe(200);

    // Under the policy again: an enrol-only session that enrols with the password is whole from its next token on.
    await requireFactor(true);
    const enrolling = await login(member, "enrolling");
    expect(enrolling.enrolOnly).toBe(true);
    const enrolled = await enrolTotp(enrolling.accessToken, await totpSetup(enrolling.accessToken), {
      currentAuthHash: member.bundle.authHash,
    });
    expect(enrolled.status).toBe(201);
    const whole = await api.post("/auth/refresh", { body: { refreshToken: enrolling.refreshToken } });
    expect(claims(whole.body.accessToken).enr).toBeUndefined();
    expect(await vaults(whole.body.accessToken)).toBe(200);
    // The others ended with the enrolment (the earlier enrol-only one among them).
    expect((await api.post("/auth/refresh", { body: { refreshToken: refreshed.body.refreshToken } })).status).toBe(401);
  });

  test("an access token issued before the policy loses its full rights at its next request, not when it expires", async () => {
    const { owner, member, requireFactor } = await org();
    expect(await vaults(member.token)).toBe(200);
    await requireFactor(true);
    const narrowed = await api.get("/vaults", { token: member.token });
    expect([narrowed.status, narrowed.body.error.message]).toEqual([403, enrolmentRequired().message]);
    // It may enrol, as a login under the policy may; a refresh keeps it so.
    expect((await api.get("/users/me/factors", { token: member.token })).body).toMatchObject({ factors: [], required: true });
    const refreshed = await api.post("/auth/refresh", { body: { refreshToken: member.refreshToken } });
    expect(await vaults(refreshed.body.accessToken)).toBe(403);
    // The owner has a factor: untouched.
    expect(await vaults(owner.token)).toBe(200);
  });

  test("a policy turned on while the member signs in: every session it leaves may only enrol", async () => {
    const { member, requireFactor } = await org();
    // The policy lands at a different moment of the logins in each round (they compare the password first, then start their sessions).
    for (const delayMs of [0, 25, 50, 75, 100, 150, 200]) {
      await requireFactor(false);
      // As many at once as LOGIN_MAX_FAILURES (3) lets one address and account count before comparing.
      const logins = Array.from({ length: 3 }, (_, i) =>
        api.post("/auth/login", { body: { email: member.email, authHash: member.bundle.authHash, deviceName: `device ${i}` } }),
      );
      const policy = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => requireFactor(true));
      const [, ...signedIn] = await Promise.all([policy, ...logins]);
      for (const res of signedIn) {
        expect(res.status).toBe(200);
        expect(await vaults(res.body.accessToken)).toBe(403);
      }
    }
  });

  test("a setup enrols once: a replayed WebAuthn challenge, two answers to one at once, an app's setup after its removal", async () => {
    const user = await registerUser(api);
    const proof = { currentAuthHash: user.bundle.authHash };
    const options = await keyOptions(user.token);
    expect((await enrolKey(user.token, options.setupToken, softKey().register(options.options), proof)).status).toBe(201);
    // Another key's answer to the same challenge: refused, nothing stored.
    const replay = await enrolKey(user.token, options.setupToken, softKey().register(options.options), proof);
    expect([replay.status, replay.body.error]).toEqual([400, { code: "INVALID", message: factorSetupUsed().message, field: "setupToken" }]);
    // Two answers to one challenge at once: one lands.
    const shared = await keyOptions(user.token);
    const both = await Promise.all(
      [softKey(), softKey()].map((k) => enrolKey(user.token, shared.setupToken, k.register(shared.options), proof)),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 400]);
    expect((await api.get("/users/me/factors", { token: user.token })).body.factors).toHaveLength(2);

    // An app's setup, once enrolled and removed, does not enrol it again.
    const setup = await totpSetup(user.token);
    const app = await enrolTotp(user.token, setup, proof);
    expect(app.status).toBe(201);
    expect((await api.delete(`/users/me/factors/${app.body.factor.factorId}`, { token: user.token, body: proof })).status).toBe(204);
    const again = await enrolTotp(user.token, setup, proof, 1);
    expect([again.status, again.body.error.message]).toEqual([400, factorSetupUsed().message]);
  });

  test("one security key (by its credential id) registers once per account", async () => {
    const user = await registerUser(api);
    const proof = { currentAuthHash: user.bundle.authHash };
    const key = softKey();
    const first = await keyOptions(user.token);
    expect((await enrolKey(user.token, first.setupToken, key.register(first.options), proof)).status).toBe(201);
    const second = await keyOptions(user.token);
    const twice = await enrolKey(user.token, second.setupToken, key.register(second.options), proof);
    expect([twice.status, twice.body.error]).toEqual([
      409,
      { code: "CONFLICT", message: credentialEnrolledAlready().message, field: "response" },
    ]);
    expect((await api.get("/users/me/factors", { token: user.token })).body.factors).toHaveLength(1);
  });

  test("enrolling, removing a factor and new recovery codes end the account's other sessions, which are told why", async () => {
    const user = await registerUser(api);
    const proof = { currentAuthHash: user.bundle.authHash };
    const [phone, laptop] = [await login(user, "phone"), await login(user, "laptop")];
    const setup = await totpSetup(user.token);
    expect((await enrolTotp(user.token, setup, proof)).status).toBe(201);
    const ended = await api.get("/vaults", { token: phone.accessToken });
    expect([ended.status, ended.body.error]).toEqual([401, { code: "UNAUTHORIZED", message: sessionEndedByFactorChange().message }]);
    expect((await api.post("/auth/refresh", { body: { refreshToken: phone.refreshToken } })).status).toBe(401);
    // The session that enrolled goes on, and is the only one left.
    expect(await vaults(user.token)).toBe(200);
    expect((await api.get("/users/me/sessions", { token: user.token })).body.sessions).toEqual([
      expect.objectContaining({ current: true }),
    ]);

    // A device signed in with the factor; then the factor's removal, from the first session, ends it.
    const step = (await api.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } })).body;
    const tablet = await api.post("/auth/login/second-factor", { body: { stepToken: step.stepToken, totpCode: codeAt(setup.secret, 1) } });
    expect(await vaults(tablet.body.accessToken)).toBe(200);
    const [app] = (await api.get("/users/me/factors", { token: user.token })).body.factors;
    expect((await api.delete(`/users/me/factors/${app.factorId}`, { token: user.token, body: proof })).status).toBe(204);
    expect((await api.get("/vaults", { token: tablet.body.accessToken })).body.error.message).toBe(sessionEndedByFactorChange().message);

    // New recovery codes, from the first session (a key enrolled first): a device signed in since with a recovery code ends too.
    const options = await keyOptions(user.token);
    const key = await enrolKey(user.token, options.setupToken, softKey().register(options.options), proof);
    expect(key.status).toBe(201);
    const deskStep = (await api.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } })).body;
    const desk = await api.post("/auth/login/second-factor", {
      body: { stepToken: deskStep.stepToken, recoveryCode: key.body.recoveryCodes[0] },
    });
    expect(await vaults(desk.body.accessToken)).toBe(200);
    expect((await api.post("/users/me/factors/recovery-codes", { token: user.token, body: proof })).status).toBe(201);
    expect((await api.get("/vaults", { token: desk.body.accessToken })).body.error.message).toBe(sessionEndedByFactorChange().message);
    expect(await vaults(user.token)).toBe(200);

    // Past SESSION_CHECK_INTERVAL the gateway reads the ended session again: it still says why.
    server.clock.advance(31_000);
    const later = await api.get("/vaults", { token: laptop.accessToken });
    expect([later.status, later.body.error.message]).toEqual([401, sessionEndedByFactorChange().message]);
  });
});
