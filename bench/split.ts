/**
 * The split deployment (dist/bin/cluster.js: one process per service and a gateway, over NATS, on
 * PostgreSQL and Redis) against a baseline split the same way: the product's gateway mixin and
 * token check in one process, an action answering a constant in another, over the same NATS.
 *   1. authenticated GET /vaults (a user with 5 vaults) and item create, each against the baseline
 *   2. rekey of 10,000 items of about 2 KiB across nodes: time and peak RSS of every process
 * PostgreSQL, Redis and NATS are the machine's, not pinned; the benchmark's processes are.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { encryptItem } from "../test/helpers/crypto";
import { NATS_URL, startCluster, type Cluster } from "../test/helpers/cluster";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { alternate, call, cpuMs, figure, load, PAIRS, peakRssMiB, PIN } from "./common";
import { eventually } from "../test/helpers/wait";
import { fillVault, newVault, rekeyBody, timedRekey, userWithVaults, type VaultUser } from "./vault-user";

const BASELINE = path.join(__dirname, "baseline-server.js");
const REKEY_ITEMS = Number(process.env.BENCH_SPLIT_REKEY_ITEMS ?? 10_000);

/** The baseline's two processes: its gateway, and the node answering the constant. */
interface Baseline {
  gateway: ServerProcess;
  constantNode: ChildProcess;
}

/** The product and the baseline, up, and the benchmark user's token (one secret: good on both). */
interface Deployments {
  cluster: Cluster;
  /** The product's API root (its one gateway's). */
  url: string;
  /** The product's gateway node, as the cluster names it. */
  gatewayNode: string;
  baseline: Baseline;
  token: string;
}

/** A side's median req/s, p50 and p99. */
type Side = { rps: number; p50: number; p99: number };
/** Baseline (a) and product (b) loaded in turn: each side's medians, the median of the pairs' ratios and each pair's. */
type Pairs = Awaited<ReturnType<typeof alternate>>;
/** The loads' results, and each process's CPU per request in the last pair of each. */
type Loads = { read: Pairs; writes: Pairs; spread: Pairs; cpu: { base: string; vaults: string; baseWrite: string; items: string } };

export async function splitDeployment(): Promise<void> {
  console.log("## Split deployment: a process per service over NATS, PostgreSQL, Redis\n");
  const jwtSecret = randomBytes(32).toString("base64");
  const cluster = await startCluster(
    { REGISTRATION_MODE: "open", GATEWAYS: "1", JWT_SECRET: jwtSecret, LOG_LEVEL: "warn" },
    { prefix: PIN.server },
  );
  let baseline: Baseline | undefined;
  try {
    const url = cluster.urls[0]!;
    const user = await userWithVaults(url);
    const { token, vaultIds } = user;
    const constantRead = JSON.stringify(await call("GET", `${url}/vaults`, token));
    const itemBody = (itemId: string) =>
      JSON.stringify(encryptItem(user.vaultKey, vaultIds[0]!, itemId, "correct horse battery staple", "example.com"));
    const write = JSON.stringify(await call("POST", `${url}/vaults/${vaultIds[0]}/items`, token, JSON.parse(itemBody(randomUUID()))));
    baseline = await startBaseline(jwtSecret, constantRead, write);
    await untilConstantAnswers(baseline, token);

    console.log(`responses: GET ${constantRead.length} bytes, item create ${write.length} bytes\n`);
    const deployments = { cluster, url, gatewayNode: "api-" + new URL(url).port, baseline, token };
    reportLoads(await measureLoads(deployments, vaultIds, itemBody));
    await rekeyAcrossNodes(deployments, user);
  } finally {
    baseline?.constantNode.kill("SIGTERM");
    await baseline?.gateway.kill("SIGTERM");
    await cluster.stop();
  }
}

/** The baseline: gateway and constant in two processes, in a namespace of their own, over the product's NATS. */
async function startBaseline(jwtSecret: string, constantRead: string, write: string): Promise<Baseline> {
  const env = {
    LOG_LEVEL: "warn",
    TRANSPORTER: NATS_URL,
    NAMESPACE: `bench-${randomBytes(4).toString("hex")}`,
    JWT_SECRET: jwtSecret,
    BENCH_CONSTANT: constantRead,
    BENCH_CONSTANT_WRITE: write,
  };
  const [cmd, ...args] = [...PIN.server, process.execPath, BASELINE];
  const constantNode = spawn(cmd!, args, { env: { ...process.env, ...env, BENCH_ROLE: "constant" }, stdio: "ignore" });
  try {
    const gateway = await spawnServer({ ...env, BENCH_ROLE: "gateway" }, { script: BASELINE, prefix: PIN.server });
    return { gateway, constantNode };
  } catch (err) {
    constantNode.kill("SIGTERM");
    throw err;
  }
}

/** Waits until the baseline's gateway reaches its constant node. */
async function untilConstantAnswers(baseline: Baseline, token: string): Promise<void> {
  await eventually(
    "the baseline's constant node",
    async () => (await fetch(`${baseline.gateway.url}/bench/constant`, { headers: { authorization: `Bearer ${token}` } })).status === 200,
    { timeoutMs: 30_000 },
  );
}

/** `run`, and the CPU per request it cost each process of `pids` (where the time goes), warm-up included. */
async function measured<T extends { requests: number }>(pids: Record<string, number>, run: () => Promise<T>): Promise<T & { cpu: string }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const r = await run();
  const perRequest = Object.entries(pids).map(([k, pid]) => `${k} ${(((cpuMs(pid) - before[k]!) * 1000) / r.requests).toFixed(0)} µs`);
  return { ...r, cpu: perRequest.join(", ") };
}

/**
 * GET /vaults, item creates into one vault, and the same creates spread over the 5 vaults, each
 * against the baseline: baseline and product in turn (A, B, A, B, ...), medians, as one pair sits
 * inside the noise.
 */
async function measureLoads(d: Deployments, vaultIds: string[], itemBody: (itemId: string) => string): Promise<Loads> {
  const { cluster, url, gatewayNode, token } = d;
  const base = d.baseline.gateway.url;
  const basePids = () => ({ gateway: d.baseline.gateway.child.pid!, constant: d.baseline.constantNode.pid! });
  const newItem = { setupRequest: (req: { body?: string }) => ({ ...req, body: itemBody(randomUUID()) }) };
  const post = { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, requests: [newItem] };
  const cpu = { base: "", vaults: "", baseWrite: "", items: "" };
  const read = await alternate(
    async () => measured(basePids(), () => load(`${base}/bench/constant`, token)).then((r) => ((cpu.base = r.cpu), r)),
    async () =>
      measured({ gateway: cluster.pid(gatewayNode), vaults: cluster.pid("vaults") }, () => load(`${url}/vaults`, token)).then(
        (r) => ((cpu.vaults = r.cpu), r),
      ),
  );
  const writes = await alternate(
    async () => measured(basePids(), () => load(`${base}/bench/constant`, token, post)).then((r) => ((cpu.baseWrite = r.cpu), r)),
    async () =>
      measured({ gateway: cluster.pid(gatewayNode), items: cluster.pid("items") }, () =>
        load(`${url}/vaults/${vaultIds[1]}/items`, token, post),
      ).then((r) => ((cpu.items = r.cpu), r)),
  );
  // The same writes spread over the 5 vaults in turn: item writes to one vault take its row lock
  // in turn, until their commit; to different vaults they do not wait for each other.
  let turn = 0;
  const spreadItem = {
    setupRequest: (req: { path?: string; body?: string }) => ({
      ...req,
      path: `${new URL(url).pathname}/vaults/${vaultIds[turn++ % vaultIds.length]}/items`,
      body: itemBody(randomUUID()),
    }),
  };
  const spread = await alternate(
    () => load(`${base}/bench/constant`, token, post),
    () => load(`${url}/vaults/${vaultIds[1]}/items`, token, { ...post, requests: [spreadItem] }),
  );
  return { read, writes, spread, cpu };
}

/** The loads' table, the pairs' ratios, the CPU per request, the target, and their figures. */
function reportLoads({ read, writes, spread, cpu }: Loads): void {
  const row = (name: string, r: Side, ratio: number) =>
    console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${ratio.toFixed(2)} |`);
  console.log(`${PAIRS} pairs (baseline, product), medians\n`);
  console.log("| case | req/s | p50 ms | p99 ms | ÷ its baseline (median of the pairs) |");
  console.log("|---|---|---|---|---|");
  row("baseline: gateway + JWT, constant action in another process over NATS (GET)", read.a, 1);
  row("GET /vaults (5 vaults)", read.b, read.ratio);
  row("baseline: the same, POST with an item body", writes.a, 1);
  row("POST /vaults/:id/items", writes.b, writes.ratio);
  row("POST /vaults/:id/items, spread over the 5 vaults", spread.b, spread.ratio);
  console.log(
    `\npairs' ratios: GET ${read.ratios.map((x) => x.toFixed(2)).join(", ")}; POST ${writes.ratios.map((x) => x.toFixed(2)).join(", ")}; spread ${spread.ratios.map((x) => x.toFixed(2)).join(", ")}`,
  );
  console.log(`CPU per request (last pair, warm-up and run): baseline ${cpu.base}; GET /vaults ${cpu.vaults}`);
  console.log(`CPU per POST (last pair): baseline ${cpu.baseWrite}; POST /vaults/:id/items ${cpu.items}`);
  console.log(
    `\ntarget: GET /vaults >= 0.50 of the cross-process baseline -> ${read.ratio >= 0.5 ? "met" : "MISSED"} (${read.ratio.toFixed(2)})\n`,
  );
  loadFigures({ read, writes, spread, cpu });
}

/** The summary's figures of the loads, each beside its baseline. */
function loadFigures({ read, writes, spread }: Loads): void {
  const baseline = "a constant action over NATS, same gateway";
  figure({
    what: "split: GET /vaults, req/s (ratio: median of the pairs')",
    value: read.b.rps,
    floor: { name: baseline, value: read.a.rps },
    unit: "req/s",
    ratio: read.ratio,
    target: { text: ">= 0.50", met: read.ratio >= 0.5 },
  });
  figure({
    what: "split: POST /vaults/:id/items, req/s",
    value: writes.b.rps,
    floor: { name: `${baseline}, POST`, value: writes.a.rps },
    unit: "req/s",
    ratio: writes.ratio,
    target: { text: ">= 0.40", met: writes.ratio >= 0.4 },
  });
  figure({
    what: "split: POST /vaults/:id/items spread over 5 vaults, req/s",
    value: spread.b.rps,
    floor: { name: `${baseline}, POST`, value: spread.a.rps },
    unit: "req/s",
    ratio: spread.ratio,
  });
}

/** A rekey of REKEY_ITEMS items across nodes (the gateway streams the body to the rekey node): its time, then every process's peak RSS. */
async function rekeyAcrossNodes({ cluster, url, gatewayNode, token }: Deployments, user: VaultUser): Promise<void> {
  const vaultId = await newVault(url, user, "rekey");
  const ids = Array.from({ length: REKEY_ITEMS }, () => randomUUID());
  await fillVault(url, user, vaultId, ids);
  const body = rekeyBody(user, vaultId, ids, 1);
  const ms = await timedRekey(`${url}/vaults/${vaultId}/rekey`, token, body, "rekey");
  console.log(
    `rekey of ${REKEY_ITEMS} items (${(body.length / 1048576).toFixed(1)} MiB) across nodes: ${ms.toFixed(0)} ms; target <= 4000 ms -> ${ms <= 4000 ? "met" : "MISSED"}\n`,
  );
  console.log("| process | peak RSS MiB |");
  console.log("|---|---|");
  for (const node of [gatewayNode, "auth", "users", "orgs", "vaults", "members", "rekey", "items", "invites"]) {
    console.log(`| ${node} | ${peakRssMiB(cluster.pid(node)).toFixed(0)} |`);
  }
  console.log("");
}
