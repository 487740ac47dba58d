/**
 * A real Prometheus (Debian's `prometheus`) scrapes every node of the local split deployment on its
 * operations port; after some traffic its query API shows per-service request rates and the audit
 * worker's lag. The same run sends traces to a Zipkin collector (a small HTTP server here): one
 * request's spans, from the gateway's process and the services' processes, share one trace id.
 */
import { notTheService } from "../helpers/openapi-check";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import { Api, registerUser, sharedVault, sharedVaultBody } from "../helpers/client";
import { encryptItem } from "../helpers/crypto";
import { killAllClusters, startCluster, type Cluster } from "../helpers/cluster";
import { freePort } from "../helpers/ports";
import { tempDir } from "../helpers/server";
import { eventually, sleep } from "../helpers/wait";
import { SERVICES } from "../../services";

/** The split deployment's nodes: one per service, and a second gateway. */
const NODES = Object.keys(SERVICES).length + 1;

jest.setTimeout(180_000);

let cluster: Cluster;
let prometheus: ChildProcess | undefined;
let promUrl = "";
let promOut = "";
const spans: any[] = [];
let collector: http.Server;
const dirs: string[] = [];

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.url === "/api/v2/spans") spans.push(...JSON.parse(body));
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  const zipkin = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  cluster = await startCluster({ REGISTRATION_MODE: "open", TRACING_ZIPKIN_URL: zipkin }, { ops: true });

  const dir = tempDir("vault-prometheus-");
  dirs.push(dir);
  const targets = Object.values(cluster.opsPorts).map((p) => `'127.0.0.1:${p}'`);
  expect(targets.length).toBe(NODES);
  fs.writeFileSync(
    path.join(dir, "prometheus.yml"),
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "scrape_configs:",
      "  - job_name: vault",
      "    static_configs:",
      `      - targets: [${targets.join(", ")}]`,
    ].join("\n"),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  // Prometheus's own HTTP API is under /api/v1 too: its answers are not this service's.
  notTheService(promUrl);
  prometheus = spawn(
    "prometheus",
    [
      `--config.file=${path.join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  prometheus.stdout!.on("data", (d) => (promOut += d));
  prometheus.stderr!.on("data", (d) => (promOut += d));
  const end = Date.now() + 30_000;
  while (
    (await fetch(`${promUrl}/-/ready`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > end || prometheus.exitCode !== null) throw new Error(`prometheus did not start: ${promOut.slice(-2000)}`);
    await sleep(200);
  }
});

afterAll(async () => {
  prometheus?.kill("SIGTERM");
  await cluster?.stop();
  killAllClusters();
  collector?.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as {
    status: string;
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  if (body.status !== "success") throw new Error(`query failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** Polls a query until `ok` holds for its result. */
function queryUntil<T>(expr: string, ok: (r: Awaited<ReturnType<typeof query>>) => T | undefined): Promise<T> {
  return eventually(`Prometheus: ${expr}`, async () => ok(await query(expr)), { timeoutMs: 30_000, everyMs: 500 });
}

test("Prometheus scrapes every node (one per service, and the second gateway), and shows per-service request rates and the audit lag after traffic", async () => {
  await queryUntil(`count(up{job="vault"} == 1)`, (r) => (r[0] && Number(r[0].value[1]) === NODES ? true : undefined));

  const gw = cluster.urls.map((u) => new Api(u));
  const owner = await registerUser(gw[0]!);
  const { vaultId, vaultKey } = await sharedVault(gw[0]!, owner);
  const endTraffic = Date.now() + 6_000;
  let written = 0;
  while (Date.now() < endTraffic) {
    await Promise.all(
      gw.map(async (api) => {
        const id = randomUUID();
        const res = await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, id, "d", "n") });
        expect(res.status).toBe(201);
        written++;
        expect((await api.get("/vaults", { token: owner.token })).status).toBe(200);
      }),
    );
  }
  expect(written).toBeGreaterThan(20);

  // Per-service request rates, from the services' own nodes.
  const ns = cluster.namespace;
  const rates = await queryUntil(`sum by (service) (rate(moleculer_request_total{namespace="${ns}"}[15s]))`, (r) => {
    const by = Object.fromEntries(r.map((s) => [s.metric.service, Number(s.value[1])]));
    return by.items! > 0 && by.vaults! > 0 && by.api! > 0 ? by : undefined;
  });
  expect(rates.items).toBeGreaterThan(0.5);
  // Requests by route and status at the gateways.
  const created = await queryUntil(
    `sum(vault_http_requests_total{namespace="${ns}",route="/api/v1/vaults/:vaultId/items",status="201"})`,
    (r) => (r[0] && Number(r[0].value[1]) >= written ? Number(r[0].value[1]) : undefined),
  );
  expect(created).toBe(written);
  // The audit worker's lag and backlog, once it has caught up.
  const lag = await queryUntil(`vault_audit_lag{namespace="${ns}"}`, (r) => (r.length === 1 ? Number(r[0]!.value[1]) : undefined));
  expect(lag).toBeGreaterThanOrEqual(0);
  expect(lag).toBeLessThan(10);
  await queryUntil(`vault_audit_events_pending{namespace="${ns}"}`, (r) =>
    r.length === 1 && Number(r[0]!.value[1]) === 0 ? true : undefined,
  );
  // The PostgreSQL pool of each node that has opened one.
  const pools = await query(`vault_store_pool_connections{namespace="${ns}",state="total"}`);
  expect(pools.length).toBeGreaterThan(0);
});

test("one trace across processes: the gateway's span and the spans of the services it called share the request's id", async () => {
  const api = new Api(cluster.urls[1]!);
  const owner = await registerUser(api);
  const traceId = randomBytes(8).toString("hex");
  const res = await fetch(`${cluster.urls[1]}/vaults`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${owner.token}`,
      "x-request-id": traceId,
      "content-type": "application/json",
    },
    body: JSON.stringify(sharedVaultBody(randomBytes(32), owner)),
  });
  expect(res.status).toBe(201);
  const end = Date.now() + 15_000;
  const ofTrace = () => spans.filter((s) => s.traceId === traceId);
  // Each process sends its spans in its own batches, once a second.
  const arrived = () => ofTrace().some((s) => s.name.includes("vaults.create")) && ofTrace().some((s) => s.name === "POST /api/v1/vaults");
  while (!arrived() && Date.now() < end) await sleep(200);
  await sleep(1_500); // any later span of the request, too
  const services = new Set(ofTrace().map((s) => s.localEndpoint.serviceName));
  expect(services).toEqual(new Set(["api", "vaults"]));
  const root = ofTrace().find((s) => s.localEndpoint.serviceName === "api" && !s.parentId);
  expect(root?.name).toBe("POST /api/v1/vaults");
  // Every other span descends from the gateway's.
  const byId = new Map(ofTrace().map((s) => [s.id, s]));
  for (const s of ofTrace()) {
    let at = s;
    while (at.parentId) at = byId.get(at.parentId) ?? { parentId: undefined, id: "missing" };
    expect(at.id).toBe(root.id);
  }
});
