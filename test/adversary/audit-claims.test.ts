/**
 * Forks of the audit log caught when two managers' links meet: every roster or item
 * link a client signs carries the audit head it last verified (`auditSeq`, `auditHead`), and a
 * client that verified the log itself judges the heads in the links others signed. A dishonest
 * server shows carol (an organization admin) a rewritten audit log, consistent in itself and
 * signed by an audit key she pinned on first use, while alice (the owner) sees the genuine one:
 * carol's client refuses, with `AUDIT_FORK` naming the link and its signer, as soon as it reads a
 * link alice signed, whether alice's head is the same seq as carol's, past it or before it, in a
 * roster link or an item link. The honest server refuses a link naming a head its log does not
 * have, so such a link can only come from two histories. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { ApiError, MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { auditHash, auditPublicKey, newAuditKeySeed, signAuditCheckpoint } from "../../lib/domain/audit/log";
import type { Audit } from "../../sdk/client/audit";
import { SQL_ENGINES } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { sleep } from "../helpers/wait";
import { Answer, dishonest, writesTo, type Sent } from "../helpers/dishonest";
import { allAuditRecords } from "../helpers/audit";

jest.setTimeout(180_000);

const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;
const auditOf = (c: VaultClient) => (c as unknown as { parts: { audit: Audit } }).parts.audit;

/** The records (oldest first) with record `at`'s time moved a second on and every hash from it recomputed: another history, consistent in itself. */
function forkAt(ascending: any[], at: number): any[] {
  let prevHash = "0".repeat(64);
  return ascending.map((r) => {
    if (r.seq < at) return ((prevHash = r.hash), r);
    const { hash: _old, ...rest } = r;
    const next = { ...rest, prevHash, ...(r.seq === at && { at: new Date(Date.parse(r.at) + 1000).toISOString() }) };
    prevHash = auditHash(next);
    return { ...next, hash: prevHash };
  });
}

describe.each(SQL_ENGINES)("audit heads in signed links, on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let alice: VaultClient;
  let carolEmail: string;
  let carolId: string;
  let dropDatabase: () => Promise<void>;
  /** The dishonest server's own audit key, which carol's devices pin on first use. */
  const forgerSeed = newAuditKeySeed();

  /** Every record of the organization's log, oldest first, as the service holds it. */
  const genuineRecords = async () => (await allAuditRecords(alice)).sort((a, b) => a.seq - b.seq);

  /** The audit log once the worker has recorded every event (its length unchanged for half a second). */
  async function settled(): Promise<number> {
    let last = -1;
    for (;;) {
      const { count } = await alice.audit.serverVerdict();
      if (count === last) return count;
      last = count;
      await sleep(500);
    }
  }

  /**
   * Carol on a device of her own (`pins`, `heads`) behind a server that shows her the audit log
   * forked at record `at` (the genuine log as it is now, rewritten from there), with checkpoints
   * signed by its own audit key; everything else passes. `down` makes the audit routes unreachable.
   */
  async function carolForked(at: number, device = { pins: new MemoryPinStore(), heads: new MemoryRosterHeadStore() }, sent: Sent[] = []) {
    const state: { down: false | 403 | 503 } = { down: false };
    const edit = async (method: string, path: string, body: any) => {
      if (method !== "GET" || !path.startsWith("/audit")) return body;
      if (state.down === 503) return new Answer(503, { error: { code: "UNAVAILABLE", message: "down" } });
      if (state.down === 403) return new Answer(403, { error: { code: "FORBIDDEN", message: "not a manager" } });
      if (path === "/audit/key") return { publicKey: auditPublicKey(forgerSeed) };
      const forked = forkAt(await genuineRecords(), at);
      const head = forked.at(-1);
      if (path === "/audit/checkpoint")
        return signAuditCheckpoint(forgerSeed, { orgId: head.orgId, seq: head.seq, head: head.hash, at: new Date().toISOString() });
      if (path === "/audit") return { events: [...forked].reverse(), nextBefore: null };
      return body;
    };
    const carol = new VaultClient({ baseUrl: server.url, pins: device.pins, rosterHeads: device.heads, fetch: dishonest(edit, sent) });
    await carol.login(carolEmail, PASSWORD);
    return { carol, state, device };
  }

  /**
   * Alice on a new device (it never checked the audit log, so the links it signs carry no head
   * until it does), with a shared vault of hers that carol administers, holding one item.
   */
  async function aliceWithVault(): Promise<{ alice: VaultClient; vaultId: string }> {
    const device = new VaultClient({ baseUrl: server.url });
    await device.login(alice.account.email, PASSWORD);
    const vault = await device.vaults.create(`Team ${randomUUID().slice(0, 6)}`, "shared");
    await device.members.share(vault.vaultId, carolId, "admin");
    await device.items.add(vault.vaultId, { name: "first", fields: { password: "one" } });
    await device.items.list(vault.vaultId);
    return { alice: device, vaultId: vault.vaultId };
  }

  /**
   * Carol checked a forked log; then alice checked the genuine one, longer by now, and signed an
   * item link carrying its head, which carol has not read yet.
   */
  async function headPastCarols() {
    const { alice, vaultId } = await aliceWithVault();
    await settled();
    const { carol, state } = await carolForked(1);
    await carol.audit.verify();
    await alice.items.add(vaultId, { name: "more history", fields: {} });
    await settled();
    await alice.audit.verify();
    await alice.items.add(vaultId, { name: "signed on it", fields: {} });
    return { vaultId, carol, state };
  }

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    alice = new VaultClient({ baseUrl: server.url });
    await alice.register({ email: email("alice"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    carolEmail = email("carol");
    const { code } = await alice.invites.create(carolEmail, "admin");
    const carol = new VaultClient({ baseUrl: server.url });
    carolId = (await carol.register({ email: carolEmail, password: PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 })).userId;
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  test("an honest server: links carry the head their signer verified; a head past carol's makes her client check the log, and nothing is refused", async () => {
    const { alice, vaultId } = await aliceWithVault();
    const carol = new VaultClient({ baseUrl: server.url });
    await carol.login(carolEmail, PASSWORD);
    await carol.audit.verify();
    await carol.items.list(vaultId);
    await alice.items.add(vaultId, { name: "second", fields: {} });
    await settled();
    const checked = await alice.audit.verify();
    const item = await alice.items.add(vaultId, { name: "third", fields: {} });
    const { links } = (await alice.http.request("GET", `/vaults/${vaultId}/item-log`, { query: { from: 0 } })) as { links: any[] };
    const mine = links.find((l) => l.itemId === item.itemId);
    expect(mine).toMatchObject({ auditSeq: checked.seq, auditHead: checked.head });
    // Carol's device saw an older head: reading alice's link, her client checks the log up to it on its own.
    expect((await carol.items.list(vaultId)).map((i) => i.name).sort()).toEqual(["first", "second", "third"]);
    expect((await carol.audit.verify()).seenBefore!.seq).toBeGreaterThanOrEqual(checked.seq);
    // A member who never checked the log (bob, here carol's first device before it did) signs no head, and reads alice's links unharmed.
    const fresh = new VaultClient({ baseUrl: server.url });
    await fresh.login(carolEmail, PASSWORD);
    await fresh.vaults.rename(vaultId, "Team renamed");
    const roster = (await alice.http.request("GET", `/vaults/${vaultId}/roster`)) as { links: any[] };
    expect(roster.links.at(-1)).not.toHaveProperty("auditSeq");
    expect((await fresh.items.list(vaultId)).length).toBe(3);
  });

  test("the same seq, another hash: carol's client refuses alice's item link (AUDIT_FORK, naming it and alice), and writes nothing", async () => {
    const { alice, vaultId } = await aliceWithVault();
    await settled();
    const sent: Sent[] = [];
    const { carol } = await carolForked(2, undefined, sent);
    const hers = await carol.audit.verify();
    const his = await alice.audit.verify();
    expect(hers.seq).toBe(his.seq);
    expect(hers.head).not.toBe(his.head);
    await alice.items.add(vaultId, { name: "written on the genuine head", fields: {} });
    const err = await carol.items.list(vaultId).catch((e) => e);
    expect(err).toMatchObject({ name: "SecurityError", code: "AUDIT_FORK" });
    expect(err.message).toContain(`item link`);
    expect(err.message).toContain(alice.account.userId);
    expect(writesTo(sent, vaultId)).toEqual([]);
    // Read again, the same: the device's item head did not move past the link.
    await expect(carol.items.list(vaultId)).rejects.toMatchObject({ code: "AUDIT_FORK" });
  });

  test("alice's head past carol's: her client checks the (forked) log at once and finds another hash there (AUDIT_FORK)", async () => {
    const { alice, vaultId } = await aliceWithVault();
    await settled();
    const { carol } = await carolForked(1);
    await carol.audit.verify();
    await carol.items.list(vaultId);
    await alice.items.add(vaultId, { name: "more history", fields: {} });
    await settled();
    const his = await alice.audit.verify();
    const [first] = await alice.items.list(vaultId);
    await alice.items.edit(vaultId, first!.itemId, { name: "first", fields: { password: "two" } });
    await expect(carol.items.list(vaultId)).rejects.toMatchObject({
      code: "AUDIT_FORK",
      message: expect.stringContaining(`record ${his.seq}`),
    });
  });

  test("alice's head before carol's, in a roster link: refused from memory, and on a new session of the same device by reading down to it", async () => {
    const { alice, vaultId } = await aliceWithVault();
    await settled();
    const his = await alice.audit.verify();
    await alice.vaults.rename(vaultId, "Renamed on the genuine head");
    await alice.items.add(vaultId, { name: "later", fields: {} });
    await settled();
    const { carol, device } = await carolForked(1);
    const hers = await carol.audit.verify();
    expect(hers.seq).toBeGreaterThan(his.seq);
    const inMemory = await carol.items.list(vaultId).catch((e) => e);
    expect(inMemory).toMatchObject({ code: "AUDIT_FORK", message: expect.stringContaining("roster link") });
    const again = await carolForked(1, device);
    await expect(again.carol.items.list(vaultId)).rejects.toMatchObject({
      code: "AUDIT_FORK",
      message: expect.stringContaining(`record ${his.seq}`),
    });
  });

  test("the audit log unavailable when alice's link is read: the read fails and, once it is back, is refused (the link read again)", async () => {
    const { vaultId, carol, state } = await headPastCarols();
    state.down = 503;
    await expect(carol.items.list(vaultId)).rejects.toMatchObject({ name: "ApiError", status: 503 });
    state.down = false;
    await expect(carol.items.list(vaultId)).rejects.toMatchObject({ code: "AUDIT_FORK" });
  });

  test("the audit log refused to carol (403: no longer a manager, or so the server says): her read goes on, and her next check refuses the claim", async () => {
    const { vaultId, carol, state } = await headPastCarols();
    state.down = 403;
    expect((await carol.items.list(vaultId)).length).toBe(3);
    state.down = false;
    await expect(carol.audit.verify()).rejects.toMatchObject({ code: "AUDIT_FORK" });
    // Kept until a check agrees with it: the evidence does not vanish after one refusal.
    await expect(carol.audit.verify()).rejects.toMatchObject({ code: "AUDIT_FORK" });
  });

  test("the honest server refuses a link naming an audit head its log does not have (400, the field named), and nothing is written", async () => {
    const { alice, vaultId } = await aliceWithVault();
    await settled();
    const { seq, head } = await alice.audit.verify();
    const liar = new VaultClient({ baseUrl: server.url });
    await liar.login(carolEmail, PASSWORD);
    const before = await alice.items.list(vaultId);
    for (const [claim, field] of [
      [{ auditSeq: seq, auditHead: "f".repeat(64) }, "itemLink.auditHead"],
      [{ auditSeq: seq + 1000, auditHead: head }, "itemLink.auditHead"],
    ] as const) {
      auditOf(liar).claimToSign = async () => claim;
      const err = await liar.items.add(vaultId, { name: "lie", fields: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 400, field });
    }
    auditOf(liar).claimToSign = async () => ({ auditSeq: seq, auditHead: "e".repeat(64) });
    await expect(liar.vaults.rename(vaultId, "Lie")).rejects.toMatchObject({ status: 400, field: "rosterLink.auditHead" });
    expect(await alice.items.list(vaultId)).toEqual(before);
    expect((await alice.vaults.get(vaultId)).vaultName).not.toBe("Lie");
  });
});
