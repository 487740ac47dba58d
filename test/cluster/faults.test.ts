/**
 * Faults in the split deployment: a node killed in the middle of a rekey, and its NATS, Redis and
 * PostgreSQL going away under traffic. Those three are the test's own (test/helpers/throwaway.ts),
 * never the machine's. Every stop is undone in a `finally`.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Api, invite, registerUser, rekeyBody, sharedVault, type TestUser } from "../helpers/client";
import { decryptItem, encryptItem, newUserKeys, newVaultKey, registrationBundle, unb64, unwrapShared } from "../helpers/crypto";
import { killAllClusters, startCluster, type Cluster } from "../helpers/cluster";
import { throwawayNats, throwawayPostgres, throwawayRedis, type Throwaway } from "../helpers/throwaway";
import { eventually, sleep } from "../helpers/wait";

jest.setTimeout(240_000);

let cluster: Cluster;
let gw: [Api, Api];
let owner: TestUser;
let nats: Throwaway, redis: Throwaway, postgres: Throwaway;

beforeAll(async () => {
  [nats, redis, postgres] = await Promise.all([throwawayNats(), throwawayRedis(), throwawayPostgres()]);
  // Short deadlines, so that a request to a vanished node or through a missing NATS fails fast.
  cluster = await startCluster(
    { REQUEST_TIMEOUT: "8000", LOGIN_MAX_FAILURES: "3" },
    { servers: { natsUrl: nats.url, redisUrl: redis.url, pgAdminUrl: postgres.url } },
  );
  gw = [new Api(cluster.urls[0]!), new Api(cluster.urls[1]!)];
  owner = await registerUser(gw[0]);
});
afterAll(async () => {
  await cluster?.stop();
  killAllClusters();
  await Promise.all([nats, redis, postgres].map((s) => s?.destroy()));
});

/** Steady traffic on both gateways until stopped: every status seen, and when. */
function traffic(token: string, vaultId: string, vaultKey: Buffer) {
  const seen: Array<{ at: number; status: number }> = [];
  let running = true;
  const loops = [0, 1, 2, 3].map(async (i) => {
    while (running) {
      const api = gw[i % 2]!;
      const started = Date.now();
      const itemId = randomUUID();
      const res =
        i < 2
          ? await api.get("/vaults", { token }).catch(() => ({ status: 0 }))
          : await api
              .post(`/vaults/${vaultId}/items`, { token, body: encryptItem(vaultKey, vaultId, itemId, "t", "t") })
              .catch(() => ({ status: 0 }));
      seen.push({ at: started, status: res.status });
      await sleep(20);
    }
  });
  return {
    seen,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const ok = (status: number) => status === 200 || status === 201;

/**
 * Stops a machine service for `downMs` under steady traffic, starts it again, and waits until the
 * traffic succeeds again on both gateways: every status seen, and when the service went down.
 */
async function outageUnderTraffic(
  service: { stop(): Promise<void>; start(): Promise<void> },
  downMs: number,
  vaultId: string,
  vaultKey: Buffer,
) {
  const load = traffic(owner.token, vaultId, vaultKey);
  await sleep(1_000);
  let downAt = 0,
    upAt = 0;
  try {
    await service.stop();
    downAt = Date.now();
    await sleep(downMs);
  } finally {
    await service.start();
    upAt = Date.now();
  }
  await eventually(
    "traffic succeeding again",
    async () => {
      const recent = load.seen.filter((s) => s.at > upAt + 500);
      return recent.length >= 20 && recent.slice(-20).every((s) => ok(s.status)) ? true : undefined;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );
  await load.stop();
  return { seen: load.seen, downAt };
}

test("SIGKILL of the rekey node in the middle of a large rekey: the vault is wholly old, and the node comes back", async () => {
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const v = `/vaults/${vaultId}`;
  const pad = "k".repeat(2048);
  const ids = Array.from({ length: 5_000 }, () => randomUUID());
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < ids.length) {
        const i = next++;
        const res = await gw[i % 2]!.post(`${v}/items`, {
          token: owner.token,
          body: encryptItem(vaultKey, vaultId, ids[i]!, `${pad}${i}`, `n${i}`),
        });
        if (res.status !== 201) throw new Error(`item: ${res.status}`);
      }
    }),
  );
  const newKey = newVaultKey();
  const items = ids.map((id, i) => encryptItem(newKey, vaultId, id, `${pad}${i}`, `n${i}`));

  // Kill the rekey node once its transaction is writing items (seen in pg_stat_activity).
  const watcher = new pg.Client({ connectionString: cluster.database.url });
  await watcher.connect();
  const rekeyPid = cluster.pid("rekey");
  const from = cluster.output().length;
  const request = gw[0].post(`${v}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner], items) });
  // A rekey that answers before its item updates were seen is a failed setup, named with its answer (not a timeout).
  let answered: { status: number } | undefined;
  void request.then((r) => (answered = r));
  try {
    const seen = await eventually(
      "the rekey's item updates",
      async () => {
        if (answered) return { answeredFirst: answered.status };
        const { rowCount } = await watcher.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'UPDATE items SET encrypted_data%' AND state <> 'idle'",
        );
        return rowCount ? { answeredFirst: undefined } : undefined;
      },
      // The 15 MB request is read, checked and sent to the rekey node before any update: slow on a loaded machine.
      { timeoutMs: 90_000, everyMs: 100 },
    );
    expect(seen.answeredFirst).toBeUndefined();
    process.kill(rekeyPid, "SIGKILL");
  } finally {
    await watcher.end();
  }
  const res = await request;
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ error: { code: "UNAVAILABLE", message: "Service temporarily unavailable" } });

  // Wholly old: every item opens with the old key, none with the new, and the key version is 1.
  const after = (await gw[1].get(`${v}/items`, { token: owner.token })).body.items;
  expect(after).toHaveLength(ids.length);
  for (const item of after) expect(() => decryptItem(vaultKey, item)).not.toThrow();
  expect(
    after.filter((item: any) => {
      try {
        decryptItem(newKey, item);
        return true;
      } catch {
        return false;
      }
    }),
  ).toHaveLength(0);
  const view = (await gw[0].get(v, { token: owner.token })).body;
  expect(view.keyVersion).toBe(1);
  expect(unwrapShared(unb64(view.encryptedVaultKey), owner.keys.rsaPrivate)).toEqual(vaultKey);

  // The node comes back (the cluster restarts it) and the same rekey then succeeds.
  await cluster.waitFor(/\[cluster\] rekey started, pid (\d+)/, 30_000, from);
  const retried = await eventually(
    "the rekey after the restart",
    async () => {
      const r = await gw[1].post(`${v}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner], items) });
      return r.status === 204 ? r : undefined;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );
  expect(retried.status).toBe(204);
  const rekeyed = (await gw[0].get(`${v}/items`, { token: owner.token })).body.items;
  for (const item of rekeyed) expect(() => decryptItem(newKey, item)).not.toThrow();
});

test("NATS restarted under traffic: requests fail cleanly (503) while it is down and succeed again after", async () => {
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const { seen, downAt } = await outageUnderTraffic(nats, 3_000, vaultId, vaultKey);
  // Never a 500, a dropped connection or a hang: only successes and 503.
  expect(seen.every((s) => ok(s.status) || s.status === 503)).toBe(true);
  expect(seen.some((s) => s.status === 503 && s.at >= downAt - 100)).toBe(true);
  expect(seen.filter((s) => s.at < downAt - 500).every((s) => ok(s.status))).toBe(true);
});

test("Redis stopped: logins, previews and registrations go on; a token is still consumed once; limits still hold", async () => {
  const inv = await invite(gw[0], owner);
  try {
    await redis.stop();
    // The preview reads the database.
    const preview = await gw[1].post("/invites/redeem", { body: { token: inv.token } });
    expect([preview.status, preview.body.email]).toEqual([200, inv.email]);
    // Twenty registrations with one token over both gateways: the database's conditional update lets one through.
    const bundle = registrationBundle(await newUserKeys());
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        gw[i % 2]!.post("/auth/register", { body: { email: inv.email, ...bundle, inviteToken: inv.token } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expect(r.body.error.code).toBe("INVITE_NOT_REDEEMABLE");
    // Logins work; failed ones are still limited (per process while Redis is away).
    expect((await gw[0].post("/auth/login", { body: { email: inv.email, authHash: bundle.authHash } })).status).toBe(200);
    const failures = [];
    for (let i = 0; i < 5; i++)
      failures.push(
        (await gw[i % 2]!.post("/auth/login", { body: { email: inv.email, authHash: Buffer.alloc(32, i).toString("base64") } })).status,
      );
    expect(failures.slice(0, 3)).toEqual([401, 401, 401]);
    expect(failures.slice(3)).toEqual([429, 429]);
  } finally {
    await redis.start();
  }
  // Back with Redis: the used token stays used, and a new invite is consumed once.
  const used = await gw[0].post("/invites/redeem", { body: { token: inv.token } });
  expect([used.status, used.body.error.code]).toEqual([400, "INVITE_NOT_REDEEMABLE"]);
  const fresh = await invite(gw[1], owner);
  const bundle = registrationBundle(await newUserKeys());
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      gw[i % 2]!.post("/auth/register", { body: { email: fresh.email, ...bundle, inviteToken: fresh.token } }),
    ),
  );
  expect(results.filter((r) => r.status === 201)).toHaveLength(1);
});

test("PostgreSQL restarted: requests fail with 503 while it is down, and the pools recover", async () => {
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const { seen, downAt } = await outageUnderTraffic(postgres, 2_000, vaultId, vaultKey);
  expect(seen.every((s) => ok(s.status) || s.status === 503)).toBe(true);
  expect(seen.some((s) => s.status === 503 && s.at >= downAt - 100)).toBe(true);
  // Nothing half-written: every item the traffic was told about is there and opens.
  const items = (await gw[1].get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items;
  const created = seen.filter((s) => s.status === 201).length;
  expect(items.length).toBeGreaterThanOrEqual(created);
  for (const item of items) expect(decryptItem(vaultKey, item).data).toBe("t");
});
