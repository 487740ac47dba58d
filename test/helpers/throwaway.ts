/**
 * Servers of the tests' own, for the fault tests: a PostgreSQL cluster, a Redis and a NATS with
 * JetStream, each on a free port with its data in a temporary folder, started from the machine's
 * installed binaries. A fault test stops and restarts these, never the machine's own servers, so
 * `npm test` disturbs nothing else on a developer's machine. Each `stop` keeps the data for the
 * next `start` (as a real outage would); `destroy` ends the server and removes its folder.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./ports";
import { sleep } from "./wait";

export interface Throwaway {
  /** How a client reaches it (nats://, redis://, postgres://.../postgres). */
  url: string;
  port: number;
  /** Stops it (the port closes); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
}

const live = new Set<ChildProcess>();
// A test process that dies must not leave its servers behind.
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

async function waitPort(port: number, open: boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await portOpen(port)) !== open) {
    if (Date.now() > deadline) throw new Error(`${what}: port ${port} did not ${open ? "open" : "close"}`);
    await sleep(50);
  }
}

/** A server started for the first time, as a Throwaway whose `destroy` removes its folder `dir`. */
async function started(url: string, port: number, dir: string, start: () => Promise<void>, stop: () => Promise<void>): Promise<Throwaway> {
  await start();
  return {
    url,
    port,
    start,
    stop,
    async destroy() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A server that runs in the foreground as a child of the test process. */
async function childServer(
  what: string,
  command: string,
  args: (port: number, dir: string) => string[],
  scheme: string,
): Promise<Throwaway> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vault-${what}-`));
  let child: ChildProcess | undefined;
  let log = "";
  const start = async () => {
    const c = spawn(command, args(port, dir), { stdio: ["ignore", "pipe", "pipe"] });
    child = c;
    live.add(c);
    c.stdout!.on("data", (d) => (log = (log + d).slice(-4000)));
    c.stderr!.on("data", (d) => (log = (log + d).slice(-4000)));
    c.once("exit", () => live.delete(c));
    await waitPort(port, true, `${what} (${log})`);
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGTERM");
      await exited;
    }
    await waitPort(port, false, what);
  };
  return started(`${scheme}://127.0.0.1:${port}`, port, dir, start, stop);
}

/** NATS with JetStream, its streams under a folder of its own. */
export function throwawayNats(): Promise<Throwaway> {
  return childServer("nats", "nats-server", (port, dir) => ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir], "nats");
}

/** Redis keeping nothing on disk, as the machine's does. */
export function throwawayRedis(): Promise<Throwaway> {
  return childServer(
    "redis",
    "redis-server",
    (port, dir) => ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    "redis",
  );
}

/** The machine's PostgreSQL binaries (Debian's layout, else the PATH). */
function pgBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => path.join(root, v, "bin", name)).find((f) => fs.existsSync(f));
  return found ?? name;
}

/**
 * A PostgreSQL cluster of its own (initdb, trust auth for `postgres`, no fsync: a test's data).
 * As root, it runs as the `postgres` user (PostgreSQL refuses root).
 */
export async function throwawayPostgres(): Promise<Throwaway> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-postgres-"));
  const asRoot = process.getuid?.() === 0;
  const run = (name: string, args: string[]) => {
    const [cmd, ...rest] = asRoot ? ["runuser", "-u", "postgres", "--", pgBin(name), ...args] : [pgBin(name), ...args];
    execFileSync(cmd!, rest, { stdio: "pipe", timeout: 60_000 });
  };
  if (asRoot) {
    const { uid, gid } = fs.statSync(pgHome());
    fs.chownSync(dir, uid, gid);
  }
  const data = path.join(dir, "data");
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions"]);
  const start = async () => {
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    run("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "start"]);
    await waitPort(port, true, "postgres");
  };
  const stop = async () => {
    if (fs.existsSync(path.join(data, "postmaster.pid"))) run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    await waitPort(port, false, "postgres");
  };
  return started(`postgres://postgres@127.0.0.1:${port}/postgres`, port, dir, start, stop);
}

/** The `postgres` user's home, to take its owner for the cluster's folder. */
function pgHome(): string {
  return ["/var/lib/postgresql", "/var/lib/pgsql"].find((d) => fs.existsSync(d)) ?? os.tmpdir();
}
