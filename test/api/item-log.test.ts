/**
 * The signed item log (protocol/formats/item-log.ts) with real clients against the real service, on SQLite and
 * PostgreSQL. A dishonest server sits between a client and the service as a `fetch` that rewrites
 * the service's genuine answers and records what the client sends: every attack on a vault's
 * contents (an old revision, a dropped item, a deleted one back, another revision's ciphertext, a
 * log rolled back or forked) is caught with a named error, and nothing is written. The server's own
 * refusals, concurrent writers and checkpoints are checked here too.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { itemDigest, itemLinkHash, itemSetDigest, parseItemLink, type ItemLink } from "../../protocol/formats/item-log";
import { signLink } from "../../protocol/formats/roster";
import type { ItemLogs } from "../../sdk/client/item-log";
import { Api } from "../helpers/client";
import { SQL_ENGINES } from "../helpers/postgres";
import { ownerAndAdmin, SDK_PASSWORD, unsignedVault } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { Answer, dishonest, writesTo, type Edit, type Sent } from "../helpers/dishonest";

jest.setTimeout(120_000);

const PASSWORD = SDK_PASSWORD;

const logsOf = (c: VaultClient) => (c as unknown as { parts: { items: { logs: ItemLogs } } }).parts.items.logs;

describe.each(SQL_ENGINES)("the signed item log on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let api: Api;
  let alice: VaultClient, carol: VaultClient;
  const alicePins = new MemoryPinStore();
  const aliceHeads = new MemoryRosterHeadStore();
  let dropDatabase: () => Promise<void>;

  /** A new client of alice's (her pins and seen heads, nothing verified in memory) behind the dishonest `edit`. */
  async function aliceBehind(edit: Edit, sent: Sent[] = []): Promise<VaultClient> {
    const c = new VaultClient({ baseUrl: server.url, pins: alicePins, rosterHeads: aliceHeads, fetch: dishonest(edit, sent) });
    await c.login(alice.account.email, PASSWORD);
    return c;
  }

  /** A shared vault of alice's, shared with carol (admin), holding `names` (each with a password), its log started by alice's listing. */
  async function team(names: string[]) {
    const vault = await alice.vaults.create(`Team ${randomUUID().slice(0, 6)}`, "shared");
    await alice.members.share(vault.vaultId, carol.account.userId, "admin");
    const items = [];
    for (const name of names) items.push(await alice.items.add(vault.vaultId, { name, fields: { password: `${name}-1` } }));
    await alice.items.list(vault.vaultId);
    return { vaultId: vault.vaultId, items };
  }

  const recordOf = async (vaultId: string, itemId: string) =>
    (await api.get(`/vaults/${vaultId}/items/${itemId}`, { token: alice.http.currentTokens!.accessToken })).body;
  const rawLog = async (vaultId: string, from = 0) =>
    (await api.get(`/vaults/${vaultId}/item-log?from=${from}`, { token: alice.http.currentTokens!.accessToken })).body;

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    api = new Api(server.url);
    ({ alice, carol } = await ownerAndAdmin(server.url, alicePins, aliceHeads));
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  /** The attack is refused with `code`, the client sends no write to the vault, and the vault's items are as they were. */
  async function refused(vaultId: string, code: string, sent: Sent[], attack: () => Promise<unknown>) {
    const before = await alice.items.list(vaultId);
    await expect(attack()).rejects.toMatchObject({ name: "SecurityError", code });
    expect(writesTo(sent, vaultId)).toEqual([]);
    expect(await alice.items.list(vaultId)).toEqual(before);
  }

  test("an honest server: every write is a signed link, a fresh device verifies the log and the list, and reads each item", async () => {
    const { vaultId, items } = await team(["github", "aws"]);
    await carol.items.edit(vaultId, items[0]!.itemId, { name: "github", fields: { password: "github-2" } });
    await carol.items.delete(vaultId, items[1]!.itemId);
    const log = await rawLog(vaultId);
    expect(log.links.map((l: ItemLink) => [l.seq, l.op])).toEqual([
      [0, "checkpoint"],
      [1, "create"],
      [2, "create"],
      [3, "update"],
      [4, "delete"],
    ]);
    // The first write to the signed vault started its log with a checkpoint of the (empty) item set.
    expect(log.links[0].count).toBe(0);
    const fresh = new VaultClient({ baseUrl: server.url });
    await fresh.login(carol.account.email, PASSWORD);
    expect((await fresh.items.list(vaultId)).map((i) => i.fields.password)).toEqual(["github-2"]);
    expect((await fresh.items.get(vaultId, items[0]!.itemId)).fields.password).toBe("github-2");
  });

  test("an old revision served as current (its record as it was): ITEM_STALE, in the list and for the item", async () => {
    const { vaultId, items } = await team(["github", "aws"]);
    const old = await recordOf(vaultId, items[0]!.itemId);
    await alice.items.edit(vaultId, items[0]!.itemId, { name: "github", fields: { password: "rotated" } });
    const sent: Sent[] = [];
    const victim = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/items`
          ? { ...body, items: body.items.map((i: any) => (i.itemId === old.itemId ? old : i)) }
          : m === "GET" && p === `/vaults/${vaultId}/items/${old.itemId}`
            ? old
            : body,
      sent,
    );
    await refused(vaultId, "ITEM_STALE", sent, () => victim.items.list(vaultId));
    await refused(vaultId, "ITEM_STALE", sent, () => victim.items.get(vaultId, old.itemId));
  });

  test("an older revision's ciphertext labelled with the current revision: ITEM_HASH_MISMATCH, before anything is decrypted", async () => {
    const { vaultId, items } = await team(["github"]);
    const old = await recordOf(vaultId, items[0]!.itemId);
    await alice.items.edit(vaultId, items[0]!.itemId, { name: "github", fields: { password: "rotated" } });
    const sent: Sent[] = [];
    const swap = (i: any) => (i.itemId === old.itemId ? { ...i, encryptedData: old.encryptedData, encryptedName: old.encryptedName } : i);
    const victim = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/items`
          ? { ...body, items: body.items.map(swap) }
          : m === "GET" && p === `/vaults/${vaultId}/items/${old.itemId}`
            ? swap(body)
            : body,
      sent,
    );
    await refused(vaultId, "ITEM_HASH_MISMATCH", sent, () => victim.items.list(vaultId));
    await refused(vaultId, "ITEM_HASH_MISMATCH", sent, () => victim.items.get(vaultId, old.itemId));
    // An edit behind it is refused before it is sent: it would be signed over the old ciphertext.
    await refused(vaultId, "ITEM_HASH_MISMATCH", sent, async () => {
      await victim.items.list(vaultId);
      await victim.items.edit(vaultId, old.itemId, { name: "github", fields: { password: "x" } });
    });
  });

  test("an item dropped from the list: ITEM_DROPPED, naming the item", async () => {
    const { vaultId, items } = await team(["github", "aws", "vpn"]);
    const dropped = items[1]!.itemId;
    const sent: Sent[] = [];
    const victim = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/items` ? { ...body, items: body.items.filter((i: any) => i.itemId !== dropped) } : body,
      sent,
    );
    await expect(victim.items.list(vaultId)).rejects.toThrow(dropped);
    await refused(vaultId, "ITEM_DROPPED", sent, () => victim.items.list(vaultId));
  });

  test("a deleted item brought back: ITEM_RESURRECTED, in the list and for the item", async () => {
    const { vaultId, items } = await team(["github", "old-server"]);
    const gone = await recordOf(vaultId, items[1]!.itemId);
    await carol.items.delete(vaultId, gone.itemId);
    const sent: Sent[] = [];
    const victim = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/items`
          ? // Back in the list, and (in a delta read's answer) no longer among the ids gone.
            {
              ...body,
              items: [...body.items, gone],
              ...(body.deleted && { deleted: body.deleted.filter((id: string) => id !== gone.itemId) }),
            }
          : m === "GET" && p === `/vaults/${vaultId}/items/${gone.itemId}`
            ? new Answer(200, gone)
            : body,
      sent,
    );
    await refused(vaultId, "ITEM_RESURRECTED", sent, () => victim.items.list(vaultId));
    await refused(vaultId, "ITEM_RESURRECTED", sent, () => victim.items.get(vaultId, gone.itemId));
  });

  test("the log rolled back (its last links and their writes withheld): ITEM_LOG_ROLLBACK, and no write is signed on the old head", async () => {
    const { vaultId, items } = await team(["github"]);
    const before = await rawLog(vaultId);
    const cut = before.links.length;
    const itemsBefore = (await api.get(`/vaults/${vaultId}/items`, { token: alice.http.currentTokens!.accessToken })).body.items;
    await alice.items.edit(vaultId, items[0]!.itemId, { name: "github", fields: { password: "rotated" } });
    const sent: Sent[] = [];
    const victim = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/item-log`
          ? { ...body, links: body.links.filter((l: ItemLink) => l.seq < cut), next: null }
          : m === "GET" && p === `/vaults/${vaultId}/items`
            ? { items: itemsBefore }
            : body,
      sent,
    );
    await refused(vaultId, "ITEM_LOG_ROLLBACK", sent, () => victim.items.list(vaultId));
    await refused(vaultId, "ITEM_LOG_ROLLBACK", sent, () => victim.items.add(vaultId, { name: "new", fields: {} }));
    // And a log that is gone altogether, after this device saw one.
    const erased = await aliceBehind(
      (m, p, body) => (m === "GET" && p === `/vaults/${vaultId}/item-log` ? { links: [], baseSeq: null, next: null } : body),
      sent,
    );
    await refused(vaultId, "ITEM_LOG_ROLLBACK", sent, () => erased.items.list(vaultId));
  });

  test("a forked log (another link at a seq this device saw, validly signed by a member): ITEM_LOG_ROLLBACK", async () => {
    const { vaultId } = await team(["github"]);
    const log = await rawLog(vaultId);
    const last = parseItemLink(log.links.at(-1));
    // The server kept back a write carol signed on the same head, and shows it in place of the one alice saw.
    const carolLogs = logsOf(carol);
    const followed = (await carolLogs.follow(vaultId, (await carol.members.roster(vaultId))!))!;
    const headBefore = { ...followed.head, seq: last.seq - 1, head: last.prev };
    const other = await carolLogs.sign(
      headBefore,
      { op: "create", itemId: randomUUID(), revision: 1, sha256: await itemDigest({ encryptedName: "AAAA", encryptedData: "AAAA" }) },
      { seq: last.rosterSeq, head: last.rosterHead },
    );
    expect(await itemLinkHash(other)).not.toBe(await itemLinkHash(last));
    const sent: Sent[] = [];
    const victim = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/item-log`
          ? { ...body, links: body.links.map((l: ItemLink) => (l.seq === last.seq ? other : l)) }
          : body,
      sent,
    );
    await expect(victim.items.list(vaultId)).rejects.toThrow(/forked/);
    await refused(vaultId, "ITEM_LOG_ROLLBACK", sent, () => victim.items.list(vaultId));
  });

  test("a forked roster (another link at a seq, validly signed), shown to a device that never saw the real one: the item log's roster heads catch it", async () => {
    const { vaultId } = await team(["github"]);
    const real = (await alice.members.roster(vaultId))!.links;
    // Alice's own add of carol, signed again at another time: the same members and roles, another hash.
    const keys = (
      alice as unknown as { parts: { core: { requireKeys(): { signingPrivateKey: Parameters<typeof signLink>[1] } } } }
    ).parts.core.requireKeys();
    const { sig: _sig, ...unsigned } = real[1]!;
    const forkedLink = await signLink({ ...unsigned, at: "2020-01-01T00:00:00.000Z" }, keys.signingPrivateKey);
    const sent: Sent[] = [];
    const device = new VaultClient({
      baseUrl: server.url,
      fetch: dishonest(
        (m, p, body) => (m === "GET" && p === `/vaults/${vaultId}/roster` ? { links: [real[0], forkedLink, ...real.slice(2)] } : body),
        sent,
      ),
    });
    await device.login(alice.account.email, PASSWORD);
    expect((await device.members.roster(vaultId))!.state.members.size).toBe(2);
    await expect(device.items.list(vaultId)).rejects.toMatchObject({ code: "ROSTER_ROLLBACK", message: expect.stringMatching(/a fork/) });
    await expect(device.items.add(vaultId, { name: "x", fields: {} })).rejects.toMatchObject({ code: "ROSTER_ROLLBACK" });
    expect(writesTo(sent, vaultId)).toEqual([]);
  });

  test("a link the server forged: BAD_SIGNATURE; one naming a roster the vault does not have: ITEM_LOG_BROKEN; changed after a device saw it: ITEM_LOG_ROLLBACK", async () => {
    const { vaultId } = await team(["github"]);
    const sent: Sent[] = [];
    /** A new device of carol's (no head seen) behind a server that rewrites the log's last link with `change`. */
    const carolBehind = async (change: (l: ItemLink) => ItemLink) => {
      const c = new VaultClient({
        baseUrl: server.url,
        fetch: dishonest(
          (m, p, body) =>
            m === "GET" && p === `/vaults/${vaultId}/item-log`
              ? { ...body, links: body.links.map((l: ItemLink, i: number) => (i === body.links.length - 1 ? change(l) : l)) }
              : body,
          sent,
        ),
      });
      await c.login(carol.account.email, PASSWORD);
      return c;
    };
    const forged = await carolBehind((l) => ({ ...l, at: "2020-01-01T00:00:00.000Z" }));
    await expect(forged.items.list(vaultId)).rejects.toMatchObject({ code: "BAD_SIGNATURE" });
    const future = await carolBehind((l) => ({ ...l, rosterSeq: 99 }));
    await expect(future.items.list(vaultId)).rejects.toMatchObject({
      code: "ITEM_LOG_BROKEN",
      message: expect.stringMatching(/roster link 99/),
    });
    // Seen by alice's device, a changed link is another history than the one it saw.
    const forkedForAlice = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === `/vaults/${vaultId}/item-log`
          ? {
              ...body,
              links: body.links.map((l: ItemLink, i: number) =>
                i === body.links.length - 1 ? { ...l, at: "2020-01-01T00:00:00.000Z" } : l,
              ),
            }
          : body,
      sent,
    );
    await expect(forkedForAlice.items.list(vaultId)).rejects.toMatchObject({ code: "ITEM_LOG_ROLLBACK" });
    expect(writesTo(sent, vaultId)).toEqual([]);
  });

  test("forks become visible: two members' fingerprints agree on one history, and differ when one is shown an older, self-consistent one", async () => {
    const { vaultId, items } = await team(["github"]);
    await carol.items.edit(vaultId, items[0]!.itemId, { name: "github", fields: { password: "rotated" } });
    await alice.items.list(vaultId);
    await carol.items.list(vaultId);
    const fingerprint = await alice.vaults.fingerprint(vaultId);
    expect(fingerprint).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){4}$/);
    expect(await carol.vaults.fingerprint(vaultId)).toBe(fingerprint);
    expect((await carol.vaults.verify(vaultId)).fingerprint).toBe(fingerprint);
    // A new device of carol's (no head seen) is shown the log without its last link: a history consistent on its own.
    const cut = (await rawLog(vaultId)).links.length - 1;
    const forked = new VaultClient({
      baseUrl: server.url,
      fetch: dishonest(
        (m, p, body) =>
          m === "GET" && p === `/vaults/${vaultId}/item-log`
            ? { ...body, links: body.links.filter((l: ItemLink) => l.seq < cut), next: null }
            : body,
        [],
      ),
    });
    await forked.login(carol.account.email, PASSWORD);
    const shown = await forked.vaults.fingerprint(vaultId);
    expect(shown).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){4}$/);
    expect(shown).not.toBe(fingerprint);
  });

  test("a checkpoint a member signed over another item set (a deleted item back): ITEM_LOG_BROKEN for a client that holds the set", async () => {
    const { vaultId, items } = await team(["github", "old-server"]);
    const gone = await recordOf(vaultId, items[1]!.itemId);
    await alice.items.delete(vaultId, gone.itemId);
    await alice.items.list(vaultId);
    // Carol signs a checkpoint naming the deleted item too; the server shows it to alice as the log's next link.
    const carolLogs = logsOf(carol);
    const head = (await carolLogs.follow(vaultId, (await carol.members.roster(vaultId))!))!.head;
    const kept = await recordOf(vaultId, items[0]!.itemId);
    const forgedSet = await itemSetDigest([
      [kept.itemId, { revision: kept.revision, sha256: await itemDigest(kept) }],
      [gone.itemId, { revision: gone.revision, sha256: await itemDigest(gone) }],
    ]);
    const checkpoint = await carolLogs.sign(
      head,
      { op: "checkpoint", count: 2, setDigest: forgedSet },
      (await carol.members.roster(vaultId))!.state,
    );
    const sent: Sent[] = [];
    let lying = false;
    const victim = new VaultClient({
      baseUrl: server.url,
      pins: alicePins,
      rosterHeads: aliceHeads,
      fetch: dishonest(
        (m, p, body) =>
          lying && m === "GET" && p === `/vaults/${vaultId}/item-log`
            ? { ...body, links: [...body.links, checkpoint], baseSeq: checkpoint.seq, next: null }
            : lying && m === "GET" && p === `/vaults/${vaultId}/items`
              ? { ...body, items: [...body.items, gone] }
              : body,
        sent,
      ),
    });
    await victim.login(alice.account.email, PASSWORD);
    await victim.items.list(vaultId); // an honest first read: the set, verified and kept
    lying = true;
    await expect(victim.items.list(vaultId)).rejects.toMatchObject({
      code: "ITEM_LOG_BROKEN",
      message: expect.stringMatching(/checkpoint/),
    });
    expect(writesTo(sent, vaultId)).toEqual([]);
  });

  test("the server refuses a write without its link, with a bad one, or on an old head (409, and the SDK signs again)", async () => {
    const { vaultId, items } = await team(["github"]);
    const token = alice.http.currentTokens!.accessToken;
    const record = await recordOf(vaultId, items[0]!.itemId);
    const put = (body: object) => api.put(`/vaults/${vaultId}/items/${record.itemId}`, { token, body });
    const unlinked = await put({ encryptedData: record.encryptedData, encryptedName: record.encryptedName });
    expect([unlinked.status, unlinked.body.error.field]).toEqual([400, "itemLink"]);
    const logs = logsOf(alice);
    const head = (await logs.follow(vaultId, (await alice.members.roster(vaultId))!))!.head;
    const roster = (await alice.members.roster(vaultId))!.state;
    const link = ({ rosterSeq = roster.seq, rosterHead = roster.head, ...fields }: Partial<ItemLink> = {}) =>
      logs.sign(
        head,
        {
          op: "update",
          itemId: record.itemId,
          revision: record.revision + 1,
          sha256: "0".repeat(64),
          prevSha256: "0".repeat(64),
          ...fields,
        },
        { seq: rosterSeq, head: rosterHead },
      );
    const body = async (fields: Partial<ItemLink>) => ({
      encryptedData: record.encryptedData,
      encryptedName: record.encryptedName,
      itemLink: await link(fields),
    });
    const digest = await itemDigest(record);
    const cases: Array<[Partial<ItemLink>, number, string]> = [
      [{ prevSha256: digest }, 400, "itemLink.sha256"],
      [{ sha256: digest }, 409, "itemLink.prevSha256"],
      [{ sha256: digest, prevSha256: digest, rosterSeq: roster.seq + 5 }, 400, "itemLink.rosterSeq"],
      // Signed on a roster the vault has moved past (carol was added at seq 1): a member cannot claim to sign from before they were one.
      [{ sha256: digest, prevSha256: digest, rosterSeq: roster.seq - 1 }, 409, "itemLink.rosterSeq"],
      // On the roster's seq, but another link there: a history the vault does not have.
      [{ sha256: digest, prevSha256: digest, rosterHead: "f".repeat(64) }, 400, "itemLink.rosterHead"],
      [{ sha256: digest, prevSha256: digest, itemId: randomUUID() }, 400, "itemLink.itemId"],
      [{ sha256: digest, prevSha256: digest, keyVersion: 7 }, 400, "itemLink.keyVersion"],
    ];
    for (const [fields, status, field] of cases) {
      const res = await put(await body(fields));
      expect([status, field, res.status, res.body.error?.field]).toEqual([status, field, status, field]);
    }
    const signedByCarol = { ...(await link({ sha256: digest, prevSha256: digest })), actorId: carol.account.userId };
    const wrongActor = await put({ encryptedData: record.encryptedData, encryptedName: record.encryptedName, itemLink: signedByCarol });
    expect([wrongActor.status, wrongActor.body.error.field]).toEqual([400, "itemLink.actorId"]);
    const badSig = { ...(await link({ sha256: digest, prevSha256: digest })), sig: Buffer.alloc(64, 1).toString("base64") };
    const forged = await put({ encryptedData: record.encryptedData, encryptedName: record.encryptedName, itemLink: badSig });
    expect([forged.status, forged.body.error.field]).toEqual([400, "itemLink.sig"]);
    // The right link lands; the same one again is on an old head: 409, nothing written twice.
    const good = await body({ sha256: digest, prevSha256: digest });
    expect((await put(good)).status).toBe(200);
    const again = await put(good);
    expect([again.status, again.body.error.field]).toEqual([409, "itemLink.seq"]);
    // The SDK, holding the old head, signs again on the new one.
    await logs.saw(good.itemLink);
    await expect(carol.items.edit(vaultId, record.itemId, { name: "github", fields: { password: "after" } })).resolves.toMatchObject({
      revision: 3,
    });
    const del = await api.delete(`/vaults/${vaultId}/items/${record.itemId}`, { token });
    expect([del.status, del.body.error.field]).toEqual([400, "itemLink"]);
  });

  test("plain clients see no change: a vault without a roster keeps no log, and a link there is refused", async () => {
    const token = alice.http.currentTokens!.accessToken;
    const vault = await unsignedVault(alice, "Plain");
    const created = await api.post(`/vaults/${vault.vaultId}/items`, { token, body: { encryptedData: "AAAA", encryptedName: "AAAA" } });
    expect(created.status).toBe(201);
    expect(
      (
        await api.put(`/vaults/${vault.vaultId}/items/${created.body.itemId}`, {
          token,
          body: { encryptedData: "BBBB", encryptedName: "BBBB" },
        })
      ).status,
    ).toBe(200);
    expect((await api.delete(`/vaults/${vault.vaultId}/items/${created.body.itemId}`, { token })).status).toBe(204);
    expect((await rawLog(vault.vaultId)).links).toEqual([]);
    const { vaultId } = await team([]);
    const link = JSON.parse(JSON.stringify((await rawLog(vaultId)).links[0]));
    const res = await api.post(`/vaults/${vault.vaultId}/item-log`, { token, body: { itemLink: { ...link, vaultId: vault.vaultId } } });
    expect([res.status, res.body.error.field]).toEqual([400, "itemLink"]);
  });

  test("concurrent writers on one vault: every acknowledged write is in the log exactly once, the chain is linear, nothing is lost", async () => {
    const { vaultId, items } = await team(["seed"]);
    const bob = new VaultClient({ baseUrl: server.url });
    await bob.login(carol.account.email, PASSWORD);
    const writers = [alice, carol, bob];
    const acknowledged: Array<{ itemId: string; revision: number }> = [];
    await Promise.all(
      writers.flatMap((w, wi) =>
        Array.from({ length: 6 }, async (_, i) => {
          const item = await w.items.add(vaultId, { name: `w${wi}-${i}`, fields: { n: String(i) } });
          acknowledged.push({ itemId: item.itemId, revision: item.revision });
          if (i % 2 === 0) {
            const edited = await w.items.edit(vaultId, item.itemId, { name: `w${wi}-${i}`, fields: { n: `${i}!` } });
            acknowledged.push({ itemId: edited.itemId, revision: edited.revision });
          }
        }),
      ),
    );
    const log = await rawLog(vaultId);
    const links: ItemLink[] = log.links.map(parseItemLink);
    // Linear: seq 0, 1, 2, ... each naming the hash of the one before.
    for (const [i, l] of links.entries()) {
      expect(l.seq).toBe(i);
      if (i > 0) expect(l.prev).toBe(await itemLinkHash(links[i - 1]!));
    }
    // Exactly once each.
    const logged = links.filter((l) => l.op === "create" || l.op === "update").map((l) => `${l.itemId}@${l.revision}`);
    expect(logged.sort()).toEqual([...acknowledged.map((a) => `${a.itemId}@${a.revision}`), `${items[0]!.itemId}@1`].sort());
    const fresh = new VaultClient({ baseUrl: server.url });
    await fresh.login(carol.account.email, PASSWORD);
    expect(await fresh.items.list(vaultId)).toHaveLength(19);
  });

  test("checkpoints: a member signs one after enough links; a new device reads from it, and an untouched item dropped is ITEM_SET_MISMATCH", async () => {
    const { vaultId, items } = await team(["a", "b", "c"]);
    const frequent = new VaultClient({ baseUrl: server.url, checkpointEvery: 4 });
    await frequent.login(carol.account.email, PASSWORD);
    for (let i = 0; i < 4; i++) await frequent.items.edit(vaultId, items[0]!.itemId, { name: "a", fields: { password: `a-${i}` } });
    await frequent.items.list(vaultId);
    const log = await api.get(`/vaults/${vaultId}/item-log`, { token: alice.http.currentTokens!.accessToken });
    // Without `from`, the server answers from the last checkpoint: that one link.
    expect(log.body.links.map((l: ItemLink) => l.op)).toEqual(["checkpoint"]);
    expect(log.body.baseSeq).toBe(log.body.links[0].seq);
    // One more write and listing: fewer than 4 links since that checkpoint, so no new one.
    await frequent.items.edit(vaultId, items[0]!.itemId, { name: "a", fields: { password: "a-after" } });
    await frequent.items.list(vaultId);
    const after = await api.get(`/vaults/${vaultId}/item-log`, { token: alice.http.currentTokens!.accessToken });
    expect(after.body.links.map((l: ItemLink) => l.op)).toEqual(["checkpoint", "update"]);
    const newcomer = new VaultClient({ baseUrl: server.url });
    await newcomer.login(carol.account.email, PASSWORD);
    const read: Sent[] = [];
    const reader = new VaultClient({ baseUrl: server.url, fetch: dishonest((_m, _p, b) => b, read) });
    await reader.login(carol.account.email, PASSWORD);
    expect((await reader.items.list(vaultId)).map((i) => i.name).sort()).toEqual(["a", "b", "c"]);
    expect(read.filter((s) => s.path.endsWith("/item-log")).length).toBeGreaterThan(0);
    const sent: Sent[] = [];
    const victim = new VaultClient({
      baseUrl: server.url,
      fetch: dishonest(
        (m, p, body) =>
          m === "GET" && p === `/vaults/${vaultId}/items`
            ? { ...body, items: body.items.filter((i: any) => i.itemId !== items[2]!.itemId) }
            : body,
        sent,
      ),
    });
    await victim.login(carol.account.email, PASSWORD);
    await expect(victim.items.list(vaultId)).rejects.toMatchObject({ code: "ITEM_SET_MISMATCH" });
    expect(writesTo(sent, vaultId)).toEqual([]);
  });

  test("a rekey appends its link (the new item set's digest); the log and list verify after it on a new device", async () => {
    const { vaultId, items } = await team(["a", "b"]);
    await alice.items.delete(vaultId, items[1]!.itemId);
    await alice.vaults.rekey(vaultId);
    const log = await api.get(`/vaults/${vaultId}/item-log`, { token: alice.http.currentTokens!.accessToken });
    expect(log.body.links.map((l: ItemLink) => [l.op, l.keyVersion, l.count])).toEqual([["rekey", 2, 1]]);
    const fresh = new VaultClient({ baseUrl: server.url });
    await fresh.login(carol.account.email, PASSWORD);
    expect((await fresh.items.list(vaultId)).map((i) => i.name)).toEqual(["a"]);
    await fresh.items.add(vaultId, { name: "after", fields: {} });
    expect(await alice.items.list(vaultId)).toHaveLength(2);
  });
});
