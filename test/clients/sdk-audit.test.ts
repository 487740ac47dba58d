/**
 * The audit log checked by the client, not the server: a dishonest server between a real SDK
 * client and the real service drops a record, reorders records and recomputes every hash, cuts the
 * newest off, forges a checkpoint or swaps its audit key; each is caught with a named error. An
 * export is checked offline against the pinned key. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { MemoryPinStore, MemoryRosterHeadStore, VaultClient } from "../../sdk";
import { verifyAuditExport, type AuditCheckpoint } from "../../protocol/formats/audit";
import { auditHash, auditPublicKey, signAuditCheckpoint } from "../../lib/domain/audit/log";
import { SQL_ENGINES } from "../helpers/postgres";
import { TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";
import { eventually } from "../helpers/wait";
import { dishonest, type Edit } from "../helpers/dishonest";
import { allAuditRecords } from "../helpers/audit";

jest.setTimeout(120_000);

const PASSWORD = "correct horse battery staple";
const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

/** Records (oldest first, in the order given) renumbered and rehashed, as a server that rewrites history would; newest first. */
function rechain(ascending: any[]): any[] {
  let prevHash = "0".repeat(64);
  const out = ascending.map((r, i) => {
    const { hash: _old, ...rest } = r;
    const next = { ...rest, seq: i + 1, prevHash };
    const hash = auditHash(next);
    prevHash = hash;
    return { ...next, hash };
  });
  return out.reverse();
}

describe.each(SQL_ENGINES)("the audit log checked by the client on %s", (_engine, openDatabase) => {
  let server: TestServer;
  let alice: VaultClient;
  let dropDatabase: () => Promise<void>;
  const pins = new MemoryPinStore();

  /** Alice on a new device (her audit key pinned, or `fresh` pins; the heads given, or none) behind `edit`. */
  async function aliceBehind(edit: Edit, heads = new MemoryRosterHeadStore(), devicePins = pins): Promise<VaultClient> {
    const c = new VaultClient({ baseUrl: server.url, pins: devicePins, rosterHeads: heads, fetch: dishonest(edit) });
    await c.login(alice.account.email, PASSWORD);
    return c;
  }

  /** Every page of the log with `change` applied to the whole list (newest first), paged as the server would. */
  const rewriteLog =
    (change: (all: any[]) => any[], all: any[]): Edit =>
    (m, p, body) =>
      m === "GET" && p === "/audit" ? { events: change(all), nextBefore: null } : body;

  const allRecords = () => allAuditRecords(alice);

  beforeAll(async () => {
    const database = await openDatabase();
    dropDatabase = database.drop;
    server = await startTestServer(database.env);
    alice = new VaultClient({ baseUrl: server.url, pins });
    await alice.register({ email: email("alice"), password: PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const vault = await alice.vaults.create("Audited", "shared");
    for (let i = 0; i < 4; i++) await alice.items.add(vault.vaultId, { name: `item ${i}`, fields: {} });
    await eventually("six audit records", async () => (await alice.audit.serverVerdict()).count >= 6, { timeoutMs: 20_000 });
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase?.();
  });

  test("an honest server: the chain checked here, the checkpoint signed by the pinned key; the next check reads only what is new", async () => {
    const heads = new MemoryRosterHeadStore();
    const device = await aliceBehind((_m, _p, b) => b, heads);
    const first = await device.audit.verify();
    expect(first).toMatchObject({ ok: true, checkedNow: first.count });
    expect(first.count).toBeGreaterThanOrEqual(6);
    expect(first.checkpoint.seq).toBeLessThanOrEqual(first.seq);
    await alice.vaults.create("Later", "shared");
    await eventually("a newer audit record", async () => (await alice.audit.serverVerdict()).count > first.count, { timeoutMs: 20_000 });
    const second = await device.audit.verify();
    expect(second.seenBefore).toEqual({ seq: first.seq, hash: first.head });
    expect(second.checkedNow).toBe(second.seq - first.seq);
  });

  test("a check that finishes after a newer one never moves the device's seen head back", async () => {
    const heads = new MemoryRosterHeadStore();
    const first = await (await aliceBehind((_m, _p, b) => b, heads)).audit.verify();
    await alice.vaults.create("Meanwhile", "shared");
    await eventually("a newer audit record", async () => (await alice.audit.serverVerdict()).count > first.count, { timeoutMs: 20_000 });
    const newer = { seq: first.seq + 50, hash: "e".repeat(64) };
    // While this check reads the records, another (on the same device) saw a newer head.
    const device = await aliceBehind((m, p, body) => {
      if (m === "GET" && p === "/audit") void heads.set(`audit/${alice.account.orgId}`, newer);
      return body;
    }, heads);
    await device.audit.verify();
    expect(await heads.get(`audit/${alice.account.orgId}`)).toEqual(newer);
  });

  test("a record dropped: AUDIT_BROKEN, naming the missing record", async () => {
    const all = await allRecords();
    const device = await aliceBehind(rewriteLog((records) => records.filter((r) => r.seq !== 3), all));
    await expect(device.audit.verify()).rejects.toMatchObject({
      code: "AUDIT_BROKEN",
      message: expect.stringMatching(/record 3 is missing/),
    });
  });

  test("records reordered and every hash recomputed: the signed checkpoint does not match (a new device), nor the seen head (a device that saw it)", async () => {
    const all = await allRecords();
    const swapped = (records: any[]) => {
      const asc = [...records].sort((a, b) => a.seq - b.seq);
      [asc[1], asc[2]] = [asc[2], asc[1]];
      return rechain(asc);
    };
    const fresh = await aliceBehind(rewriteLog(swapped, all), new MemoryRosterHeadStore());
    await expect(fresh.audit.verify()).rejects.toMatchObject({ code: "AUDIT_CHECKPOINT_INVALID" });
    const heads = new MemoryRosterHeadStore();
    await (await aliceBehind((_m, _p, b) => b, heads)).audit.verify();
    // The checkpoint re-signed over the rewritten head would need the audit key; with the genuine one replayed, the seen head still catches it.
    const seenIt = await aliceBehind(rewriteLog(swapped, all), heads);
    await expect(seenIt.audit.verify()).rejects.toMatchObject({ code: "AUDIT_ROLLBACK" });
  });

  test("the newest records cut off, with an older genuine checkpoint replayed: AUDIT_ROLLBACK on a device that saw them", async () => {
    const heads = new MemoryRosterHeadStore();
    let oldCheckpoint: AuditCheckpoint | undefined;
    const recorder = await aliceBehind((m, p, b) => {
      if (m === "GET" && p === "/audit/checkpoint") oldCheckpoint ??= b;
      return b;
    }, heads);
    await recorder.audit.verify();
    const cut = (await allRecords()).filter((r) => r.seq <= oldCheckpoint!.seq - 2);
    const device = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === "/audit"
          ? { events: cut, nextBefore: null }
          : m === "GET" && p === "/audit/checkpoint"
            ? { ...oldCheckpoint, seq: cut[0].seq, head: cut[0].hash }
            : body,
      heads,
    );
    await expect(device.audit.verify()).rejects.toMatchObject({ code: "AUDIT_ROLLBACK" });
  });

  test("the record at the head this device saw, changed but carrying its old hash: AUDIT_ROLLBACK", async () => {
    const heads = new MemoryRosterHeadStore();
    const first = await (await aliceBehind((_m, _p, b) => b, heads)).audit.verify();
    const device = await aliceBehind(
      (m, p, body) =>
        m === "GET" && p === "/audit"
          ? { ...body, events: body.events.map((r: any) => (r.seq === first.seq ? { ...r, type: "vault.deleted" } : r)) }
          : body,
      heads,
    );
    await expect(device.audit.verify()).rejects.toMatchObject({ code: "AUDIT_ROLLBACK" });
  });

  test("a forged checkpoint (another head, or signed by another key) and a swapped audit key: AUDIT_CHECKPOINT_INVALID, AUDIT_KEY_CHANGED", async () => {
    const otherSeed = Buffer.alloc(32, 7).toString("base64");
    const forgedHead = await aliceBehind((m, p, body) =>
      m === "GET" && p === "/audit/checkpoint" ? { ...body, head: "f".repeat(64) } : body,
    );
    await expect(forgedHead.audit.verify()).rejects.toMatchObject({ code: "AUDIT_CHECKPOINT_INVALID" });
    const otherKey = await aliceBehind((m, p, body) =>
      m === "GET" && p === "/audit/checkpoint"
        ? signAuditCheckpoint(otherSeed, { orgId: body.orgId, seq: body.seq, head: body.head, at: body.at })
        : body,
    );
    await expect(otherKey.audit.verify()).rejects.toMatchObject({ code: "AUDIT_CHECKPOINT_INVALID" });
    const swapped = await aliceBehind((m, p, body) =>
      m === "GET" && p === "/audit/key"
        ? { publicKey: auditPublicKey(otherSeed) }
        : m === "GET" && p === "/audit/checkpoint"
          ? signAuditCheckpoint(otherSeed, { orgId: body.orgId, seq: body.seq, head: body.head, at: body.at })
          : body,
    );
    await expect(swapped.audit.verify()).rejects.toMatchObject({ code: "AUDIT_KEY_CHANGED" });
  });

  test("an export is checked offline against the pinned key: a record changed in the file, or another key, is refused", async () => {
    const exported = await alice.audit.export();
    const pinnedKey = exported.auditKey;
    await expect(verifyAuditExport(exported, pinnedKey)).resolves.toMatchObject({ count: exported.records.length });
    const changed = structuredClone(exported);
    changed.records[1]!.type = "vault.deleted";
    await expect(verifyAuditExport(changed, pinnedKey)).rejects.toMatchObject({ code: "AUDIT_BROKEN" });
    const rechained = { ...structuredClone(exported), records: rechain(changed.records).reverse() };
    await expect(verifyAuditExport(rechained, pinnedKey)).rejects.toMatchObject({ code: "AUDIT_CHECKPOINT_INVALID" });
    // A record appended past the signed head (its hash and link right): nothing in the file vouches for it.
    const appended = structuredClone(exported);
    const last = appended.records.at(-1)!;
    const extra: any = { ...last, eventId: randomUUID(), seq: last.seq + 1, type: "vault.deleted", prevHash: last.hash };
    delete extra.hash;
    appended.records.push({ ...extra, hash: auditHash(extra) });
    await expect(verifyAuditExport(appended, pinnedKey)).rejects.toMatchObject({ code: "AUDIT_CHECKPOINT_INVALID" });
    await expect(verifyAuditExport(exported, Buffer.alloc(32, 3).toString("base64"))).rejects.toMatchObject({
      code: "AUDIT_CHECKPOINT_INVALID",
    });
  });
});
