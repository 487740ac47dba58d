/** A built server (by default dist/bin/server.js) as a real OS process, for the tests and the benchmark. */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { freePort } from "./ports";
import { sleep } from "./wait";

const SERVER = path.resolve(__dirname, "../../dist/bin/server.js");

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
  timeoutMs?: number;
}

/** Starts a server on a free port and waits until GET /api/v1/health answers 200. */
export async function spawnServer(env: Record<string, string>, opts: SpawnOptions = {}): Promise<ServerProcess> {
  const { script = SERVER, prefix = [], timeoutMs = 15_000 } = opts;
  const port = env.PORT ?? String(await freePort());
  const [cmd, ...args] = [...prefix, process.execPath, ...(opts.nodeArgs ?? []), script, ...(opts.args ?? [])];
  const child = spawn(cmd!, args, { env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: port }, stdio: ["ignore", "pipe", "pipe"] });
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
