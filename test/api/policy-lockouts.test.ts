/**
 * Organization policies that would shut people out, over real HTTP: refused with 409 naming who,
 * the policies and everyone's sessions left as they were; made with `confirmLockOut` naming each
 * such policy. Each test has an organization of its own (open registration).
 */
import { Api, invite, registerUser, type TestUser } from "../helpers/client";
import { startTestServer, type TestServer } from "../helpers/server";

describe("policies that would shut people out", () => {
  let server: TestServer;
  let api: Api;

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATION_MODE: "open" });
    api = new Api(server.url);
  });
  afterAll(() => server.stop());

  /** A new organization: its owner, then invited people with these roles. */
  async function org(roles: Array<"admin" | "member">): Promise<[TestUser, ...TestUser[]]> {
    const owner = await registerUser(api);
    const people: TestUser[] = [];
    for (const role of roles) {
      const inv = await invite(api, owner, role);
      people.push(await registerUser(api, { inviteToken: inv.token, email: inv.email }));
    }
    return [owner, ...people];
  }
  const put = (owner: TestUser, body: Record<string, unknown>) =>
    api.put(`/orgs/${owner.orgId}/policies`, { token: owner.token, body: { requireSecondFactor: false, ...body } });
  const policiesOf = async (owner: TestUser) => (await api.get(`/orgs/${owner.orgId}/policies`, { token: owner.token })).body;

  test("a second factor required when no owner or admin has one: 409 naming them; nothing changes until confirmed", async () => {
    const [owner, admin, member] = await org(["admin", "member"]);
    const refused = await put(owner, { requireSecondFactor: true });
    expect([refused.status, refused.body.error.code, refused.body.error.field]).toEqual([409, "CONFLICT", "requireSecondFactor"]);
    expect(refused.body.error.message).toContain(`${owner.email}, ${admin!.email}`);
    expect(refused.body.error.message).not.toContain(member!.email);
    expect(refused.body.error.message).toContain('confirmLockOut: ["requireSecondFactor"]');
    // Nothing changed: the policy, and every session still reaches its vaults.
    expect((await policiesOf(owner)).requireSecondFactor).toBe(false);
    for (const who of [owner, admin!, member!]) expect((await api.get("/vaults", { token: who.token })).status).toBe(200);

    const confirmed = await put(owner, { requireSecondFactor: true, confirmLockOut: ["requireSecondFactor"] });
    expect([confirmed.status, confirmed.body.requireSecondFactor]).toEqual([200, true]);
  });

  test("a recovery threshold above the trustees people have: 409 naming them; confirmed, it is set", async () => {
    const [owner, a1, a2] = await org(["admin", "admin", "member"]);
    // Three owners and admins: each of them has two others to choose from, the member three.
    const refused = await put(owner, { recoveryMinThreshold: 3 });
    expect([refused.status, refused.body.error.field]).toEqual([409, "recoveryMinThreshold"]);
    expect(refused.body.error.message).toContain(`${owner.email}, ${a1!.email}, ${a2!.email} would have fewer`);
    expect((await policiesOf(owner)).recoveryMinThreshold).toBe(2);
    const confirmed = await put(owner, { recoveryMinThreshold: 3, confirmLockOut: ["recoveryMinThreshold"] });
    expect([confirmed.status, confirmed.body.recoveryMinThreshold]).toEqual([200, 3]);
  });

  test("invites of one second: 409; confirmed, new invites last one second", async () => {
    const [owner] = await org([]);
    const refused = await put(owner, { inviteMaxLifetime: "1s" });
    expect([refused.status, refused.body.error.field]).toEqual([409, "inviteMaxLifetime"]);
    expect(refused.body.error.message).toMatch(/nobody new could join/);
    expect((await policiesOf(owner)).inviteMaxLifetime).toBeUndefined();
    expect((await put(owner, { inviteMaxLifetime: "15m" })).status).toBe(200);
    expect((await put(owner, { inviteMaxLifetime: "1s", confirmLockOut: ["inviteMaxLifetime"] })).status).toBe(200);
    const made = await api.post("/invites", { token: owner.token, body: { email: "late@example.test", role: "member" } });
    expect(Date.parse(made.body.expiresAt) - server.clock.nowMs()).toBeLessThanOrEqual(1_000);
  });

  test("the confirmation names policies, nothing else: an unknown name or a wrong type is 400", async () => {
    const [owner] = await org([]);
    for (const confirmLockOut of [["everyone"], "inviteMaxLifetime", [1]]) {
      const res = await put(owner, { inviteMaxLifetime: "1s", confirmLockOut });
      expect([res.status, res.body.error.code]).toEqual([400, "INVALID"]);
    }
  });
});
