/**
 * `BENCH_PARTS=start npm run bench` (issue 31): what starting the built server costs, beside a bare
 * `node:http` server started the same way in the same run, alternated: the time from spawning the
 * process to its first answer, and its resident memory (RSS) once idle and after 200 light requests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { median } from "./common";

const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 7);
/** The built server to start (BENCH_START_SERVER: another build, to compare). */
const SERVER = process.env.BENCH_START_SERVER ?? path.resolve(__dirname, "../bin/server.js");
const BARE = "require('node:http').createServer((q, s) => s.end('{\"status\":\"ok\"}')).listen(Number(process.env.PORT), '127.0.0.1')";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMiB(child: ChildProcess): number {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function untilAnswers(url: string): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(5);
  }
}

async function once(kind: "server" | "bare", port: number) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-start-"));
  const env = { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warn" };
  const t0 = performance.now();
  const child =
    kind === "server"
      ? spawn(process.execPath, [SERVER], { env, stdio: "ignore" })
      : spawn(process.execPath, ["-e", BARE], { env, stdio: "ignore" });
  const url = kind === "server" ? `http://127.0.0.1:${port}/api/v1/health` : `http://127.0.0.1:${port}/`;
  try {
    await untilAnswers(url);
    const startMs = performance.now() - t0;
    await sleep(1000);
    const idle = rssMiB(child);
    for (let i = 0; i < 200; i++) await (await fetch(url)).text();
    await sleep(500);
    return { startMs, idle, used: rssMiB(child) };
  } finally {
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function startCosts(): Promise<void> {
  console.log(`## Starting the built server (embedded default) beside a bare node:http server, alternated, medians of ${ROUNDS}`);
  const runs = { server: [] as Array<Awaited<ReturnType<typeof once>>>, bare: [] as Array<Awaited<ReturnType<typeof once>>> };
  for (let i = 0; i < ROUNDS; i++) {
    runs.bare.push(await once("bare", 39_000 + i));
    runs.server.push(await once("server", 39_100 + i));
  }
  const row = (what: string, pick: (r: Awaited<ReturnType<typeof once>>) => number, unit: string) => {
    const s = median(runs.server.map(pick));
    const b = median(runs.bare.map(pick));
    console.log(`${what}: ${s.toFixed(0)} ${unit}; bare server ${b.toFixed(0)} ${unit}; ratio ${(s / b).toFixed(2)}`);
  };
  row("spawn to first answer", (r) => r.startMs, "ms");
  row("RSS idle", (r) => r.idle, "MiB");
  row("RSS after 200 requests", (r) => r.used, "MiB");
  console.log("");
}
