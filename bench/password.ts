/**
 * `BENCH_PARTS=password npm run bench` (issue 28): a master password change for a user with
 * BENCH_PASSWORD_VAULTS personal vaults (200), through the SDK (the code vaultctl and the web vault
 * run) against a real server process, on SQLite and on PostgreSQL:
 * - the whole change: both derivations (current and new), every personal vault opened (its roster
 *   verified), its key wrapped again and its `rewrap` link signed, and the one request;
 * - the request alone (the server's transaction), and the server process's peak RSS above its
 *   resident size before the change (Linux: `clear_refs` resets the peak, `VmHWM` reads it);
 * against the floor no change can avoid, measured in the same run and alternated with it: the two
 * key derivations alone. Default KDF (Argon2id, 3 passes, 64 MiB, 4 lanes).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { DEFAULT_ARGON2ID, newKdfParams, VaultClient } from "../sdk";
import { deriveMasterKey } from "../sdk/primitives";
import { createTestDatabase } from "../test/helpers/postgres";
import { spawnServer } from "../test/helpers/process";
import { PIN } from "./common";

const VAULTS = Number(process.env.BENCH_PASSWORD_VAULTS ?? 200);
const ROUNDS = Number(process.env.BENCH_PASSWORD_ROUNDS ?? 3);
const PASSWORDS = ["correct horse battery staple", "purple monkey dishwasher 77"];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (kb: number) => (kb / 1024).toFixed(1);

function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

async function onStore(label: string, env: Record<string, string>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-password-"));
  const server = await spawnServer(
    { DATA_DIR: dataDir, REGISTRATION_MODE: "open", ...env },
    { script: path.join(__dirname, "../bin/server.js"), prefix: PIN.server },
  );
  const pid = server.child.pid!;
  try {
    let requestMs = 0;
    const timing: typeof fetch = async (input, init) => {
      if (!String(input).endsWith("/users/me/password")) return fetch(input, init);
      const t0 = performance.now();
      const res = await fetch(input, init);
      await res.clone().arrayBuffer();
      requestMs = performance.now() - t0;
      return res;
    };
    const client = new VaultClient({ baseUrl: server.url, fetch: timing });
    await client.register({ email: `bench-${Date.now()}@example.test`, password: PASSWORDS[0]!, orgName: "Bench" });
    for (let i = 0; i < VAULTS; i++) await client.createVault(`personal ${i}`, "personal");
    const floorMs: number[] = [];
    const changeMs: number[] = [];
    const serverMs: number[] = [];
    const peakKb: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const floor = async () => {
        const t0 = performance.now();
        await deriveMasterKey(PASSWORDS[round % 2]!, client.account.kdf);
        await deriveMasterKey(PASSWORDS[(round + 1) % 2]!, newKdfParams(DEFAULT_ARGON2ID));
        floorMs.push(performance.now() - t0);
      };
      const change = async () => {
        const before = statusKb(pid, "VmRSS");
        fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
        const t0 = performance.now();
        const result = await client.changePassword(PASSWORDS[round % 2]!, PASSWORDS[(round + 1) % 2]!);
        changeMs.push(performance.now() - t0);
        if (result.vaults !== VAULTS) throw new Error(`re-wrapped ${result.vaults} vaults, not ${VAULTS}`);
        serverMs.push(requestMs);
        peakKb.push(statusKb(pid, "VmHWM") - before);
      };
      // Alternated: the floor first in even rounds, the change first in odd ones.
      if (round % 2 === 0) {
        await floor();
        await change();
      } else {
        await change();
        await floor();
      }
    }
    const floor = median(floorMs);
    console.log(
      `${label}: the whole change for ${VAULTS} personal vaults, median of ${ROUNDS}: ${median(changeMs).toFixed(0)} ms ` +
        `(the two derivations alone: ${floor.toFixed(0)} ms; ratio ${(median(changeMs) / floor).toFixed(2)}); ` +
        `the request alone: ${median(serverMs).toFixed(0)} ms; server peak RSS above its size before: ${mb(median(peakKb))} MB`,
    );
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function passwordChange(): Promise<void> {
  console.log(`## Master password change through the SDK (${VAULTS} personal vaults, default KDF)`);
  await onStore("SQLite", {});
  const database = await createTestDatabase();
  try {
    await onStore("PostgreSQL", { DATABASE_URL: database.url });
  } finally {
    await database.drop();
  }
  console.log("");
}
