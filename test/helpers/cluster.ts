/**
 * The local split deployment (dist/bin/cluster.js) as the tests' subject: one process per service
 * and two gateways over the machine's NATS, on a throwaway PostgreSQL database and the machine's
 * Redis, in a namespace of its own so that runs never meet.
 */
import { SERVICES } from "../../services";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { deleteStreams, NATS_URL } from "./nats";
import { createTestDatabase, type TestDatabase } from "./postgres";
import { tempDir } from "./server";
import { freePorts } from "./ports";

// From test/helpers (jest) or from dist/test/helpers (the compiled benchmark).
const CLUSTER = [path.resolve(__dirname, "../../bin/cluster.js"), path.resolve(__dirname, "../../dist/bin/cluster.js")].find((f) =>
  fs.existsSync(f),
)!;
export { NATS_URL };
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface Cluster {
  /** The gateways' API roots. */
  urls: string[];
  namespace: string;
  database: TestDatabase;
  /** Each node's operations port ("vaults", "api-<port>", ...), when started with `ops: true`. */
  opsPorts: Record<string, number>;
  /** The current pid of a node ("rekey", "api-<port>", ...); it changes when the node is restarted. */
  pid(node: string): number;
  output(): string;
  /** Resolves when the cluster's output matches `re` (after `from`, an offset into the output). */
  waitFor(re: RegExp, timeoutMs?: number, from?: number): Promise<RegExpMatchArray>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

export function killAllClusters(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

/** Nodes of the local cluster: one per service but the gateway, and two gateways. */
const CLUSTER_NODES = Object.keys(SERVICES).length - 1 + 2;

export interface ClusterOptions {
  timeoutMs?: number;
  /** A command to run the cluster under, e.g. ["taskset", "-c", "0"] (its nodes inherit it). */
  prefix?: string[];
  /** Give every node an operations port (probes, metrics). */
  ops?: boolean;
  /** The cluster script (default: this build's dist/bin/cluster.js), e.g. an earlier build's for a benchmark. */
  script?: string;
  /** Servers other than the machine's (a fault test's throwaway ones, test/helpers/throwaway.ts). */
  servers?: { natsUrl?: string; redisUrl?: string; pgAdminUrl?: string };
}

export async function startCluster(env: Record<string, string> = {}, opts: ClusterOptions = {}): Promise<Cluster> {
  const { timeoutMs = 40_000, prefix = [], ops = false, script = CLUSTER, servers = {} } = opts;
  const natsUrl = servers.natsUrl ?? NATS_URL;
  const database = await createTestDatabase(servers.pgAdminUrl);
  const port = await freePorts(ops ? 2 + CLUSTER_NODES : 2);
  const namespace = `test-${randomBytes(4).toString("hex")}`;
  const dataDir = tempDir("vault-cluster-");
  const [cmd, ...args] = [...prefix, process.execPath, script];
  const child = spawn(cmd!, args, {
    env: {
      ...process.env,
      LOG_LEVEL: "warn",
      ...env,
      TRANSPORTER: natsUrl,
      DATABASE_URL: database.url,
      REDIS_URL: servers.redisUrl ?? REDIS_URL,
      NAMESPACE: namespace,
      PORT: String(port),
      DATA_DIR: dataDir,
      ...(ops ? { OPS_PORT: String(port + 2) } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let out = "";
  const pids = new Map<string, number>();
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const m of d.toString().matchAll(/\[cluster\] (\S+) started, pid (\d+)/g)) pids.set(m[1]!, Number(m[2]));
    for (const w of waiters) w();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running.delete(child);
      for (const w of waiters) w();
      resolve();
    }),
  );

  const waitFor = (re: RegExp, ms = 30_000, from = 0) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = out.slice(from).match(re);
        if (m) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(m);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`cluster exited before ${re}: ${out.slice(-4000)}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${re}: ${out.slice(-4000)}`));
      }, ms);
      waiters.add(check);
      check();
    });

  try {
    await waitFor(/\[cluster\] ready:/, timeoutMs);
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    await database.drop();
    await deleteStreams(namespace, natsUrl);
    throw err;
  }
  return {
    urls: [`http://127.0.0.1:${port}/api/v1`, `http://127.0.0.1:${port + 1}/api/v1`],
    namespace,
    database,
    opsPorts: Object.fromEntries(
      [...(out.match(/\[cluster\] ops ports: (.*)/)?.[1] ?? "").matchAll(/(\S+)=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]),
    ),
    pid: (node) => pids.get(node) ?? 0,
    output: () => out,
    waitFor,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      await database.drop();
      await deleteStreams(namespace, natsUrl).catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
