/**
 * A dishonest server against the SDK's view of the organization: a proxy between real clients and
 * the real service (test/helpers/dishonest-proxy.ts) rewrites what the service answers about who is
 * in the organization, with which role, and what a removal left to do. The organization's signed
 * log decides instead: each attack is refused with a named error (or shown for what it is), nothing
 * is written under a key a removed person holds, and the service's state is unchanged. On SQLite
 * and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { VaultClient } from "../../sdk";
import { Api } from "../helpers/client";
import { honest, startDishonestProxy, writesIn, type DishonestProxy } from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { newDevice } from "../helpers/devices";

jest.setTimeout(180_000);

const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

describe.each(SQL_ENGINES)("a dishonest server against the organization's signed log, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;

  const through = (device = newDevice()) => new VaultClient({ baseUrl: proxy.url, ...device });

  /** An organization whose log the owner adopted, with an admin and members who joined by signed invites. */
  async function org(roles: Array<"admin" | "member">) {
    const owner = through();
    await owner.register({ email: email("owner"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const people: VaultClient[] = [];
    for (const role of roles) {
      const address = email(role);
      const person = through();
      await person.register({
        email: address,
        password: PASSWORD,
        invite: (await owner.invites.create(address, role)).link,
        kdf: TEST_KDF,
        rsaBits: 2048,
      });
      people.push(person);
    }
    return { owner, people };
  }

  /** What the service holds of a vault, read honestly (not through the proxy). */
  async function stateOf(client: VaultClient, vaultId: string) {
    const token = { token: client.http.currentTokens!.accessToken };
    const [items, roster] = await Promise.all([api.get(`/vaults/${vaultId}/items`, token), api.get(`/vaults/${vaultId}/roster`, token)]);
    return { items: items.body, roster: roster.body };
  }

  async function refusedWithoutChange(client: VaultClient, vaultId: string, code: string, attack: () => Promise<unknown>) {
    const before = await stateOf(client, vaultId);
    const from = proxy.sent.length;
    await expect(attack()).rejects.toMatchObject({ name: "SecurityError", code });
    expect(writesIn(proxy.sent.slice(from)).filter((s) => !s.path.startsWith("/auth/"))).toEqual([]);
    expect(await stateOf(client, vaultId)).toEqual(before);
  }

  beforeAll(async () => {
    store = await openStore();
    server = await startTestServer({ ...store.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    proxy = await startDishonestProxy(new URL(server.url).origin);
  });
  afterEach(() => {
    proxy.edit = honest;
  });
  afterAll(async () => {
    await proxy.close();
    await server.stop();
    await store.drop();
  });

  test("1. a removal whose answer leaves a vault out: no colleague writes to it, and finishing the removal rekeys it all the same", async () => {
    const { owner: ada, people } = await org(["member", "member"]);
    const [bo, cy] = people as [VaultClient, VaultClient];
    const team = await ada.vaults.create("Team");
    await ada.members.share(team.vaultId, bo.account.userId);
    await ada.members.share(team.vaultId, cy.account.userId);
    await ada.items.add(team.vaultId, { name: "GitHub", fields: { password: "before" } });
    // The server leaves the vault out of the removal's answer, and says no rekey is due there.
    proxy.edit = (method, path, body) => {
      if (method === "DELETE" && path.startsWith(`/orgs/${ada.account.orgId}/members/`)) return { ...body, vaults: [] };
      if (method === "GET" && path === `/vaults/${team.vaultId}`) return { ...body, rekeyRequired: false };
      if (method === "GET" && path === "/vaults") return { vaults: body.vaults.map((v: object) => ({ ...v, rekeyRequired: false })) };
      return body;
    };
    const removal = await ada.people.remove(bo.account.userId);
    expect(removal.vaults).toEqual([]);
    // The vault's roster still names bo, whom the signed log took out: nothing new goes in under the key bo holds.
    await refusedWithoutChange(cy, team.vaultId, "REKEY_REQUIRED", () =>
      cy.items.add(team.vaultId, { name: "new", fields: { password: "after" } }),
    );
    await refusedWithoutChange(cy, team.vaultId, "REKEY_REQUIRED", () => cy.members.share(team.vaultId, ada.account.userId, "admin"));
    const finished = await ada.people.finishRemoval(removal);
    proxy.edit = honest;
    expect(finished.rekeyed).toEqual([team.vaultId]);
    const roster = await ada.members.roster(team.vaultId);
    expect(roster!.state.members.has(bo.account.userId)).toBe(false);
    await expect(cy.items.add(team.vaultId, { name: "new", fields: { password: "after" } })).resolves.toMatchObject({ name: "new" });
  });

  test("2. a member shown as the organization's owner: the signed log's role is the one shown, with who signed it", async () => {
    const { owner: ada, people } = await org(["member"]);
    const [bo] = people as [VaultClient];
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/orgs/${ada.account.orgId}/members`
        ? { members: body.members.map((m: { userId: string }) => (m.userId === bo.account.userId ? { ...m, role: "owner" } : m)) }
        : body;
    const listed = (await ada.people.list()).find((m) => m.userId === bo.account.userId);
    expect(listed).toMatchObject({ role: "member", orgLog: "signed", signedBy: ada.account.userId });
    expect(await ada.people.find(bo.account.email)).toMatchObject({ role: "member", orgLog: "signed" });
  });

  test("3. the log answered without the removal this device signed, or with a role rewritten: refused by name, and no write follows", async () => {
    const { owner: ada, people } = await org(["member", "admin"]);
    const [bo, cy] = people as [VaultClient, VaultClient];
    const mine = await ada.vaults.create("Ada's");
    await ada.people.remove(bo.account.userId);
    const orgLogPath = `/orgs/${ada.account.orgId}/log`;
    proxy.edit = (method, path, body) => (method === "GET" && path === orgLogPath ? { links: body.links.slice(0, -1) } : body);
    await expect(ada.people.log()).rejects.toMatchObject({ code: "ORG_LOG_ROLLBACK" });
    await refusedWithoutChange(ada, mine.vaultId, "ORG_LOG_ROLLBACK", () =>
      ada.items.add(mine.vaultId, { name: "x", fields: { pw: "1" } }),
    );
    // A new device of an admin, shown an adoption that makes her an owner: not signed so.
    proxy.edit = (method, path, body) =>
      method === "GET" && path === orgLogPath
        ? {
            links: body.links.map((l: any) =>
              l.op === "adopt" ? l : l.subject?.userId === cy.account.userId ? { ...l, subject: { ...l.subject, role: "owner" } } : l,
            ),
          }
        : body;
    const fresh = through();
    await fresh.login(cy.account.email, PASSWORD);
    await expect(fresh.people.list()).rejects.toMatchObject({ code: "ORG_LOG_BROKEN" });
  });
});
