/**
 * The audit log on the split deployment: events over the machine's NATS JetStream to an audit
 * worker process, records in PostgreSQL, the sweeper in a process of its own.
 */
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { Api, invite, registerUser, sharedVault, type TestUser } from "../helpers/client";
import { awaitAudit, everyStateChange, expectRecords } from "../helpers/audit";
import { encryptItem } from "../helpers/crypto";
import { killAllClusters, startCluster, type Cluster } from "../helpers/cluster";
import { withNats } from "../helpers/nats";
import { sleep } from "../helpers/wait";

const deadLetterCount = (namespace: string) =>
  withNats(async (nc) => (await (await nc.jetstreamManager()).streams.info(`${namespace}-dead-letters`)).state.messages);

jest.setTimeout(180_000);

let cluster: Cluster;
let db: pg.Client;

beforeAll(async () => {
  // At info level, the audit worker says when a delivery repeats events it has recorded.
  cluster = await startCluster({
    REGISTRATION_MODE: "open",
    EVENT_ACK_WAIT: "2s",
    SWEEP_INTERVAL: "1s",
    INVITE_RETENTION: "6s",
    LOG_LEVEL: "info",
  });
  db = new pg.Client({ connectionString: cluster.database.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  killAllClusters();
});

const verify = async (api: Api, user: TestUser) => (await api.get(`/audit/verify?orgId=${user.orgId}`, { token: user.token })).body;

test("each route that changes state leaves exactly one audit record, with its actor and subject", async () => {
  const api = new Api(cluster.urls[0]!);
  const { owner, expected, secrets } = await everyStateChange(api);
  const records = await awaitAudit(new Api(cluster.urls[1]!), owner, expected.length);
  expectRecords(records, expected, owner.orgId);
  for (const secret of secrets) expect(JSON.stringify(records)).not.toContain(secret);
  expect(await verify(api, owner)).toEqual({ ok: true, count: expected.length, head: records.at(-1).hash });
  // The largest seq PostgreSQL's column holds is a valid `before`; one more is refused, not a 500.
  expect((await api.get(`/audit?orgId=${owner.orgId}&before=2147483647&limit=1`, { token: owner.token })).body.events[0].seq).toBe(
    expected.length,
  );
  expect((await api.get(`/audit?orgId=${owner.orgId}&before=2147483648`, { token: owner.token })).status).toBe(400);
});

test("SIGKILL of the audit worker while events flow, in the middle of its commit: restarted, it loses none and records none twice", async () => {
  const api = new Api(cluster.urls[0]!);
  const owner = await registerUser(api);
  const { vaultId, vaultKey } = await sharedVault(api, owner);
  const marked = await sharedVault(api, owner, [], "marked");
  // The worker's transaction that records the rename of the marked vault sleeps 3 s in its COMMIT
  // (a deferred trigger), and PostgreSQL finishes a commit whose client died: the worker is killed
  // after its batch is recorded and before it is acknowledged. JetStream delivers it again.
  await db.query(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.type = 'vault.renamed' AND NEW.vault_id = '${marked.vaultId}' THEN PERFORM pg_sleep(3); END IF; RETURN NULL; END $$`);
  await db.query(
    "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON audit_events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()",
  );
  const workerPid = cluster.pid("audit-worker");
  const outputBefore = cluster.output().length;
  let created = 0;
  let restartedAt = 0;
  let lastWriteAt = 0;
  const writer = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const itemId = randomUUID();
      const res = await api.post(`/vaults/${vaultId}/items`, {
        token: owner.token,
        body: encryptItem(vaultKey, vaultId, itemId, "d", "n"),
      });
      expect(res.status).toBe(201);
      created++;
      lastWriteAt = Date.now();
      await sleep(5);
    }
  };
  const killer = async () => {
    while (created < 100) await sleep(10);
    expect((await api.patch(`/vaults/${marked.vaultId}`, { token: owner.token, body: { name: "renamed" } })).status).toBe(200);
    const sleeping = async () => (await db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).rowCount! > 0;
    const end = Date.now() + 10_000;
    while (!(await sleeping())) {
      if (Date.now() > end) throw new Error("the worker never reached the slow commit");
      await sleep(20);
    }
    const from = cluster.output().length;
    process.kill(workerPid, "SIGKILL");
    await cluster.waitFor(
      new RegExp(`audit-worker \\(pid ${workerPid}\\) exited \\(SIGKILL\\); restarting[\\s\\S]*audit-worker started`),
      10_000,
      from,
    );
    restartedAt = Date.now();
  };
  await Promise.all([killer(), ...Array.from({ length: 4 }, () => writer(100))]);
  expect(created).toBe(400);
  expect(cluster.pid("audit-worker")).not.toBe(workerPid);

  const total = 1 + 2 + 400 + 1; // the registration, both vaults, the items, the rename
  const records = await awaitAudit(api, owner, total, 60_000);
  // Caught up within 10 s of the restarted worker (and of the last write).
  expect(Date.now() - Math.max(restartedAt, lastWriteAt)).toBeLessThan(10_000 + 500);
  await db.query("DROP TRIGGER slow_commit ON audit_events");
  expect(records.map((r) => r.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  expect(new Set(records.map((r) => r.eventId)).size).toBe(total);
  expect(new Set(records.filter((r) => r.type === "item.created").map((r) => r.itemId)).size).toBe(400);
  expect(records.filter((r) => r.type === "vault.renamed")).toHaveLength(1);
  expect(await verify(api, owner)).toEqual({ ok: true, count: total, head: records.at(-1).hash });
  // The batch the killed worker had committed came again, and was recognised, not refused or given up on.
  const output = cluster.output().slice(outputBefore);
  expect(output).toMatch(/\[audit-worker\].* \d+ of \d+ events delivered again were already recorded/);
  expect(output).not.toMatch(/failed on delivery|dead-lettered/);
  expect(await deadLetterCount(cluster.namespace)).toBe(0);
});

test("an audit row edited in the database is named by verify, whether or not its hash was recomputed; so is a row cut off the end", async () => {
  const api = new Api(cluster.urls[1]!);
  const owner = await registerUser(api);
  const { vaultId } = await sharedVault(api, owner);
  for (const name of ["a", "b", "c", "d", "e", "f"]) await api.patch(`/vaults/${vaultId}`, { token: owner.token, body: { name } });
  const records = await awaitAudit(api, owner, 8);
  expect(await verify(api, owner)).toMatchObject({ ok: true, count: 8 });
  const row = (seq: number) =>
    db.query("SELECT * FROM audit_events WHERE org_id = $1 AND seq = $2", [owner.orgId, seq]).then((r) => r.rows[0]);

  // Someone with database access pins a rename on another user.
  const original = await row(5);
  await db.query("UPDATE audit_events SET actor_id = $1 WHERE org_id = $2 AND seq = 5", [randomUUID(), owner.orgId]);
  expect(await verify(api, owner)).toEqual({ ok: false, count: 8, brokenAt: 5 });

  // ... and recomputes that record's hash: the next record's prevHash no longer matches.
  const r5 = { ...records[4], actorId: randomUUID() };
  const canonical = [
    r5.prevHash,
    r5.eventId,
    r5.seq,
    r5.type,
    r5.at,
    r5.actorId,
    r5.orgId,
    r5.vaultId ?? null,
    r5.itemId ?? null,
    r5.targetUserId ?? null,
    r5.inviteId ?? null,
  ];
  await db.query("UPDATE audit_events SET actor_id = $1, hash = $2 WHERE org_id = $3 AND seq = 5", [
    r5.actorId,
    createHash("sha256").update(JSON.stringify(canonical)).digest("hex"),
    owner.orgId,
  ]);
  expect(await verify(api, owner)).toEqual({ ok: false, count: 8, brokenAt: 6 });

  await db.query("UPDATE audit_events SET actor_id = $1, hash = $2 WHERE org_id = $3 AND seq = 5", [
    original.actor_id,
    original.hash,
    owner.orgId,
  ]);
  expect(await verify(api, owner)).toMatchObject({ ok: true, count: 8 });

  await db.query("DELETE FROM audit_events WHERE org_id = $1 AND seq = 8", [owner.orgId]);
  expect(await verify(api, owner)).toEqual({ ok: false, count: 7, brokenAt: 8 });
});

test("the sweeper process keeps an expired invite for INVITE_RETENTION (redeeming it answers 400), then purges it; a pending one stays", async () => {
  const api = new Api(cluster.urls[0]!);
  const owner = await registerUser(api);
  const expiring = await invite(api, owner, "member", undefined, "1s");
  const pending = await invite(api, owner, "member", undefined, "1h");
  const exists = async (inviteId: string) => (await db.query("SELECT 1 FROM invites WHERE invite_id = $1", [inviteId])).rowCount === 1;
  // Expired, and swept at least twice (SWEEP_INTERVAL 1s) within its retention (INVITE_RETENTION 6s): still known.
  await sleep(3_500);
  expect(await exists(expiring.inviteId)).toBe(true);
  const expired = await api.post("/invites/redeem", { body: { token: expiring.token } });
  expect([expired.status, expired.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
  // Past its retention: purged, and the token is unknown.
  const end = Date.now() + 20_000;
  while ((await exists(expiring.inviteId)) && Date.now() < end) await sleep(200);
  expect(await exists(expiring.inviteId)).toBe(false);
  expect(await exists(pending.inviteId)).toBe(true);
  expect((await api.post("/invites/redeem", { body: { token: pending.token } })).status).toBe(200);
  expect((await api.post("/invites/redeem", { body: { token: expiring.token } })).status).toBe(404);
});
