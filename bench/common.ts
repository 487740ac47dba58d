/** What both parts of the benchmark share: pinning, load generation, HTTP calls, peak RSS. */
import { performance } from "node:perf_hooks";
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import autocannon from "autocannon";
import { b64, encryptItem, newUserKeys, registrationBundle, signWrap, wrapShared } from "../test/helpers/crypto";

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
/** A/B comparisons run A, B, A, B, ... this many pairs: one pair sits inside the machine's noise. */
export const PAIRS = Math.max(3, Number(process.env.BENCH_PAIRS ?? 3));
export const REKEY_SIZES = (process.env.BENCH_REKEY_SIZES ?? "1000,10000").split(",").map(Number);
/** Rekeys of each size, floor and product in turn (bench/single.ts). */
export const REKEY_ROUNDS = Math.max(3, Number(process.env.BENCH_REKEY_ROUNDS ?? 3));

/**
 * With taskset and two or more cores, the servers run on core 0 and this load generator on core 1,
 * so the ratio compares server work rather than how the scheduler shares two cores.
 */
function pinning(): { server: string[]; label: string } {
  if (os.cpus().length < 2) return { server: [], label: "not pinned (one core)" };
  try {
    execFileSync("taskset", ["-cp", "1", String(process.pid)], { stdio: "ignore" });
    return { server: ["taskset", "-c", "0"], label: "servers pinned to core 0, load generator to core 1" };
  } catch {
    return { server: [], label: "not pinned (no taskset)" };
  }
}
export const PIN = pinning();

export { peakRssMiB } from "../test/helpers/heavy-bodies";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a benchmark reads whatever JSON it asked for
export async function call(method: string, url: string, token: string | undefined, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

export async function load(url: string, token: string, extra: Partial<Parameters<typeof autocannon>[0]> = {}) {
  const headers = { authorization: `Bearer ${token}` };
  const warm = await autocannon({ url, connections: CONNECTIONS, duration: 2, headers, ...extra });
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers, ...extra });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: warm.requests.total + r.requests.total };
}

export type LoadResult = Awaited<ReturnType<typeof load>>;

export const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** How long `run` takes, in ms. */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

/**
 * A and B loaded in turn, PAIRS times (A, B, A, B, ...). Each side's median req/s, p50 and p99,
 * the median of the pairs' ratios B/A, and every pair's ratio (the spread).
 */
export async function alternate(a: () => Promise<LoadResult>, b: () => Promise<LoadResult>) {
  const runs: Array<[LoadResult, LoadResult]> = [];
  for (let i = 0; i < PAIRS; i++) runs.push([await a(), await b()]);
  const side = (k: 0 | 1) => ({
    rps: median(runs.map((r) => r[k].rps)),
    p50: median(runs.map((r) => r[k].p50)),
    p99: median(runs.map((r) => r[k].p99)),
  });
  const ratios = runs.map(([x, y]) => y.rps / x.rps);
  return { a: side(0), b: side(1), ratio: median(ratios), ratios };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** A user of a fresh server (open registration) with one shared vault, and a new item's body for it. */
export async function writer(url: string): Promise<{ token: string; vaultId: string; itemBody(): string }> {
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
  await call("POST", `${url}/auth/register`, undefined, { email, ...bundle });
  const login = await call("POST", `${url}/auth/login`, undefined, { email, authHash: bundle.authHash });
  const vaultKey = randomBytes(32);
  const wrapped = wrapShared(vaultKey, bundle.publicKey);
  const vault = await call("POST", `${url}/vaults`, login.accessToken, {
    name: "writes",
    type: "shared",
    encryptedVaultKey: b64(wrapped),
    wrapSignature: b64(signWrap(wrapped, keys.edPrivate)),
  });
  return {
    token: login.accessToken,
    vaultId: vault.vaultId,
    itemBody: () => JSON.stringify(encryptItem(vaultKey, vault.vaultId, randomUUID(), "correct horse battery staple", "example.com")),
  };
}

/** Item creates under load: a new item per request. */
export async function itemCreates(url: string, w: { token: string; vaultId: string; itemBody(): string }) {
  return load(`${url}/vaults/${w.vaultId}/items`, w.token, {
    method: "POST",
    headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" },
    requests: [{ setupRequest: (req: { body?: string }) => ({ ...req, body: w.itemBody() }) }],
  });
}

/**
 * One line of the summary `npm run bench` ends with: a figure of the product beside its floor or
 * baseline, both measured in this run, and the issue's target for it where there is one.
 */
export interface Figure {
  what: string;
  value: number;
  /** What the value is compared with, measured in the same run. */
  floor: { name: string; value: number };
  unit: string;
  /** The ratio to show, where it is not value ÷ floor (the median of alternated pairs' ratios). */
  ratio?: number;
  target?: { text: string; met: boolean };
}

const figures: Figure[] = [];

/** Records a figure for the closing summary (each part also prints its own table). */
export function figure(f: Figure): void {
  figures.push(f);
}

/** The summary: one line per figure recorded in this run, in the order measured. */
export function summaryLines(): string[] {
  if (figures.length === 0) return [];
  const num = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  return [
    "## Summary: each figure beside its floor, measured in this run",
    "",
    "| figure | value | floor | ratio | target |",
    "|---|---|---|---|---|",
    ...figures.map(
      (f) =>
        `| ${f.what} | ${num(f.value)} ${f.unit} | ${num(f.floor.value)} ${f.unit} (${f.floor.name}) | ${(f.ratio ?? f.value / f.floor.value).toFixed(2)} | ${
          f.target ? `${f.target.text}: ${f.target.met ? "met" : "MISSED"}` : ""
        } |`,
    ),
    "",
  ];
}
