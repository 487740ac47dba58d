/**
 * Races, with real concurrent HTTP requests against one server, on each SQL engine: SQLite (one
 * connection: every transaction waits for the one before) and PostgreSQL (a pool of connections
 * whose transactions do run side by side, so only the row locks keep the rules).
 */
import { randomUUID } from "node:crypto";
import { Api, invite, newOrg, rekeyBody, sharedVault, shareBody, type TestUser } from "../helpers/client";
import { decryptItem, encryptItem, newUserKeys, newVaultKey, registrationBundle } from "../helpers/crypto";
import { SQL_ENGINES } from "../helpers/postgres";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(120_000);

const jitter = () => Math.floor(Math.random() * 4) + 1;
const later = <T>(ms: number, fn: () => Promise<T>) =>
  new Promise<T>((resolve, reject) => setTimeout(() => fn().then(resolve, reject), ms));

/**
 * The rounds of a race test: first each order once for certain (a, then b; b, then a), so both
 * outcomes are checked whatever the scheduler does; then `races` rounds of both at once, one side
 * starting a few ms late in turn.
 */
type Order = "a first" | "b first" | "race";
const orders = (races: number): Order[] => ["a first", "b first", ...Array.from({ length: races }, (): Order => "race")];

async function inOrder<A, B>(order: Order, round: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (order === "a first") {
    const ra = await a();
    return [ra, await b()];
  }
  if (order === "b first") {
    const rb = await b();
    return [await a(), rb];
  }
  return Promise.all([later(round % 2 === 0 ? 0 : jitter(), a), later(round % 2 === 1 ? 0 : jitter(), b)]);
}

describe.each(SQL_ENGINES)("races on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let owner: TestUser, admin: TestUser, member: TestUser;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    api = new Api(server.url);
    const org = await newOrg(api, ["admin", "member"]);
    owner = org.owner;
    [admin, member] = org.users as [TestUser, TestUser];
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  test("20 registrations with one invite token: exactly one succeeds", async () => {
    const inv = await invite(api, owner, "member");
    const bundles = await Promise.all(Array.from({ length: 20 }, async () => registrationBundle(await newUserKeys())));
    const replies = await Promise.all(
      bundles.map((b) => api.post("/auth/register", { body: { email: inv.email, ...b, inviteToken: inv.token } })),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    for (const r of replies.filter((x) => x.status !== 201)) {
      expect([r.status, r.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
    }
    const members = (await api.get(`/orgs/${owner.orgId}/members`, { token: owner.token })).body.members;
    expect(members.filter((m: any) => m.email === inv.email)).toHaveLength(1);
  });

  test("two owners leaving one vault at once: one stays, every time", async () => {
    for (let round = 0; round < 25; round++) {
      const { vaultId } = await sharedVault(api, owner, [[admin, "admin"]]);
      const promoted = await api.patch(`/vaults/${vaultId}/members/${admin.userId}`, { token: owner.token, body: { role: "owner" } });
      expect(promoted.status).toBe(200);
      const [a, b] = await Promise.all([
        api.delete(`/vaults/${vaultId}/members/${owner.userId}`, { token: owner.token }),
        api.delete(`/vaults/${vaultId}/members/${admin.userId}`, { token: admin.token }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 400]);
      const loser = a.status === 400 ? a : b;
      expect(loser.body.error.code).toBe("INVALID");
      const stayer = a.status === 400 ? owner : admin;
      const members = await api.get(`/vaults/${vaultId}/members`, { token: stayer.token });
      expect(members.body.members.map((m: any) => [m.userId, m.role])).toEqual([[stayer.userId, "owner"]]);
    }
  });

  test("two owners removing each other at once: one stays, every time", async () => {
    for (let round = 0; round < 25; round++) {
      const { vaultId } = await sharedVault(api, owner, [[admin, "admin"]]);
      await api.patch(`/vaults/${vaultId}/members/${admin.userId}`, { token: owner.token, body: { role: "owner" } });
      const [a, b] = await Promise.all([
        api.delete(`/vaults/${vaultId}/members/${admin.userId}`, { token: owner.token }),
        api.delete(`/vaults/${vaultId}/members/${owner.userId}`, { token: admin.token }),
      ]);
      // The winner removes the other; the loser, no longer a member, gets 404.
      expect([a.status, b.status].sort()).toEqual([200, 404]);
      const owners = [owner, admin];
      const remaining = await Promise.all(owners.map((u) => api.get(`/vaults/${vaultId}/members`, { token: u.token })));
      const visible = remaining.filter((r) => r.status === 200);
      expect(visible).toHaveLength(1);
      expect(visible[0]!.body.members.filter((m: any) => m.role === "owner")).toHaveLength(1);
    }
  });

  /**
   * A vault with three items, and a rekey of them prepared by a client that read them before the
   * race, stating the revision it read of each (as the SDK does).
   */
  async function vaultReadyForRekey() {
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
    for (let i = 0; i < 3; i++) {
      const res = await api.post(`/vaults/${vaultId}/items`, {
        token: member.token,
        body: encryptItem(vaultKey, vaultId, randomUUID(), `s${i}`, `n${i}`),
      });
      expect(res.status).toBe(201);
    }
    const current = (await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items;
    const newKey = newVaultKey();
    const reencrypted = current.map((it: any) => {
      const p = decryptItem(vaultKey, it);
      return { ...encryptItem(newKey, vaultId, it.itemId, p.data, p.name), revision: it.revision as number };
    });
    const rekey = () =>
      api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner, member], reencrypted) });
    return { vaultId, vaultKey, newKey, itemIds: current.map((it: any) => it.itemId as string), rekey };
  }

  /** Whatever won, every item opens with the vault's current key and carries its version. */
  async function everyItemOpensWithTheCurrentKey(vaultId: string, oldKey: Buffer, newKey: Buffer) {
    const vault = (await api.get(`/vaults/${vaultId}`, { token: owner.token })).body;
    const key = vault.keyVersion === 2 ? newKey : oldKey;
    const items = (await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items;
    for (const it of items) {
      expect(() => decryptItem(key, it)).not.toThrow();
      expect(it.keyVersion).toBe(vault.keyVersion);
    }
    return { keyVersion: vault.keyVersion as number, items };
  }

  test("a rekey racing an item create: the rekey is refused or the item is refused, never an item under the old key", async () => {
    let rekeyWon = 0,
      createWon = 0;
    const rounds = orders(20);
    for (let round = 0; round < rounds.length; round++) {
      // The rekeying client read the items before the new one appeared.
      const { vaultId, vaultKey, newKey, rekey } = await vaultReadyForRekey();
      const newId = randomUUID();
      // The writing client states the key version it encrypted under. Either request may start first.
      const [rk, create] = await inOrder(rounds[round]!, round, rekey, () =>
        api.post(`/vaults/${vaultId}/items`, {
          token: member.token,
          body: { ...encryptItem(vaultKey, vaultId, newId, "late", "late"), keyVersion: 1 },
        }),
      );
      if (rk.status === 204) {
        rekeyWon++;
        expect([create.status, create.body.error.code]).toEqual([409, "CONFLICT"]);
      } else {
        createWon++;
        expect([rk.status, rk.body.error.code, rk.body.error.field]).toEqual([400, "INVALID", "items"]);
        expect(create.status).toBe(201);
      }
      await everyItemOpensWithTheCurrentKey(vaultId, vaultKey, newKey);
    }
    expect(rekeyWon + createWon).toBe(rounds.length);
    // Both orders happened (the first two rounds force them): the test saw each side win.
    expect(rekeyWon).toBeGreaterThan(0);
    expect(createWon).toBeGreaterThan(0);
  });

  test("a rekey racing an item update: whichever lands second is refused (409), so the update is never overwritten by the rekey's older copy", async () => {
    /** One round (see `orders`); `a` is the rekey, `b` the update. */
    async function round(order: Order, n: number): Promise<string> {
      const { vaultId, vaultKey, newKey, itemIds, rekey } = await vaultReadyForRekey();
      const target = itemIds[1]!;
      const update = () =>
        api.put(`/vaults/${vaultId}/items/${target}`, {
          token: member.token,
          body: { ...encryptItem(vaultKey, vaultId, target, "edited", "edited"), keyVersion: 1 },
        });
      const [rk, up] = await inOrder(order, n, rekey, update);
      const { keyVersion, items } = await everyItemOpensWithTheCurrentKey(vaultId, vaultKey, newKey);
      const edited = items.find((it: any) => it.itemId === target);
      expect(items).toHaveLength(3);
      if (up.status === 200) {
        expect([rk.status, rk.body.error.code, rk.body.error.field]).toEqual([409, "CONFLICT", "revision"]);
        expect(keyVersion).toBe(1);
        expect(decryptItem(vaultKey, edited).data).toBe("edited");
        return "update first";
      }
      expect(rk.status).toBe(204);
      expect([up.status, up.body.error.code]).toEqual([409, "CONFLICT"]);
      expect(keyVersion).toBe(2);
      expect(decryptItem(newKey, edited).data).toBe("s1");
      return "rekey first";
    }
    const rounds = orders(20);
    const outcomes = [];
    for (let n = 0; n < rounds.length; n++) outcomes.push(await round(rounds[n]!, n));
    // The forced rounds went their way: each outcome was checked at least once.
    expect(outcomes.slice(0, 2)).toEqual(["rekey first", "update first"]);
  });

  test("a rekey racing an item delete: the rekey is refused (its item set is stale) or the delete follows it, never a mixed state", async () => {
    const outcomes = new Set<string>();
    const rounds = orders(20);
    for (let round = 0; round < rounds.length; round++) {
      const { vaultId, vaultKey, newKey, itemIds, rekey } = await vaultReadyForRekey();
      const target = itemIds[0]!;
      const [rk, del] = await inOrder(rounds[round]!, round, rekey, () =>
        api.delete(`/vaults/${vaultId}/items/${target}`, { token: member.token }),
      );
      expect(del.status).toBe(204);
      if (rk.status === 204) outcomes.add("rekey first");
      else {
        outcomes.add("delete first");
        expect([rk.status, rk.body.error.code, rk.body.error.field]).toEqual([400, "INVALID", "items"]);
      }
      const { keyVersion, items } = await everyItemOpensWithTheCurrentKey(vaultId, vaultKey, newKey);
      expect(keyVersion).toBe(rk.status === 204 ? 2 : 1);
      expect(items.map((it: any) => it.itemId).sort()).toEqual(itemIds.filter((id: string) => id !== target).sort());
    }
    expect([...outcomes].sort()).toEqual(["delete first", "rekey first"]);
  });

  test("a rekey racing a new share: the rekey is refused or the share is, never a member without the new key", async () => {
    const outcomes = new Set<number>();
    const rounds = orders(15);
    for (let round = 0; round < rounds.length; round++) {
      const { vaultId, vaultKey } = await sharedVault(api, owner, [[admin, "admin"]]);
      const newKey = newVaultKey();
      const [rekey, share] = await inOrder(
        rounds[round]!,
        round,
        () => api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner, admin], []) }),
        () =>
          api.post(`/vaults/${vaultId}/members`, { token: admin.token, body: { ...shareBody(vaultKey, admin, member), keyVersion: 1 } }),
      );
      outcomes.add(rekey.status);
      expect([rekey.status, share.status].sort()).toEqual(rekey.status === 204 ? [204, 409] : [204, 400]);
      const members = (await api.get(`/vaults/${vaultId}/members`, { token: owner.token })).body.members;
      const vault = (await api.get(`/vaults/${vaultId}`, { token: owner.token })).body;
      expect(members).toHaveLength(rekey.status === 204 ? 2 : 3);
      expect(vault.keyVersion).toBe(rekey.status === 204 ? 2 : 1);
    }
    expect([...outcomes].sort()).toEqual([204, 400]);
  });
});
