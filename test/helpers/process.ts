/** A built server (by default dist/bin/server.js) as a real OS process, for the tests and the benchmark. */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { NODE_FLAGS, START_ENV } from "../../lib/ops/start-flags";
import { freePort } from "./ports";
import { tempDir } from "./temp";
import { sleep } from "./wait";

// From test/helpers (jest) or from dist/test/helpers (the compiled benchmark).
const ROOT = [path.resolve(__dirname, "../.."), path.resolve(__dirname, "../../..")].find((d) =>
  fs.existsSync(path.join(d, "package.json")),
)!;
const SERVER = path.join(ROOT, "dist/bin/server.js");

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Waits for the process to exit after a signal. */
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** For afterAll: a failed test must not leave a server behind (jest would wait for it forever). */
export function killAllServers(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

export interface SpawnOptions {
  /** The server script; the product's by default. */
  script?: string;
  /** Arguments after the script. */
  args?: string[];
  /** A command to run node under, e.g. ["taskset", "-c", "0"]. */
  prefix?: string[];
  /** Node's own flags, before the script. */
  nodeArgs?: readonly string[];
  /** The folder it runs in (the test's own by default). */
  cwd?: string;
  timeoutMs?: number;
}

/** Starts a server on a free port and waits until GET /api/v1/health answers 200. */
export async function spawnServer(env: Record<string, string>, opts: SpawnOptions = {}): Promise<ServerProcess> {
  const { script = SERVER, prefix = [], timeoutMs = 15_000 } = opts;
  const port = env.PORT ?? String(await freePort());
  const [cmd, ...args] = [...prefix, process.execPath, ...(opts.nodeArgs ?? []), script, ...(opts.args ?? [])];
  const child = spawn(cmd!, args, {
    cwd: opts.cwd,
    env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: port },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = `http://127.0.0.1:${port}/api/v1`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${out}`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`server did not start: ${out}`);
    }
    await sleep(50);
  }
  return {
    url,
    child,
    output: () => out,
    kill: (signal) =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/**
 * What the server pack is built from (build/bundle-server.mjs), besides the build's own steps: a
 * test of the shipped server says so when the build is older than any of them.
 */
const PACK_INPUTS = ["app", "bin", "lib", "mixins", "protocol", "services", "moleculer.config.ts", "build", "package-lock.json"];

/** The newest file or folder under `p` (by modification time), with that time. */
function newest(p: string): { file: string; mtimeMs: number } {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  if (!st) return { file: p, mtimeMs: 0 };
  let found = { file: p, mtimeMs: st.mtimeMs };
  if (st.isDirectory())
    for (const entry of fs.readdirSync(p)) {
      const inner = newest(path.join(p, entry));
      if (inner.mtimeMs > found.mtimeMs) found = inner;
    }
  return found;
}

let buildChecked = false;

/**
 * Throws when dist/ holds no whole build; warns (once a file) when a file the server pack is built
 * from changed after it: the tests then run the build that is there, which `npm test` makes just
 * before them, and a change not built yet is not what they test.
 */
export function checkBuild(): void {
  if (buildChecked) return;
  const stamp = fs.statSync(path.join(ROOT, "dist/.build-stamp"), { throwIfNoEntry: false });
  if (!stamp) throw new Error("No whole build in dist/: run `npm run build` (these tests start the server as shipped)");
  const changed = PACK_INPUTS.map((p) => newest(path.join(ROOT, p))).reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a));
  if (changed.mtimeMs > stamp.mtimeMs)
    console.warn(
      `dist/ was built before ${path.relative(ROOT, changed.file)} changed: these tests run that older build (npm run build makes a new one)`,
    );
  buildChecked = true;
}

export interface ShippedServer {
  url: string;
  dataDir: string;
  process: ServerProcess;
  /** SIGTERM, then the DATA_DIR removed (unless the caller gave it). */
  stop(): Promise<void>;
}

/** The server's own way to stop: SIGTERM; the DATA_DIR is removed unless `keep`. */
function shipped(server: ServerProcess, dataDir: string, keep: boolean): ShippedServer {
  return {
    url: server.url,
    dataDir,
    process: server,
    async stop() {
      await server.kill("SIGTERM");
      if (!keep) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The server as `npm start` runs it: dist/bin/server.js (the server pack, build/bundle-server.mjs)
 * with the start's node flags and environment (lib/ops/start-flags.ts), a process on a fresh
 * DATA_DIR and a free port. For the suites whose point is what the shipped server does at its edges.
 */
export async function startShippedServer(env: Record<string, string> = {}): Promise<ShippedServer> {
  checkBuild();
  const dataDir = env.DATA_DIR ?? tempDir();
  const server = await spawnServer({ ...START_ENV, LOG_LEVEL: "error", ...env, DATA_DIR: dataDir }, { nodeArgs: NODE_FLAGS, cwd: ROOT });
  return shipped(server, dataDir, env.DATA_DIR !== undefined);
}

/** The Dockerfile's last stage: its environment (ENV lines) and its CMD. */
export function dockerfileStart(): { env: Record<string, string>; cmd: string[] } {
  const stage = fs
    .readFileSync(path.join(ROOT, "Dockerfile"), "utf8")
    .split(/^FROM /m)
    .at(-1)!;
  const env: Record<string, string> = {};
  for (const [, line] of stage.matchAll(/^ENV (.+)$/gm))
    for (const pair of line!.trim().split(/\s+/)) {
      const at = pair.indexOf("=");
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  const cmd = /^CMD (\[.*\])$/m.exec(stage);
  if (!cmd) throw new Error("The Dockerfile's last stage has no CMD in its JSON form");
  return { env, cmd: JSON.parse(cmd[1]!) as string[] };
}

/**
 * The server as the Dockerfile starts it: its CMD (moleculer-runner with the compiled
 * dist/moleculer.config.js and dist/services, no pack) run from the project's folder (the image's
 * WORKDIR holds the same package.json and dist/, and node_modules without the development
 * packages), with its environment; only the ports (free ones), the address (127.0.0.1) and
 * DATA_DIR are the test's.
 */
export async function startAsDockerfile(env: Record<string, string> = {}): Promise<ShippedServer & { opsPort: number }> {
  checkBuild();
  const { env: imageEnv, cmd } = dockerfileStart();
  if (cmd[0] !== "node") throw new Error(`The Dockerfile's CMD runs ${cmd[0]}, not node`);
  const script = cmd.findIndex((a, i) => i > 0 && !a.startsWith("-"));
  const dataDir = env.DATA_DIR ?? tempDir();
  const opsPort = await freePort();
  const server = await spawnServer(
    {
      ...imageEnv,
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      OPS_PORT: String(opsPort),
      LOG_LEVEL: "error",
      ...env,
      DATA_DIR: dataDir,
    },
    { nodeArgs: cmd.slice(1, script), script: cmd[script], args: cmd.slice(script + 1), cwd: ROOT },
  );
  return { ...shipped(server, dataDir, env.DATA_DIR !== undefined), opsPort };
}
