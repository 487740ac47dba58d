// A local split deployment (`npm run cluster`): one process per service and two gateways, restarted when they die.
// Design: docs/design/local-cluster.md
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { loadConfig, type Config } from "../lib/config";
import { loadOrCreateSecret } from "../lib/auth/secrets";
import { SERVICES } from "../services";
import { NODE_FLAGS, START_ENV } from "../lib/ops/start-flags";

const SERVER = path.join(__dirname, "server.js");
/** A node that dies again this soon after its start is waiting for something (a bad setting, a server away): */
const QUICK_DEATH_MS = 2_000;
/** it is started again after these delays, one more each time it dies that soon, then the last. */
const RESTART_BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000];
const STOP_TIMEOUT_MS = 15_000;

interface Node {
  name: string;
  env: Record<string, string>;
  child?: ChildProcess;
  /** When its current process was started. */
  startedAt?: number;
  /** How many times in a row its process died within QUICK_DEATH_MS of its start. */
  quickDeaths?: number;
}

/**
 * How long to wait before starting a node whose process just died: none after a crash (its routes
 * answer 503 until the new process serves), growing delays while it keeps dying at once.
 */
function restartDelay(node: Node, now: number): number {
  const quick = node.startedAt !== undefined && now - node.startedAt < QUICK_DEATH_MS;
  node.quickDeaths = quick ? (node.quickDeaths ?? 0) + 1 : 0;
  if (node.quickDeaths <= 1) return 0;
  return RESTART_BACKOFF_MS[Math.min(node.quickDeaths - 2, RESTART_BACKOFF_MS.length - 1)]!;
}

function log(message: string): void {
  process.stdout.write(`[cluster] ${message}\n`);
}

/** Creates the database named in `url` when it does not exist (the server's own `postgres` database is used to ask). */
async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return; // an unusual name: the operator creates it
  const adminUrl = new URL(url);
  adminUrl.pathname = "/postgres";
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE "${name}"`);
      log(`created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

/** Every node: one per service but the gateway, and GATEWAYS gateways on consecutive ports from PORT. */
function planNodes(config: Config, env: Record<string, string | undefined>, secret: string): Node[] {
  const gateways = Number(env.GATEWAYS ?? 2);
  const basePort = config.port || 3000;
  const shared = { ...env, JWT_SECRET: secret } as Record<string, string>;
  return [
    ...Object.keys(SERVICES)
      .filter((s) => s !== "api")
      .map((s) => ({ name: s, env: { ...shared, SERVICES: s } })),
    ...Array.from({ length: gateways }, (_, i) => ({
      name: `api-${basePort + i}`,
      env: { ...shared, SERVICES: "api", PORT: String(basePort + i) },
    })),
  ].map((node, i) => ({
    ...node,
    // Stable ids: a node restarted after a crash takes its place in the others' registries at once.
    env: {
      ...node.env,
      NODE_ID: `${os.hostname()}-${config.namespace}-${node.name}`,
      ...(config.opsPort !== undefined ? { OPS_PORT: String(config.opsPort + i) } : {}),
    },
  }));
}

/** Runs every node's process, restarts one that dies, and stops them all gracefully (in-flight requests finish). */
class Supervisor {
  stopping = false;

  constructor(private readonly nodes: Node[]) {}

  start(node: Node): void {
    const child = spawn(process.execPath, [...NODE_FLAGS, SERVER], { env: node.env, stdio: ["ignore", "pipe", "pipe"] });
    node.child = child;
    node.startedAt = Date.now();
    const prefix = (chunk: Buffer) =>
      chunk
        .toString()
        .split("\n")
        .filter(Boolean)
        .map((l) => `[${node.name}] ${l}\n`)
        .join("");
    child.stdout!.on("data", (d: Buffer) => process.stdout.write(prefix(d)));
    child.stderr!.on("data", (d: Buffer) => process.stderr.write(prefix(d)));
    log(`${node.name} started, pid ${child.pid}`);
    child.once("exit", (code, signal) => {
      if (this.stopping) return;
      const delay = restartDelay(node, Date.now());
      log(`${node.name} (pid ${child.pid}) exited (${signal ?? code}); restarting${delay ? ` in ${delay} ms` : ""}`);
      if (delay === 0) this.start(node);
      else setTimeout(() => !this.stopping && this.start(node), delay);
    });
  }

  async stop(signal: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    log(`${signal}: stopping ${this.nodes.length} nodes`);
    await Promise.all(this.nodes.map(stopNode));
    log("stopped");
    process.exit(0);
  }
}

/** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS; resolves when the node's process has exited. */
function stopNode(node: Node): Promise<void> {
  return new Promise<void>((resolve) => {
    const child = node.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Waits until every gateway says every service is reachable: true, or false when the cluster stops first. */
async function waitUntilReady(urls: string[], stopping: () => boolean): Promise<boolean> {
  for (;;) {
    const ok = await Promise.all(
      urls.map((u) =>
        fetch(`${u}/health`).then(
          (r) => r.status === 200,
          () => false,
        ),
      ),
    );
    if (ok.every(Boolean)) return true;
    if (stopping()) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  const env: Record<string, string | undefined> = {
    TRANSPORTER: "nats://127.0.0.1:4222",
    DATABASE_URL: "postgres://postgres@127.0.0.1:5432/vault",
    REDIS_URL: "redis://127.0.0.1:6379",
    // As `npm start` runs the server (lib/ops/start-flags.ts).
    ...START_ENV,
    ...process.env,
  };
  const config = loadConfig(env);
  const secret = loadOrCreateSecret(config.jwtSecret, config.dataDir).toString("base64");
  await ensureDatabase(config.databaseUrl!);

  const nodes = planNodes(config, env, secret);
  if (config.opsPort !== undefined) log(`ops ports: ${nodes.map((n) => `${n.name}=${n.env.OPS_PORT}`).join(" ")}`);
  const supervisor = new Supervisor(nodes);
  nodes.forEach((node) => supervisor.start(node));
  process.on("SIGINT", () => void supervisor.stop("SIGINT"));
  process.on("SIGTERM", () => void supervisor.stop("SIGTERM"));

  const urls = nodes.filter((n) => n.env.PORT).map((n) => `http://${config.host}:${n.env.PORT}/api/v1`);
  if (await waitUntilReady(urls, () => supervisor.stopping)) log(`ready: ${urls.join(" ")}`);
}

main().catch((err: Error) => {
  console.error(`Cluster failed to start: ${err.message}`);
  process.exit(1);
});
