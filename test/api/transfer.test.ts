/**
 * Import and export against the real service, on SQLite and PostgreSQL: 5,000 items in one bulk
 * request, checked by another member's client through the signed item log; the bulk route's
 * refusals, all or nothing; a dishonest server that acknowledges an import it never stored, caught;
 * exports recorded in the audit log, and an encrypted one imported again as it was.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient, type ItemContent } from "../../sdk";
import { readImport } from "../../sdk/transfer";
import { itemSetDigest, itemStatesOf, type ItemLink } from "../../protocol/formats/item-log";
import type { ItemLogs } from "../../sdk/client/item-log";
import { dishonest, type Edit } from "../helpers/dishonest";
import { Api, newOrg, sharedVault, type TestUser } from "../helpers/client";
import { encryptItem } from "../helpers/crypto";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin, SDK_PASSWORD } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { eventually } from "../helpers/wait";

jest.setTimeout(180_000);

const PASSWORD = SDK_PASSWORD;

describe.each(SQL_ENGINES)("import and export on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let alice: VaultClient, carol: VaultClient;
  const pins = new MemoryPinStore();
  const heads = new MemoryRosterHeadStore();
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer({ ...database.env, REGISTRATION_MODE: "open" });
    api = new Api(server.url);
    ({ alice, carol } = await ownerAndAdmin(server.url, pins, heads));
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  const many = (n: number): ItemContent[] =>
    Array.from({ length: n }, (_, i) => ({
      name: `site ${i}`,
      type: "login",
      fields: { username: `user${i}`, password: `pw-${i}-${randomUUID().slice(0, 8)}` },
      urls: [{ url: `https://site${i}.example`, match: "domain" }],
    }));

  test("5,000 items in one bulk request; another member's client checks them through the signed item log", async () => {
    const vault = await alice.vaults.create(`Import ${randomUUID().slice(0, 6)}`, "shared");
    await alice.members.share(vault.vaultId, carol.account.userId, "admin");
    await alice.items.add(vault.vaultId, { name: "already here", fields: { password: "x" } });
    let bulkRequests = 0;
    const counted = new VaultClient({
      baseUrl: server.url,
      pins,
      rosterHeads: heads,
      fetch: (input, init) => {
        if (String(input).endsWith("/items/bulk")) bulkRequests++;
        return fetch(input, init);
      },
    });
    await counted.login(alice.account.email, PASSWORD);
    const contents = many(4_999);
    const phases = new Set<string>();
    const oversize = { name: "huge note", fields: { notes: "x".repeat(300 * 1024) } };
    const badSeed = { name: "odd code", fields: {}, totp: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&digits=80000000" };
    const result = await counted.items.import(vault.vaultId, [...contents, { name: "", fields: {} }, oversize, badSeed], (p) =>
      phases.add(p.phase),
    );
    expect(result).toEqual({
      imported: 5_000,
      skipped: [
        { name: "(no name)", why: "it has no name" },
        { name: "huge note", why: expect.stringMatching(/more than an item holds \(256 KiB\)$/) },
      ],
      // Imported, with the part left out said apart from what was not imported at all.
      partial: [{ name: "odd code", left: [{ part: "one-time code seed", why: "a TOTP code has 6 to 10 digits, not 80000000" }] }],
      requests: 1,
      files: 0,
      filesFailed: [],
    });
    expect(bulkRequests).toBe(1);
    expect([...phases]).toEqual(["seal", "upload"]);
    const listed = await carol.items.list(vault.vaultId);
    expect(listed).toHaveLength(5_001);
    expect(listed.find((i) => i.name === "odd code")!.totp).toBeUndefined();
    const byName = new Map(listed.map((i) => [i.name, i]));
    expect(byName.get("site 4998")).toMatchObject({ fields: contents[4998]!.fields, urls: contents[4998]!.urls, revision: 1 });
    const log = (await api.get(`/vaults/${vault.vaultId}/item-log`, { token: carol.http.currentTokens!.accessToken })).body;
    expect(log.links[0]).toMatchObject({ op: "import", count: 5_001, added: 5_000, actorId: alice.account.userId });
    // The audit log records it (its worker writes the outbox's events a moment later).
    await eventually("the import's audit record", async () =>
      (await alice.audit.log({ limit: 50 })).events.some((e) => e.type === "vault.items_imported" && e.vaultId === vault.vaultId),
    );
  });

  test("the bulk route's refusals, each writing nothing: empty, too many, an id twice, an id taken (also in the trash), a non-member, no link on a signed vault", async () => {
    const { owner } = await newOrg(api);
    const outsider: TestUser = (await newOrg(api)).owner;
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const bulk = (items: unknown[], by: TestUser = owner) =>
      api.post(`/vaults/${vaultId}/items/bulk`, { token: by.token, body: { items } });
    const item = () => encryptItem(vaultKey, vaultId, randomUUID(), "s", "n");
    const existing = item();
    await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: existing });
    const trashed = item();
    await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: trashed });
    await api.delete(`/vaults/${vaultId}/items/${trashed.itemId}`, { token: owner.token });
    const twice = item();
    const outcome = async (res: Promise<any>) => {
      const r = await res;
      return [r.status, r.body.error?.code, r.body.error?.field];
    };
    expect(await outcome(bulk([]))).toEqual([400, "INVALID", "items"]);
    expect(await outcome(bulk(Array.from({ length: 5_001 }, item)))).toEqual([400, "INVALID", "items"]);
    expect(await outcome(bulk([item(), twice, twice]))).toEqual([400, "INVALID", "items"]);
    expect(await outcome(bulk([item(), existing]))).toEqual([409, "CONFLICT", "items"]);
    expect(await outcome(bulk([item(), trashed]))).toEqual([409, "CONFLICT", "items"]);
    expect(await outcome(bulk([item()], outsider))).toEqual([404, "NOT_FOUND", undefined]);
    expect(await outcome(bulk([{ ...item(), encryptedData: "not base64!" }]))).toEqual([400, "INVALID", expect.any(String)]);
    expect((await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items.map((i: any) => i.itemId)).toEqual([
      existing.itemId,
    ]);
    const ok = await bulk([item(), item()]);
    expect([ok.status, ok.body]).toEqual([201, { created: 2 }]);

    const signed = await alice.vaults.create(`Signed ${randomUUID().slice(0, 6)}`, "shared");
    await alice.items.list(signed.vaultId); // starts its signed item log
    const res = await api.post(`/vaults/${signed.vaultId}/items/bulk`, {
      token: alice.http.currentTokens!.accessToken,
      body: { items: [encryptItem(Buffer.alloc(32, 1), signed.vaultId, randomUUID(), "s", "n")] },
    });
    expect([res.status, res.body.error.field]).toEqual([400, "itemLink"]);
  });

  test("a dishonest server that acknowledges an import it never stored is caught at the next read", async () => {
    const vault = await alice.vaults.create(`Swallowed ${randomUUID().slice(0, 6)}`, "shared");
    await alice.items.add(vault.vaultId, { name: "one", fields: {} });
    const liar = new VaultClient({
      baseUrl: server.url,
      pins,
      rosterHeads: heads,
      fetch: async (input, init) => {
        if (String(input).endsWith("/items/bulk")) return Response.json({ created: 3 }, { status: 201 });
        return fetch(input, init);
      },
    });
    await liar.login(alice.account.email, PASSWORD);
    expect((await liar.items.import(vault.vaultId, many(3))).imported).toBe(3);
    await expect(liar.items.list(vault.vaultId)).rejects.toMatchObject({ name: "SecurityError", code: "ITEM_LOG_ROLLBACK" });
  });

  test("an import only adds: a member's import link over a set without an item, or with one rolled back, is refused by a device that knew the set", async () => {
    const vault = await alice.vaults.create(`Forged ${randomUUID().slice(0, 6)}`, "shared");
    await alice.members.share(vault.vaultId, carol.account.userId, "admin");
    const a = await alice.items.add(vault.vaultId, { name: "a", fields: { password: "a1" } });
    const b = await alice.items.add(vault.vaultId, { name: "b", fields: { password: "b1" } });
    await alice.items.edit(vault.vaultId, a.itemId, { name: "a", fields: { password: "a2" } });
    const token = alice.http.currentTokens!.accessToken;
    const records = (await api.get(`/vaults/${vault.vaultId}/items`, { token })).body.items as any[];
    const recB = records.find((r) => r.itemId === b.itemId);
    // a's first password, labelled as its current revision; an "imported" item.
    const oldA = { ...(await api.get(`/vaults/${vault.vaultId}/history?itemId=${a.itemId}`, { token })).body.revisions[0], revision: 2 };
    const newC = { ...recB, itemId: randomUUID(), revision: 1 };
    // Carol, a member, signs an import on the real head, over a set of the server's choosing.
    const carolLogs = (carol as unknown as { parts: { items: { logs: ItemLogs } } }).parts.items.logs;
    const roster = (await carol.members.roster(vault.vaultId))!;
    const head = (await carolLogs.follow(vault.vaultId, roster))!.head;
    const forge = async (set: any[]) =>
      carolLogs.sign(
        head,
        { op: "import", count: set.length, setDigest: await itemSetDigest(await itemStatesOf(set)), added: 1 },
        roster.state,
      );
    const serving =
      (link: ItemLink, listing: any[]): Edit =>
      (method, path, body, query) => {
        if (method === "GET" && path === `/vaults/${vault.vaultId}/item-log`) return { ...body, links: [...body.links, link], next: null };
        // A delta read is sent to the whole list, which is the listing served.
        if (method === "GET" && path === `/vaults/${vault.vaultId}/items` && query.startsWith("?since="))
          return { items: [], deleted: [], cursor: body.cursor, full: true };
        if (method === "GET" && path === `/vaults/${vault.vaultId}/items`)
          return { items: [...listing].sort((x, y) => (x.createdAt + x.itemId < y.createdAt + y.itemId ? -1 : 1)), next: null };
        return body;
      };
    /** A device of alice's that reads the vault honestly first (it knows {a, b}), then behind `edit`. */
    const knowing = async (edit: Edit) => {
      let now: Edit = (_m, _p, body) => body;
      // Heads of its own: what it is shown is not what alice's other clients saw.
      const device = new VaultClient({
        baseUrl: server.url,
        pins,
        rosterHeads: new MemoryRosterHeadStore(),
        fetch: dishonest((m, p, body, q) => now(m, p, body, q)),
      });
      await device.login(alice.account.email, PASSWORD);
      await device.items.list(vault.vaultId);
      now = edit;
      return device;
    };
    const dropped = [recB, newC];
    await expect((await knowing(serving(await forge(dropped), dropped))).items.list(vault.vaultId)).rejects.toMatchObject({
      name: "SecurityError",
      code: "ITEM_LOG_BROKEN",
    });
    const rolled = [oldA, recB, newC];
    await expect((await knowing(serving(await forge(rolled), rolled))).items.list(vault.vaultId)).rejects.toMatchObject({
      name: "SecurityError",
      code: "ITEM_HASH_MISMATCH",
    });
    // The honest vault still reads as it is.
    expect((await alice.items.list(vault.vaultId)).map((i) => i.fields.password).sort()).toEqual(["a2", "b1"]);
  });

  test("exports: recorded in the audit log before anything is read; an encrypted one imports again as it was; an outsider records none", async () => {
    const vault = await alice.vaults.create(`Export ${randomUUID().slice(0, 6)}`, "shared");
    await alice.items.add(vault.vaultId, {
      name: "GitHub",
      type: "login",
      fields: { username: "ada", password: "pw" },
      totp: "JBSWY3DPEHPK3PXP",
      favorite: true,
    });
    await alice.items.add(vault.vaultId, { name: "Visa", type: "card", fields: { number: "4111" } });
    await expect(alice.vaults.export([vault.vaultId], "encrypted", "short")).rejects.toThrow("at least 12 characters");
    const file = await alice.vaults.export([vault.vaultId], "encrypted", "a long export passphrase");
    expect(file).not.toContain("GitHub");
    const exported = await eventually("the export's audit record", async () => {
      const found = (await alice.audit.log({ limit: 50 })).events.filter((e) => e.type === "vault.exported" && e.vaultId === vault.vaultId);
      return found.length > 0 && found;
    });
    expect(exported).toHaveLength(1);
    const parsed = await readImport(new TextEncoder().encode(file), { password: "a long export passphrase" });
    const copy = await alice.vaults.create(`Copy ${randomUUID().slice(0, 6)}`, "shared");
    await alice.items.import(copy.vaultId, parsed.items);
    const strip = (items: Awaited<ReturnType<VaultClient["items"]["list"]>>) =>
      items
        .map(({ itemId: _i, vaultId: _v, revision: _r, createdAt: _c, updatedAt: _u, ...content }) => content)
        .sort((a, b) => a.name.localeCompare(b.name));
    expect(strip(await alice.items.list(copy.vaultId))).toEqual(strip(await alice.items.list(vault.vaultId)));
    const csv = await alice.vaults.export([vault.vaultId], "csv");
    await eventually("the plaintext export's audit record", async () =>
      (await alice.audit.log({ limit: 50 })).events.some((e) => e.type === "vault.exported_plaintext" && e.vaultId === vault.vaultId),
    );
    expect(csv.split(/\r?\n/)[0]).toBe("vault,type,name,username,password,urls,totp,notes,favorite,fields");
    const outsider = (await newOrg(api)).owner;
    const res = await api.post(`/vaults/${vault.vaultId}/exports`, { token: outsider.token, body: { format: "json" } });
    expect(res.status).toBe(404);
  });
});
