/**
 * How fast the split deployment comes back from a fault, and what it keeps: NATS restarted under
 * writes (the audit log catches up by itself), the publishing node killed (every acknowledged
 * change is recorded), a service node killed with requests in flight (answered within 3 s, on the
 * default 30 s request timeout; its routes back within 3 s of the kill, /health honest meanwhile),
 * killed again and again (kept by the gateways each time), and stopped gracefully (refused at
 * once, or drained: a rekey in progress finishes).
 * NATS is the test's own (test/helpers/throwaway.ts), never the machine's; every stop of it is
 * undone in a `finally`.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Api, registerUser, rekeyBody, sharedVault, type TestUser } from "../helpers/client";
import { readAudit } from "../helpers/audit";
import { decryptItem, encryptItem, newVaultKey } from "../helpers/crypto";
import { killAllClusters, startCluster, type Cluster } from "../helpers/cluster";
import { throwawayNats, type Throwaway } from "../helpers/throwaway";
import { itemWriters, pollers, type Polled, type Write } from "../helpers/writers";
import { sleep } from "../helpers/wait";

jest.setTimeout(240_000);

let cluster: Cluster;
let gw: [Api, Api];
let nats: Throwaway;

beforeAll(async () => {
  nats = await throwawayNats();
  // The default request timeout (30 s): answers within 3 s must not come from it.
  cluster = await startCluster({ REGISTRATION_MODE: "open", EVENT_ACK_WAIT: "5s" }, { servers: { natsUrl: nats.url } });
  gw = [new Api(cluster.urls[0]!), new Api(cluster.urls[1]!)];
});
afterAll(async () => {
  await cluster?.stop();
  killAllClusters();
  await nats?.destroy();
});

/** Item creates on both gateways, `parallel` at a time, a short pause between a loop's writes. */
const writers = (owner: TestUser, vaultId: string, vaultKey: Buffer, parallel = 4) =>
  itemWriters(gw, owner, vaultId, vaultKey, { parallel, pauseMs: 10 });

/**
 * Waits until every acknowledged item create of `writes` has its audit record; then checks that no
 * event is recorded twice and that the chain verifies. Resolves with when the last one appeared.
 */
async function everyAcknowledgedWriteRecorded(owner: TestUser, writes: Write[], timeoutMs: number): Promise<number> {
  const acknowledged = new Set(writes.filter((w) => w.status === 201).map((w) => w.itemId));
  const end = Date.now() + timeoutMs;
  for (;;) {
    const records = await readAudit(gw[0], owner);
    const recorded = new Set(records.filter((r) => r.type === "item.created").map((r) => r.itemId));
    const missing = [...acknowledged].filter((id) => !recorded.has(id));
    if (missing.length === 0) {
      const at = Date.now();
      expect(new Set(records.map((r) => r.eventId)).size).toBe(records.length);
      const created = records.filter((r) => r.type === "item.created").map((r) => r.itemId);
      expect(new Set(created).size).toBe(created.length);
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
      const verify = await gw[1].get(`/audit/verify?orgId=${owner.orgId}`, { token: owner.token });
      expect(verify.body).toEqual({ ok: true, count: records.length, head: records.at(-1).hash });
      return at;
    }
    if (Date.now() > end)
      throw new Error(`${missing.length} of ${acknowledged.size} acknowledged item creates have no audit record after ${timeoutMs} ms`);
    await sleep(100);
  }
}

test("NATS restarted under writes: every acknowledged change is recorded within 10 s of NATS coming back, none twice, and the chain verifies", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const load = writers(owner, vaultId, vaultKey);
  await sleep(1_000);
  let upAt = 0;
  try {
    await nats.stop();
    await sleep(3_000);
  } finally {
    await nats.start();
    upAt = Date.now();
  }
  // Writes go on after NATS is back: the later ones are the ones the issue saw never recorded.
  await sleep(4_000);
  await load.stop();
  const after = load.writes.filter((w) => w.started > upAt + 2_000);
  expect(after.length).toBeGreaterThan(0);
  expect(after.every((w) => w.status === 201)).toBe(true);
  const lastWrite = Math.max(...load.writes.map((w) => w.ended));
  const recordedAt = await everyAcknowledgedWriteRecorded(owner, load.writes, 30_000);
  expect(recordedAt - Math.max(upAt, lastWrite)).toBeLessThan(10_000);
  // Never a 500 or a dropped connection: successes, and 503 while NATS was away; none waited for the deadline.
  expect(load.writes.filter((w) => w.status !== 201 && w.status !== 503)).toEqual([]);
  expect(load.writes.filter((w) => w.ended - w.started >= 3_000)).toEqual([]);
});

test("the publishing node SIGKILLed under writes: every change it acknowledged is recorded, none twice", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const load = writers(owner, vaultId, vaultKey);
  await sleep(1_000);
  const pid = cluster.pid("items");
  const from = cluster.output().length;
  process.kill(pid, "SIGKILL");
  await cluster.waitFor(/\[cluster\] items started, pid \d+/, 10_000, from);
  const restartedAt = Date.now();
  const end = Date.now() + 20_000;
  while (load.writes.filter((w) => w.status === 201 && w.started > restartedAt).length < 20 && Date.now() < end) await sleep(100);
  await load.stop();
  expect(load.writes.filter((w) => w.status === 201 && w.started > restartedAt).length).toBeGreaterThanOrEqual(20);
  expect(load.writes.filter((w) => w.status !== 201 && w.status !== 503)).toEqual([]);
  await everyAcknowledgedWriteRecorded(owner, load.writes, 10_000);
});

/** When a gateway served again after `since`: the end of its first success among the requests started after then (Infinity: never). */
const servedAgain = (answers: Array<{ started: number; ended: number; via?: number; status: number }>, via: number, since: number) =>
  Math.min(...answers.filter((a) => a.via === via && a.started > since && (a.status === 200 || a.status === 201)).map((a) => a.ended));

/**
 * A health check that came back after a route served again on its gateway, within this much, saw
 * the same registry: the calls in flight at the kill are probed after 1 s, and a probe that ends
 * in the moment between the new process's first answer and its announcement is honest for that moment.
 */
const SAME_MOMENT_MS = 200;

/**
 * Routes serve again within 3 s of a node's death on this machine: about 1 s measured (the new
 * process starts in about 0.35 s, then Moleculer waits 0.5 s for the other nodes' news before its
 * services start). The tests hold 2 s, so that losing either second it gained fails them: the node
 * announcing its services after a second of quiet (Moleculer's default), 2.4 s in all. The test of
 * repeated kills holds their median to it, and each return to 3 s: one return of its 52 slowed by
 * a loaded machine (2.04 to 2.27 s, once in a CI run) is not the regression it looks for.
 */
const SERVED_AGAIN_MS = 2_000;
const EACH_SERVED_AGAIN_MS = 3_000;
/** And the supervisor starts a crashed node again at once (it waited 0.5 s). */
const RESTARTED_MS = 400;

/**
 * Every unhealthy answer of a gateway: 503 naming `service`, with Retry-After, answered after `from`
 * (a check asked a moment before the fault may be answered after it) and asked before that gateway
 * served again.
 */
function unhealthyOnlyMeanwhile(health: Polled[], via: number, service: string, from: number, back: number): Polled[] {
  const unhealthy = health.filter((h) => h.via === via && h.status !== 200);
  for (const h of unhealthy) {
    expect({ status: h.status, body: h.body, retryAfter: h.retryAfter }).toEqual({
      status: 503,
      body: { error: { code: "UNAVAILABLE", message: `Not every service is reachable: ${service}` } },
      retryAfter: "1",
    });
    expect(h.ended).toBeGreaterThanOrEqual(from);
    expect(h.started).toBeLessThan(back + SAME_MOMENT_MS);
  }
  return unhealthy;
}

/** Item writes (8 loops), reads of one item and health checks, through both gateways: every answer. */
async function itemsTraffic(owner: TestUser, vaultId: string, vaultKey: Buffer) {
  const load = writers(owner, vaultId, vaultKey, 8);
  await sleep(1_000);
  const stored = load.writes.find((w) => w.status === 201);
  if (!stored) throw new Error("no item created");
  const reads = pollers(gw, `/vaults/${vaultId}/items/${stored.itemId}`, { token: owner.token });
  const health = pollers(gw, "/health");
  await sleep(500);
  return {
    load,
    reads,
    health,
    /** When the write route, then the read route, served again through gateway 0, then gateway 1, after `since`. */
    back: (since: number) => [0, 1].flatMap((g) => [servedAgain(load.writes, g, since), servedAgain(reads.polls, g, since)]),
    stop: () => Promise.all([load.stop(), reads.stop(), health.stop()]),
  };
}

/** Until `done`, or `ms` pass. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(50);
}

test("a service node SIGKILLed with requests in flight: they are answered within 3 s, its routes serve again on both gateways within 3 s of the kill, and /health is unhealthy only meanwhile", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const traffic = await itemsTraffic(owner, vaultId, vaultKey);
  const { load, reads, health } = traffic;
  const pid = cluster.pid("items");
  const from = cluster.output().length;
  // A burst sent just before the kill: the loops alone leave idle gaps, and may have nothing in flight at that instant.
  const burst = load.burst(32);
  await sleep(5);
  const killedAt = Date.now();
  let restartedAfterMs = Infinity;
  try {
    process.kill(pid, "SIGKILL");
    await cluster.waitFor(/\[cluster\] items started, pid (\d+)/, 10_000, from);
    restartedAfterMs = Date.now() - killedAt;
    // Until both routes serve again through both gateways, and for 4 s after the kill at least.
    await until(() => traffic.back(killedAt).every((t) => t < Infinity) && Date.now() > killedAt + 4_000, 20_000);
  } finally {
    await traffic.stop();
    await burst;
  }
  // Another process than the one killed, started again at once.
  expect(cluster.pid("items")).not.toBe(pid);
  expect(restartedAfterMs).toBeLessThan(RESTARTED_MS);
  const caught = load.writes.filter((w) => w.started < killedAt && w.ended > killedAt);
  expect(caught.length).toBeGreaterThan(0);
  for (const w of caught) {
    expect([201, 503]).toContain(w.status);
    expect(w.ended - killedAt).toBeLessThan(3_000);
  }
  // Nothing waits for the request timeout, before or after the restart; never a 500; a 503 says when to try again.
  const all = [...load.writes, ...reads.polls];
  expect(all.filter((w) => w.ended - w.started >= 3_000)).toEqual([]);
  expect(all.filter((w) => w.status !== 200 && w.status !== 201 && w.status !== 503)).toEqual([]);
  expect(reads.polls.filter((r) => r.status === 503 && r.retryAfter !== "1")).toEqual([]);
  // Served again, each route on each gateway, within 2 s of the kill (not of the restart): see SERVED_AGAIN_MS.
  const back = traffic.back(killedAt);
  expect(back.map((t) => t - killedAt).filter((ms) => !(ms < SERVED_AGAIN_MS))).toEqual([]);
  // And stays served: no route answers 503 again once it has served (the node dropped by a gateway that had not heard of its new process yet).
  const failedAgain = (answers: typeof all, g: number, at: number) =>
    answers
      .filter((a) => a.via === g && a.started > at + SAME_MOMENT_MS && a.status !== 200 && a.status !== 201)
      .map((a) => a.started - killedAt);
  expect([0, 1].flatMap((g) => [...failedAgain(load.writes, g, back[2 * g]!), ...failedAgain(reads.polls, g, back[2 * g + 1]!)])).toEqual(
    [],
  );
  // Unhealthy only while that gateway could not serve the routes; healthy again within 3 s of the kill.
  for (const g of [0, 1]) {
    unhealthyOnlyMeanwhile(health.polls, g, "items", killedAt, Math.min(back[2 * g]!, back[2 * g + 1]!));
    const later = health.polls.filter((h) => h.via === g && h.started > killedAt + 3_000);
    expect(later.length).toBeGreaterThan(0);
    expect(later.filter((h) => h.status !== 200)).toEqual([]);
  }
  expect(cluster.output().slice(from)).toMatch(/node '[^']*items' \(instance \w+\) is gone/);
});

test("a service node stopped gracefully under writes: requests after the stop are refused at once (503), none waits for the timeout, /health names it meanwhile, and it serves again", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const traffic = await itemsTraffic(owner, vaultId, vaultKey);
  const { load, health } = traffic;
  const from = cluster.output().length;
  const stoppedAt = Date.now();
  let restartedAt = Infinity;
  try {
    process.kill(cluster.pid("items"), "SIGTERM");
    await cluster.waitFor(/\[cluster\] items started, pid \d+/, 20_000, from);
    restartedAt = Date.now();
    await until(() => traffic.back(restartedAt).every((t) => t < Infinity), 20_000);
  } finally {
    await traffic.stop();
  }
  expect(load.writes.some((w) => w.started > restartedAt && w.status === 201)).toBe(true);
  expect(load.writes.filter((w) => w.started > stoppedAt && w.status === 503).length).toBeGreaterThan(0);
  expect(load.writes.filter((w) => w.ended - w.started >= 3_000)).toEqual([]);
  expect(load.writes.filter((w) => w.status !== 201 && w.status !== 503)).toEqual([]);
  // The stopped node left the registries at once: each gateway said so, naming it, until it served again.
  const back = traffic.back(restartedAt);
  const unhealthy = [0, 1].flatMap((g) =>
    unhealthyOnlyMeanwhile(health.polls, g, "items", stoppedAt, Math.min(back[2 * g]!, back[2 * g + 1]!)),
  );
  expect(unhealthy.length).toBeGreaterThan(0);
});

test("a service node killed every 3 s for 40 s, each process before its first heartbeat: after each kill its routes serve again (within 3 s, 2 s at the median) and stay served until the next", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const traffic = await itemsTraffic(owner, vaultId, vaultKey);
  const kills: number[] = [];
  const from = cluster.output().length;
  try {
    // Past the nodes' heartbeat timeout (15 s) with no heartbeat from any of its processes.
    while (kills.length < 13) {
      const since = cluster.output().length;
      kills.push(Date.now());
      process.kill(cluster.pid("items"), "SIGKILL");
      await cluster.waitFor(/\[cluster\] items started, pid \d+/, 10_000, since);
      await sleep(kills.at(-1)! + 3_000 - Date.now());
    }
  } finally {
    await traffic.stop();
  }
  const { load, reads } = traffic;
  const returns: number[] = [];
  const late = kills.flatMap((killedAt, k) => {
    const next = kills[k + 1] ?? Date.now();
    const back = traffic.back(killedAt);
    return [0, 1].flatMap((g) =>
      [load.writes, reads.polls].flatMap((answers, route) => {
        const served = back[2 * g + route]!;
        returns.push(served - killedAt);
        // Failed after the route served again, answered before the next kill (those in flight at it are that kill's).
        const failedAfter = answers.filter(
          (a) => a.via === g && a.started > served + SAME_MOMENT_MS && a.ended < next && a.status !== 200 && a.status !== 201,
        );
        return served - killedAt < EACH_SERVED_AGAIN_MS && failedAfter.length === 0
          ? []
          : [{ kill: k, gateway: g, route, servedAfterMs: served - killedAt, failedAfter: failedAfter.length }];
      }),
    );
  });
  expect(late).toEqual([]);
  const median = [...returns].sort((a, b) => a - b)[Math.floor(returns.length / 2)]!;
  expect(returns).toHaveLength(52);
  if (!(median < SERVED_AGAIN_MS)) throw new Error(`routes served again ${median} ms after a kill at the median: ${returns.join(", ")} ms`);
  // No node took it for silent meanwhile: each new process's announcement counts as its heartbeat.
  expect(
    cluster
      .output()
      .slice(from)
      .match(/.*Heartbeat is not received from '[^']*items'.*/g) ?? [],
  ).toEqual([]);
});

test("the rekey node stopped gracefully in the middle of a large rekey: the rekey finishes (204) before the node goes", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const v = `/vaults/${vaultId}`;
  const ids = Array.from({ length: 3_000 }, () => randomUUID());
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < ids.length) {
        const i = next++;
        const res = await gw[i % 2]!.post(`${v}/items`, {
          token: owner.token,
          body: encryptItem(vaultKey, vaultId, ids[i]!, `${"p".repeat(1024)}${i}`, `n${i}`),
        });
        if (res.status !== 201) throw new Error(`item: ${res.status}`);
      }
    }),
  );
  const newKey = newVaultKey();
  const items = ids.map((id, i) => encryptItem(newKey, vaultId, id, `${"p".repeat(1024)}${i}`, `n${i}`));
  const watcher = new pg.Client({ connectionString: cluster.database.url });
  await watcher.connect();
  const from = cluster.output().length;
  const request = gw[0].post(`${v}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner], items) });
  try {
    // Stop it once its transaction is writing items.
    const end = Date.now() + 20_000;
    for (;;) {
      const { rowCount } = await watcher.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'UPDATE items SET encrypted_data%' AND state <> 'idle'",
      );
      if (rowCount) break;
      if (Date.now() > end) throw new Error("the rekey never reached its item updates");
      await sleep(5);
    }
    process.kill(cluster.pid("rekey"), "SIGTERM");
  } finally {
    await watcher.end();
  }
  const res = await request;
  expect(res.status).toBe(204);
  await cluster.waitFor(/\[cluster\] rekey \(pid \d+\) exited \(0\); restarting/, 20_000, from);
  const after = (await gw[1].get(`${v}/items`, { token: owner.token })).body.items;
  expect(after).toHaveLength(ids.length);
  for (const item of after) expect(decryptItem(newKey, item).name).toMatch(/^n\d+$/);
  expect((await gw[0].get(v, { token: owner.token })).body.keyVersion).toBe(2);
});

test("NATS restarted three times: calls in flight across each stop, and calls of several routes sent in the seconds after it is back, are answered within 3 s", async () => {
  const owner = await registerUser(gw[0]);
  const { vaultId, vaultKey } = await sharedVault(gw[0], owner);
  const load = writers(owner, vaultId, vaultKey, 4);
  // Reads of another service on both gateways, and a burst of calls right after each return.
  const reads: Write[] = [];
  let reading = true;
  const read = async (i: number) => {
    const started = Date.now();
    const res = await gw[i % 2]!.get(`/vaults/${vaultId}/members`, { token: owner.token }).catch(() => ({ status: 0 }));
    reads.push({ itemId: "", started, ended: Date.now(), status: res.status });
  };
  const readers = [0, 1].map(async (i) => {
    while (reading) {
      await read(i);
      await sleep(20);
    }
  });
  const ups: number[] = [];
  for (let round = 0; round < 3; round++) {
    await sleep(1_000);
    try {
      await nats.stop();
      await sleep(2_000);
    } finally {
      await nats.start();
      ups.push(Date.now());
    }
    // Calls sent 0.5, 1, 2 and 3 s after NATS is back: the moments the transporters reconnect and re-subscribe.
    for (const at of [500, 1_000, 2_000, 3_000]) {
      await sleep(at - (Date.now() - ups.at(-1)!));
      void load.burst(8);
      void Promise.all(Array.from({ length: 8 }, (_, i) => read(i)));
    }
    await sleep(1_500);
  }
  await load.stop();
  reading = false;
  await Promise.all(readers);
  await sleep(3_500); // the bursts' last calls
  const all = [...load.writes, ...reads];
  const after = all.filter((w) => ups.some((up) => w.started > up + 400 && w.started < up + 3_500));
  expect(after.length).toBeGreaterThan(50);
  // Never a 500 or a dropped connection; none waited for the 30 s deadline, nor more than 3 s.
  expect(all.filter((w) => w.status !== 200 && w.status !== 201 && w.status !== 503)).toEqual([]);
  expect(
    all
      .filter((w) => w.ended - w.started >= 3_000)
      .map((w) => ({ started: w.started - ups[0]!, took: w.ended - w.started, status: w.status })),
  ).toEqual([]);
  // And the service came back each time: calls sent 3 s after the last return succeed.
  expect(all.filter((w) => w.started > ups.at(-1)! + 3_000).every((w) => w.status === 200 || w.status === 201)).toBe(true);
});
