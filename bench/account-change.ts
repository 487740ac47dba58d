/**
 * What the account benchmarks share (bench/password.ts, bench/rotation.ts): a real server process
 * on SQLite or PostgreSQL, the one request of a change timed alone, the server's peak RSS above its
 * size before the change, and rounds alternated with a floor measured in the same run.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createTestDatabase } from "../test/helpers/postgres";
import { spawnServer } from "../test/helpers/process";
import { PIN } from "./common";

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const mb = (kb: number) => (kb / 1024).toFixed(1);

function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

export interface ChangeRun {
  url: string;
  /** A `fetch` that times the request whose path ends with `route`, alone. */
  timing: typeof fetch;
  /** Runs `change` and `floor` `rounds` times, alternated (the floor first in even rounds); medians of each. */
  rounds(
    rounds: number,
    change: (round: number) => Promise<void>,
    floor: (round: number) => Promise<void>,
  ): Promise<{ changeMs: number; floorMs: number; requestMs: number; peakMb: string }>;
}

/** `body` against a fresh server process on the store `env` names, stopped and its data removed after. */
export async function onServer(env: Record<string, string>, route: string, body: (run: ChangeRun) => Promise<void>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-account-"));
  const server = await spawnServer(
    { DATA_DIR: dataDir, REGISTRATION_MODE: "open", ...env },
    { script: path.join(__dirname, "../bin/server.js"), prefix: PIN.server },
  );
  const pid = server.child.pid!;
  let requestMs = 0;
  const timing: typeof fetch = async (input, init) => {
    if (!String(input).endsWith(route)) return fetch(input, init);
    const t0 = performance.now();
    const res = await fetch(input, init);
    await res.clone().arrayBuffer();
    requestMs = performance.now() - t0;
    return res;
  };
  try {
    await body({
      url: server.url,
      timing,
      async rounds(n, change, floor) {
        const changeMs: number[] = [];
        const floorMs: number[] = [];
        const serverMs: number[] = [];
        const peakKb: number[] = [];
        const timedFloor = async (round: number) => {
          const t0 = performance.now();
          await floor(round);
          floorMs.push(performance.now() - t0);
        };
        const timedChange = async (round: number) => {
          const before = statusKb(pid, "VmRSS");
          fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
          const t0 = performance.now();
          await change(round);
          changeMs.push(performance.now() - t0);
          serverMs.push(requestMs);
          peakKb.push(statusKb(pid, "VmHWM") - before);
        };
        for (let round = 0; round < n; round++) {
          if (round % 2 === 0) {
            await timedFloor(round);
            await timedChange(round);
          } else {
            await timedChange(round);
            await timedFloor(round);
          }
        }
        return { changeMs: median(changeMs), floorMs: median(floorMs), requestMs: median(serverMs), peakMb: mb(median(peakKb)) };
      },
    });
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `part` on SQLite, then on a fresh PostgreSQL database. */
export async function onBothStores(part: (label: string, env: Record<string, string>) => Promise<void>): Promise<void> {
  await part("SQLite", {});
  const database = await createTestDatabase();
  try {
    await part("PostgreSQL", { DATABASE_URL: database.url });
  } finally {
    await database.drop();
  }
}
