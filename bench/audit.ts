/**
 * Audit overhead: authenticated item creates with the audit worker attached and without it, in
 * the same run; target: at most 10 % slower with it.
 *   - single process (embedded store, in-process queue): two servers, one without the
 *     `audit-worker` service, each on a fresh DATA_DIR;
 *   - split deployment (JetStream, PostgreSQL): one cluster; "without" is the same cluster with
 *     its audit-worker process stopped (SIGSTOP), events piling up in the stream. Each "with" run
 *     starts once the worker has caught up (nothing pending), so neither run pays for the other.
 * In both, "without" still publishes every event: what is measured is the worker's cost.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { SERVICES } from "../services";
import { startCluster } from "../test/helpers/cluster";
import { withNats } from "../test/helpers/nats";
import { spawnServer } from "../test/helpers/process";
import { execFileSync } from "node:child_process";
import { cpuMs, itemCreates, PIN, writer } from "./common";

/** CPU ms used so far by every process of a program (PostgreSQL's backends, NATS), 0 if none. */
function programCpuMs(name: string): number {
  let pids: number[] = [];
  try {
    pids = execFileSync("pgrep", ["-x", name], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return 0;
  }
  return pids.reduce((sum, pid) => {
    try {
      return sum + cpuMs(pid);
    } catch {
      return sum; // ended meanwhile
    }
  }, 0);
}

type Result = Awaited<ReturnType<typeof itemCreates>>;

function report(title: string, without: Result, withWorker: Result, note = ""): void {
  const slower = 1 - withWorker.rps / without.rps;
  console.log(`| ${title}: without the audit worker | ${without.rps.toFixed(0)} | ${without.p50} | ${without.p99} | 1.00 |`);
  console.log(
    `| ${title}: with the audit worker | ${withWorker.rps.toFixed(0)} | ${withWorker.p50} | ${withWorker.p99} | ${(withWorker.rps / without.rps).toFixed(2)} |`,
  );
  console.log(
    `\n${title}: ${(slower * 100).toFixed(1)} % slower with the worker; target <= 10 % -> ${slower <= 0.1 ? "met" : "MISSED"}${note}\n`,
  );
}

async function single(): Promise<void> {
  const run = async (services: string[] | undefined) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-audit-"));
    const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: "warn", REGISTRATION_MODE: "open" };
    if (services) env.SERVICES = services.join(",");
    const server = await spawnServer(env, { script: path.join(__dirname, "../bin/server.js"), prefix: PIN.server });
    try {
      return await itemCreates(server.url, await writer(server.url));
    } finally {
      await server.kill("SIGTERM");
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  };
  const without = await run(Object.keys(SERVICES).filter((s) => s !== "audit-worker"));
  const withWorker = await run(undefined);
  report("single process", without, withWorker);
}

async function split(): Promise<void> {
  const cluster = await startCluster(
    { REGISTRATION_MODE: "open", GATEWAYS: "1", JWT_SECRET: randomBytes(32).toString("base64"), LOG_LEVEL: "warn" },
    { prefix: PIN.server },
  );
  try {
    const url = cluster.urls[0]!;
    const w = await writer(url);
    const pending = () =>
      withNats(async (nc) => {
        const info = await (await nc.jetstreamManager()).consumers.info(`${cluster.namespace}-events`, "audit");
        return info.num_pending + info.num_ack_pending;
      });
    const caughtUp = async () => {
      const t0 = performance.now();
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));
      return performance.now() - t0;
    };
    const worker = cluster.pid("audit-worker");
    // CPU per request of what the worker adds work to: itself, PostgreSQL, NATS (JetStream).
    const measured = async (run: () => Promise<Result>) => {
      const programs = {
        worker: () => cpuMs(worker),
        postgres: () => programCpuMs("postgres"),
        "nats-server": () => programCpuMs("nats-server"),
      };
      const before = Object.fromEntries(Object.entries(programs).map(([k, f]) => [k, f()]));
      const r = await run();
      return {
        ...r,
        cpu: Object.entries(programs)
          .map(([k, f]) => `${k} ${(((f() - before[k]!) * 1000) / r.requests).toFixed(0)} µs`)
          .join(", "),
      };
    };
    await caughtUp();
    const withWorker = await measured(() => itemCreates(url, w));
    const lag = await caughtUp();
    process.kill(worker, "SIGSTOP");
    let without: Result & { cpu: string };
    try {
      without = await measured(() => itemCreates(url, w));
    } finally {
      process.kill(worker, "SIGCONT");
    }
    const backlog = await pending();
    const drain = await caughtUp();
    report(
      "split deployment",
      without,
      withWorker,
      `\n(with the worker, it was ${lag.toFixed(0)} ms behind at the end; the ${backlog} events held while it was stopped took it ${drain.toFixed(0)} ms to record)` +
        `\nCPU per request with the worker: ${withWorker.cpu}; without: ${without.cpu}`,
    );
  } finally {
    await cluster.stop();
  }
}

export async function auditOverhead(): Promise<void> {
  console.log("## Audit overhead: item creates with and without the audit worker\n");
  console.log("| case | req/s | p50 ms | p99 ms | ÷ without |");
  console.log("|---|---|---|---|---|");
  await single();
  await split();
}
