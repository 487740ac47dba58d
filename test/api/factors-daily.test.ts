/**
 * The second step's daily limit (lib/domain/accounts/second-factors.ts `decideDailySecondSteps`): someone
 * who has the password, guessing codes from addresses the account never signed in from, gets three
 * windows' worth of LOGIN_MAX_FAILURES a day, however the windows turn; the owner's own address
 * goes on past it. The clock is the server's, advanced.
 */
import { Api, registerUser } from "../helpers/client";
import { startTestServer, type TestServer } from "../helpers/server";
import { fromBase32, referenceTotp } from "../helpers/totp";

jest.setTimeout(60_000);

let server: TestServer;
let api: Api;
beforeAll(async () => {
  server = await startTestServer({ REGISTRATION_MODE: "open", LOGIN_MAX_FAILURES: "6", TRUST_PROXY: "1" });
  api = new Api(server.url);
});
afterAll(() => server?.stop());

test("from unknown addresses: 18 wrong codes a day (3 x 6), across windows; the owner's address still signs in", async () => {
  // Registered and signed in from the socket's own address (no proxy header): the owner's known address.
  const user = await registerUser(api);
  const setup = (await api.post("/users/me/factors/totp/setup", { token: user.token })).body;
  const code = referenceTotp(fromBase32(setup.secret), server.clock.nowMs());
  const enrol = { name: "App", setupToken: setup.setupToken, code, authHash: user.bundle.authHash };
  expect((await api.post("/users/me/factors/totp", { token: user.token, body: enrol })).status).toBe(201);
  const wrong = code === "111111" ? "222222" : "111111";
  const statuses: number[] = [];
  let refusal = "";
  for (let w = 0; w < 4; w++) {
    // Each window from another address the account never signed in from.
    const headers = { "x-forwarded-for": `198.51.100.${w + 1}` };
    const step = (await api.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash }, headers })).body;
    for (let i = 0; i < 5; i++) {
      const r = await api.post("/auth/login/second-factor", { body: { stepToken: step.stepToken, totpCode: wrong }, headers });
      statuses.push(r.status);
      if (r.status === 429) refusal = r.body.error.message;
    }
    server.clock.advance(16 * 60_000);
  }
  expect(statuses.filter((s) => s === 401)).toHaveLength(18);
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  expect(refusal).toMatch(/today/);
  // The owner, from where they signed in before, goes on.
  const step = (await api.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } })).body;
  const ok = await api.post("/auth/login/second-factor", {
    body: { stepToken: step.stepToken, totpCode: referenceTotp(fromBase32(setup.secret), server.clock.nowMs()) },
  });
  expect(ok.status).toBe(200);
});
