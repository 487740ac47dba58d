/**
 * A dishonest server against what a device knows of its vaults: a proxy between real clients and
 * the real service (test/helpers/dishonest-proxy.ts) hides a vault the device saw, gives its name
 * to a colleague's genuinely signed vault, or states a vault's type otherwise than its signed
 * creation. Each is refused with a named error, nothing is written for the wrong vault, and the
 * service's state is unchanged; a vault the person deleted, left or confirmed gone is not asked
 * about again. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { VaultClient, VaultListChanged } from "../../sdk";
import { Api } from "../helpers/client";
import { honest, startDishonestProxy, writesIn, type DishonestProxy, type Edit } from "../helpers/dishonest-proxy";
import { SQL_ENGINES, type ServerStore } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { newDevice } from "../helpers/devices";

jest.setTimeout(180_000);

const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** The server leaves `vaultId` out of the caller's list of vaults. */
const hiding =
  (vaultId: string): Edit =>
  (method, path, body) =>
    method === "GET" && path === "/vaults" ? { vaults: body.vaults.filter((v: any) => v.vaultId !== vaultId) } : body;

/** The server states `vaultId` as of type `type`, in the list and in the vault's own record. */
const retyping =
  (vaultId: string, type: "personal" | "shared"): Edit =>
  (method, path, body) => {
    const retyped = (v: any) => (v.vaultId === vaultId ? { ...v, vaultType: type } : v);
    if (method === "GET" && path === "/vaults") return { vaults: body.vaults.map(retyped) };
    if (method === "GET" && path === `/vaults/${vaultId}`) return retyped(body);
    return body;
  };

/** A stored item as a kept revision has it (no `updatedAt`). */
const asKept = ({ updatedAt: _updated, ...rest }: any) => rest;

describe.each(SQL_ENGINES)("a dishonest server against the vaults a device knows, on %s", (_engine, openStore) => {
  let store: ServerStore;
  let server: TestServer;
  let proxy: DishonestProxy;
  let api: Api;

  const through = (device = newDevice()) => new VaultClient({ baseUrl: proxy.url, ...device });

  async function org(members: number) {
    const owner = through();
    await owner.register({ email: email("owner"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const people: VaultClient[] = [];
    for (let i = 0; i < members; i++) {
      const address = email("member");
      const person = through();
      await person.register({
        email: address,
        password: PASSWORD,
        invite: (await owner.invites.create(address, "member")).link,
        kdf: TEST_KDF,
        rsaBits: 2048,
      });
      people.push(person);
    }
    return { owner, people };
  }

  /** What the service holds of vaults, read honestly (not through the proxy) with `client`'s token. */
  async function stateOf(client: VaultClient, vaultIds: string[]) {
    const token = { token: client.http.currentTokens!.accessToken };
    const out: unknown[] = [];
    for (const id of vaultIds)
      out.push(
        ...(await Promise.all(["", "/items", "/roster", "/members"].map((p) => api.get(`/vaults/${id}${p}`, token)))).map((r) => r.body),
      );
    return out;
  }

  async function refusedWithoutChange(client: VaultClient, vaultIds: string[], code: string, attack: () => Promise<unknown>) {
    const before = await stateOf(client, vaultIds);
    const from = proxy.sent.length;
    const err = await attack().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: "SecurityError", code });
    expect(writesIn(proxy.sent.slice(from)).filter((s) => !s.path.startsWith("/auth/"))).toEqual([]);
    expect(await stateOf(client, vaultIds)).toEqual(before);
    return err;
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

  test("4. a colleague's signed vault under the name of the user's own, the user's hidden: NAME_MOVED, not the colleague's vault", async () => {
    const { owner: ada, people } = await org(1);
    const [bo] = people as [VaultClient];
    const mine = await ada.vaults.create("Passwords");
    await ada.items.add(mine.vaultId, { name: "bank", fields: { password: "mine" } });
    expect((await ada.vaults.listChecked()).map((v) => v.vaultId)).toEqual([mine.vaultId]);
    // Bo makes a vault of exactly that name (signed by bo, genuinely) and shares it with ada.
    const lookalike = await bo.vaults.create("Passwords");
    await bo.members.share(lookalike.vaultId, ada.account.userId);
    const both = await ada.vaults.listChecked();
    expect(both.find((v) => v.vaultId === lookalike.vaultId)).toMatchObject({
      nameCheck: { status: "verified", name: "Passwords" },
      namedBy: bo.account.userId,
      createdBy: bo.account.userId,
      owners: [bo.account.userId],
    });
    expect(both.find((v) => v.vaultId === mine.vaultId)).toMatchObject({ namedBy: ada.account.userId, owners: [ada.account.userId] });
    proxy.edit = hiding(mine.vaultId);
    const err = (await refusedWithoutChange(ada, [mine.vaultId, lookalike.vaultId], "NAME_MOVED", () =>
      ada.vaults.listChecked(),
    )) as VaultListChanged;
    expect(err).toBeInstanceOf(VaultListChanged);
    expect(err.missing).toEqual([expect.objectContaining({ vaultId: mine.vaultId, name: "Passwords", createdBy: ada.account.userId })]);
    expect(err.moved).toEqual([
      expect.objectContaining({
        name: "Passwords",
        knownId: mine.vaultId,
        nowId: lookalike.vaultId,
        namedBy: bo.account.userId,
        takenFromYours: true,
      }),
    ]);
    // Another device of ada's, which listed both once, is refused the same way.
    const fresh = through();
    await fresh.login(ada.account.email, PASSWORD);
    proxy.edit = honest;
    await fresh.vaults.listChecked().catch(() => undefined);
    proxy.edit = hiding(mine.vaultId);
    await expect(fresh.vaults.listChecked()).rejects.toMatchObject({ code: "NAME_MOVED" });
  });

  test("4. a known vault left out of the listing: KNOWN_VAULT_MISSING until the person confirms it is gone", async () => {
    const { owner: ada } = await org(0);
    const kept = await ada.vaults.create("Kept");
    const hidden = await ada.vaults.create("Hidden");
    proxy.edit = hiding(hidden.vaultId);
    const err = (await refusedWithoutChange(ada, [kept.vaultId, hidden.vaultId], "KNOWN_VAULT_MISSING", () =>
      ada.vaults.listChecked(),
    )) as VaultListChanged;
    expect(err.missing.map((m) => m.vaultId)).toEqual([hidden.vaultId]);
    expect(err.moved).toEqual([]);
    expect(err.listed.map((v) => v.vaultId)).toEqual([kept.vaultId]);
    // Refused every time, until the person says it is gone.
    await expect(ada.vaults.listChecked()).rejects.toMatchObject({ code: "KNOWN_VAULT_MISSING" });
    await ada.vaults.forget([hidden.vaultId.toUpperCase()]);
    expect((await ada.vaults.listChecked()).map((v) => v.vaultId)).toEqual([kept.vaultId]);
  });

  test("4. a vault the user deleted or left is forgotten by their own act; one they were removed from, once confirmed", async () => {
    const { owner: ada, people } = await org(2);
    const [bo, cy] = people as [VaultClient, VaultClient];
    const gone = await ada.vaults.create("Gone");
    const team = await ada.vaults.create("Team");
    await ada.members.share(team.vaultId, bo.account.userId);
    await ada.members.share(team.vaultId, cy.account.userId);
    await Promise.all([ada.vaults.listChecked(), bo.vaults.listChecked(), cy.vaults.listChecked()]);
    await ada.vaults.delete(gone.vaultId);
    expect((await ada.vaults.listChecked()).map((v) => v.vaultId)).toEqual([team.vaultId]);
    await bo.members.remove(team.vaultId, bo.account.userId);
    expect(await bo.vaults.listChecked()).toEqual([]);
    await ada.members.remove(team.vaultId, cy.account.userId);
    // Nothing cy's device verified says she was removed (the roster is closed to her now): she is asked.
    await expect(cy.vaults.listChecked()).rejects.toMatchObject({ code: "KNOWN_VAULT_MISSING" });
    await cy.vaults.forget([team.vaultId]);
    expect(await cy.vaults.listChecked()).toEqual([]);
  });

  test("4. a renamed vault (a signed rename) is known under its new name; a device without the store starts from its next listing", async () => {
    const { owner: ada } = await org(0);
    const device = newDevice();
    const laptop = through(device);
    await laptop.login(ada.account.email, PASSWORD);
    const v = await ada.vaults.create("Old name");
    expect((await laptop.vaults.listChecked()).map((x) => x.nameCheck.name)).toEqual(["Old name"]);
    await ada.vaults.rename(v.vaultId, "New name");
    expect((await laptop.vaults.listChecked()).map((x) => x.nameCheck.name)).toEqual(["New name"]);
    expect(await device.knownVaults.get(ada.account.userId)).toEqual({
      [v.vaultId]: { name: "New name", namedBy: ada.account.userId, createdBy: ada.account.userId, vaultType: "shared" },
    });
    const { knownVaults: _none, ...earlier } = newDevice();
    const old = new VaultClient({ baseUrl: proxy.url, ...earlier });
    await old.login(ada.account.email, PASSWORD);
    expect((await old.vaults.listChecked()).map((x) => x.vaultId)).toEqual([v.vaultId]);
  });

  test("6. a vault's type other than its signed creation: refused by name wherever the client acts on it", async () => {
    const { owner: ada, people } = await org(1);
    const [bo] = people as [VaultClient];
    const personal = await ada.vaults.create("Private", "personal");
    const team = await ada.vaults.create("Team", "shared");
    await ada.items.add(team.vaultId, { name: "x", fields: { password: "1" } });
    for (const [vault, type] of [
      [personal, "shared"],
      [team, "personal"],
    ] as const) {
      proxy.edit = retyping(vault.vaultId, type);
      const listed = (await ada.vaults.listChecked()).find((v) => v.vaultId === vault.vaultId)!;
      expect(listed.problem).toMatchObject({ name: "SecurityError", code: "WRAP_MISMATCH" });
      expect(listed.nameCheck.status).toBe("unverified");
      await refusedWithoutChange(ada, [vault.vaultId], "WRAP_MISMATCH", () => ada.vaults.getChecked(vault.vaultId));
      await refusedWithoutChange(ada, [vault.vaultId], "WRAP_MISMATCH", () => ada.items.list(vault.vaultId));
      await refusedWithoutChange(ada, [vault.vaultId], "WRAP_MISMATCH", () => ada.members.share(vault.vaultId, bo.account.userId));
      await refusedWithoutChange(ada, [vault.vaultId], "WRAP_MISMATCH", () =>
        ada.items.add(vault.vaultId, { name: "new", fields: { password: "2" } }),
      );
    }
    proxy.edit = honest;
    // The type as the roster started it is what the device keeps; a listing in the true type passes.
    expect((await ada.vaults.listChecked()).map((v) => [v.vaultId, v.vaultType, v.problem])).toEqual(
      expect.arrayContaining([
        [personal.vaultId, "personal", undefined],
        [team.vaultId, "shared", undefined],
      ]),
    );
  });

  test("7. after a rekey: a live item listed in the trash, or its current revision offered as a kept one, is refused; an unverified revision is restored only when confirmed", async () => {
    const { owner: ada, people } = await org(1);
    const [bo] = people as [VaultClient];
    const team = await ada.vaults.create("Team");
    await ada.members.share(team.vaultId, bo.account.userId);
    const item = await ada.items.add(team.vaultId, { name: "db", fields: { password: "one" } });
    await ada.items.edit(team.vaultId, item.itemId, { name: "db", fields: { password: "two" } });
    await ada.members.remove(team.vaultId, bo.account.userId);
    await ada.vaults.rekey(team.vaultId);
    const token = { token: ada.http.currentTokens!.accessToken };
    const live = (await api.get(`/vaults/${team.vaultId}/items`, token)).body.items.find((i: any) => i.itemId === item.itemId);
    expect(live).toBeDefined();
    // Another device of ada's, which holds no link since the rekey that touched the item.
    const laptop = through();
    await laptop.login(ada.account.email, PASSWORD);
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/trash`
        ? { items: [...body.items, { ...live, deletedAt: live.updatedAt ?? new Date().toISOString(), deletedBy: bo.account.userId }] }
        : body;
    for (const client of [ada, laptop])
      await refusedWithoutChange(ada, [team.vaultId], "HISTORY_MISMATCH", () => client.items.trash(team.vaultId));
    await refusedWithoutChange(ada, [team.vaultId], "HISTORY_MISMATCH", () =>
      laptop.items.restore(team.vaultId, item.itemId, { unverified: true }),
    );
    proxy.edit = (method, path, body) =>
      method === "GET" && path === `/vaults/${team.vaultId}/history`
        ? { revisions: [{ ...asKept(live), replacedAt: new Date().toISOString() }, ...body.revisions] }
        : body;
    await refusedWithoutChange(ada, [team.vaultId], "HISTORY_MISMATCH", () => laptop.items.history(team.vaultId, item.itemId));
    proxy.edit = honest;
    // Revision 1, written before the rekey: no link this device verified vouches for it.
    const kept = await laptop.items.history(team.vaultId, item.itemId);
    expect(kept.map((r) => [r.revision, r.verified])).toEqual([[1, false]]);
    await refusedWithoutChange(ada, [team.vaultId], "REVISION_UNVERIFIED", () =>
      laptop.items.restoreRevision(team.vaultId, item.itemId, 1),
    );
    expect((await laptop.items.restoreRevision(team.vaultId, item.itemId, 1, kept[0], { unverified: true })).fields.password).toBe("one");
  });
});
