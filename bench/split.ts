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
import { b64, encryptItem, newUserKeys, registrationBundle, signWrap, wrapShared } from "../test/helpers/crypto";
import { NATS_URL, startCluster } from "../test/helpers/cluster";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { alternate, call, cpuMs, figure, load, PAIRS, peakRssMiB, PIN } from "./common";
import { eventually } from "../test/helpers/wait";

const BASELINE = path.join(__dirname, "baseline-server.js");
const REKEY_ITEMS = Number(process.env.BENCH_SPLIT_REKEY_ITEMS ?? 10_000);

export async function splitDeployment(): Promise<void> {
  console.log("## Split deployment: a process per service over NATS, PostgreSQL, Redis\n");
  const jwtSecret = randomBytes(32).toString("base64");
  const cluster = await startCluster(
    { REGISTRATION_MODE: "open", GATEWAYS: "1", JWT_SECRET: jwtSecret, LOG_LEVEL: "warn" },
    { prefix: PIN.server },
  );
  let constantNode: ChildProcess | undefined;
  let gateway: ServerProcess | undefined;
  try {
    const url = cluster.urls[0]!;
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
    await call("POST", `${url}/auth/register`, undefined, { email, ...bundle });
    const login = await call("POST", `${url}/auth/login`, undefined, { email, authHash: bundle.authHash });
    const token: string = login.accessToken;
    const vaultKey = randomBytes(32);
    const wrapped = wrapShared(vaultKey, bundle.publicKey);
    const vaultBody = { type: "shared", encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys.edPrivate)) };
    const vaults: string[] = [];
    for (let i = 0; i < 5; i++) vaults.push((await call("POST", `${url}/vaults`, token, { ...vaultBody, name: `vault ${i}` })).vaultId);
    const constantRead = JSON.stringify(await call("GET", `${url}/vaults`, token));
    const itemBody = (itemId: string) =>
      JSON.stringify(encryptItem(vaultKey, vaults[0]!, itemId, "correct horse battery staple", "example.com"));
    const write = JSON.stringify(await call("POST", `${url}/vaults/${vaults[0]}/items`, token, JSON.parse(itemBody(randomUUID()))));

    // The baseline: gateway and constant in two processes, in a namespace of their own.
    const env = {
      LOG_LEVEL: "warn",
      TRANSPORTER: NATS_URL,
      NAMESPACE: `bench-${randomBytes(4).toString("hex")}`,
      JWT_SECRET: jwtSecret,
      BENCH_CONSTANT: constantRead,
      BENCH_CONSTANT_WRITE: write,
    };
    const [cmd, ...args] = [...PIN.server, process.execPath, BASELINE];
    constantNode = spawn(cmd!, args, { env: { ...process.env, ...env, BENCH_ROLE: "constant" }, stdio: "ignore" });
    gateway = await spawnServer({ ...env, BENCH_ROLE: "gateway" }, { script: BASELINE, prefix: PIN.server });
    const base = gateway.url;
    await eventually(
      "the baseline's constant node",
      async () => (await fetch(`${base}/bench/constant`, { headers: { authorization: `Bearer ${token}` } })).status === 200,
      { timeoutMs: 30_000 },
    );

    console.log(`responses: GET ${constantRead.length} bytes, item create ${write.length} bytes\n`);
    const newItem = { setupRequest: (req: { body?: string }) => ({ ...req, body: itemBody(randomUUID()) }) };
    const post = { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, requests: [newItem] };
    // CPU per request of each process that serves a load: where the time goes.
    const gatewayNode = "api-" + new URL(url).port;
    const measured = async <T extends { requests: number }>(pids: Record<string, number>, run: () => Promise<T>) => {
      const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
      const r = await run();
      const perRequest = Object.entries(pids).map(([k, pid]) => `${k} ${(((cpuMs(pid) - before[k]!) * 1000) / r.requests).toFixed(0)} µs`);
      return { ...r, cpu: perRequest.join(", ") };
    };
    // Baseline and product in turn (A, B, A, B, ...), medians: one pair sits inside the noise.
    const cpu = { base: "", vaults: "", baseWrite: "", items: "" };
    const read = await alternate(
      async () =>
        measured({ gateway: gateway!.child.pid!, constant: constantNode!.pid! }, () => load(`${base}/bench/constant`, token)).then(
          (r) => ((cpu.base = r.cpu), r),
        ),
      async () =>
        measured({ gateway: cluster.pid(gatewayNode), vaults: cluster.pid("vaults") }, () => load(`${url}/vaults`, token)).then(
          (r) => ((cpu.vaults = r.cpu), r),
        ),
    );
    const writes = await alternate(
      async () =>
        measured({ gateway: gateway!.child.pid!, constant: constantNode!.pid! }, () => load(`${base}/bench/constant`, token, post)).then(
          (r) => ((cpu.baseWrite = r.cpu), r),
        ),
      async () =>
        measured({ gateway: cluster.pid(gatewayNode), items: cluster.pid("items") }, () =>
          load(`${url}/vaults/${vaults[1]}/items`, token, post),
        ).then((r) => ((cpu.items = r.cpu), r)),
    );
    // The same writes spread over the 5 vaults in turn: item writes to one vault take its row lock
    // in turn, until their commit; to different vaults they do not wait for each other.
    let turn = 0;
    const spreadItem = {
      setupRequest: (req: { path?: string; body?: string }) => ({
        ...req,
        path: `${new URL(url).pathname}/vaults/${vaults[turn++ % vaults.length]}/items`,
        body: itemBody(randomUUID()),
      }),
    };
    const spread = await alternate(
      () => load(`${base}/bench/constant`, token, post),
      () => load(`${url}/vaults/${vaults[1]}/items`, token, { ...post, requests: [spreadItem] }),
    );
    const row = (name: string, r: { rps: number; p50: number; p99: number }, ratio: number) =>
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

    // Rekey across nodes: the gateway streams the body to the rekey node.
    const vaultId: string = (await call("POST", `${url}/vaults`, token, { ...vaultBody, name: "rekey" })).vaultId;
    const ids = Array.from({ length: REKEY_ITEMS }, () => randomUUID());
    const payload = () =>
      randomBytes(2048 - 28)
        .toString("hex")
        .slice(0, 2048 - 28);
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(
        ids
          .slice(i, i + 50)
          .map((id) => call("POST", `${url}/vaults/${vaultId}/items`, token, encryptItem(vaultKey, vaultId, id, payload(), "site"))),
      );
    }
    const newWrap = wrapShared(randomBytes(32), bundle.publicKey);
    const body = JSON.stringify({
      newKeys: [{ userId: login.userId, encryptedVaultKey: b64(newWrap), wrapSignature: b64(signWrap(newWrap, keys.edPrivate)) }],
      // Each at the revision it was read at, as the SDK sends it.
      items: ids.map((id) => ({ ...encryptItem(randomBytes(32), vaultId, id, payload(), "site"), revision: 1 })),
      keyVersion: 1,
    });
    const t0 = performance.now();
    const res = await fetch(`${url}/vaults/${vaultId}/rekey`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body,
    });
    const ms = performance.now() - t0;
    if (res.status !== 204) throw new Error(`rekey: ${res.status} ${await res.text()}`);
    console.log(
      `rekey of ${REKEY_ITEMS} items (${(body.length / 1048576).toFixed(1)} MiB) across nodes: ${ms.toFixed(0)} ms; target <= 4000 ms -> ${ms <= 4000 ? "met" : "MISSED"}\n`,
    );
    console.log("| process | peak RSS MiB |");
    console.log("|---|---|");
    for (const node of [gatewayNode, "auth", "users", "orgs", "vaults", "members", "rekey", "items", "invites"]) {
      console.log(`| ${node} | ${peakRssMiB(cluster.pid(node)).toFixed(0)} |`);
    }
    console.log("");
  } finally {
    constantNode?.kill("SIGTERM");
    await gateway?.kill("SIGTERM");
    await cluster.stop();
  }
}
