/**
 * The product on its embedded default (one process, SQLite) against a baseline in another process:
 *   1. authenticated GET /vaults (a user with 5 vaults) against the baseline
 *   2. POST /vaults/:id/items (50 connections) against the same gateway committing one row per
 *      request in a SQLite file set up as the store (the floor: an fsync per write), alternated
 *   3. rekey of 1,000 and 10,000 items of about 2 KiB: time and the server's peak RSS, beside the
 *      floor of a rekey (baseline-server's /bench/rekey: the same body read, parsed, its base64
 *      checked and a row per item written in one transaction), floor and product in turn
 *      BENCH_REKEY_ROUNDS times (at least 3), medians: both sides warm up alike
 *
 * BENCH_SINGLE_SERVER names another build's server script (an earlier build's dist/bin/server.js)
 * to measure it in the product's place.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encryptItem } from "../test/helpers/crypto";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { alternate, call, figure, load, median, peakRssMiB, PIN, REKEY_ROUNDS, REKEY_SIZES } from "./common";
import { NODE_FLAGS, START_ENV } from "../lib/ops/start-flags";
import { fillVault, newVault, rekeyBody, timedRekey, userWithVaults, type VaultUser } from "./vault-user";

/** Both servers, up, and the benchmark user's token (one secret: a token of the product works on the baseline). */
interface Servers {
  product: ServerProcess;
  baseline: ServerProcess;
  token: string;
}

/** A server script of dist/, on a free port, pinned. */
function start(script: string, env: Record<string, string>): Promise<ServerProcess> {
  return spawnServer(env, { script: path.join(__dirname, script), prefix: PIN.server });
}

/** The product's server (or BENCH_SINGLE_SERVER's) on `env`, on a free port, pinned. */
function startProduct(env: Record<string, string>): Promise<ServerProcess> {
  // Another build's server starts as this one does (the same flags), or the two differ by more than their code.
  return spawnServer(
    { ...START_ENV, ...env },
    {
      script: process.env.BENCH_SINGLE_SERVER ? path.resolve(process.env.BENCH_SINGLE_SERVER) : path.join(__dirname, "../bin/server.js"),
      prefix: PIN.server,
      nodeArgs: NODE_FLAGS,
    },
  );
}

export async function singleProcess(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-"));
  const env = {
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    REGISTRATION_MODE: "open",
    JWT_SECRET: randomBytes(32).toString("base64"), // one secret: a token of the product works on the baseline
  };
  const product = await startProduct(env);
  let baseline: ServerProcess | undefined;
  try {
    console.log("## Single process, embedded store (SQLite)\n");
    const user = await userWithVaults(product.url);
    const { token, vaultIds } = user;

    // The baseline answers, as a constant, exactly what GET /vaults answers.
    const constant = JSON.stringify(await call("GET", `${product.url}/vaults`, token));
    const itemBody = () =>
      JSON.stringify(encryptItem(user.vaultKey, vaultIds[0]!, randomUUID(), "correct horse battery staple", "example.com"));
    const write = JSON.stringify(await call("POST", `${product.url}/vaults/${vaultIds[0]}/items`, token, JSON.parse(itemBody())));
    baseline = await start("baseline-server.js", {
      ...env,
      DATA_DIR: path.join(dataDir, "baseline"),
      BENCH_CONSTANT: constant,
      BENCH_CONSTANT_WRITE: write,
    });
    console.log(`response: ${constant.length} bytes of JSON\n`);

    const servers = { product, baseline, token };
    await vaultReads(servers);
    await itemWrites(servers, user, itemBody);
    await rekeys(servers, user);
  } finally {
    await Promise.all([product.kill("SIGTERM"), baseline?.kill("SIGTERM")]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Authenticated GET /vaults (a user with 5 vaults) against the baseline's constant of the same response. */
async function vaultReads({ product, baseline, token }: Servers): Promise<void> {
  const base = await load(`${baseline.url}/bench/constant`, token);
  const vaults = await load(`${product.url}/vaults`, token);
  const ratio = vaults.rps / base.rps;
  console.log("| case | req/s | p50 ms | p99 ms | ÷ baseline |");
  console.log("|---|---|---|---|---|");
  console.log(`| baseline: gateway + JWT + constant action, same response | ${base.rps.toFixed(0)} | ${base.p50} | ${base.p99} | 1.00 |`);
  console.log(`| GET /vaults (5 vaults) | ${vaults.rps.toFixed(0)} | ${vaults.p50} | ${vaults.p99} | ${ratio.toFixed(2)} |`);
  console.log(
    `\ntarget: GET /vaults >= 0.50 of baseline -> ${ratio >= 0.5 ? "met" : "MISSED"}; p99 <= 15 ms -> ${vaults.p99 <= 15 ? "met" : "MISSED"}\n`,
  );
  figure({
    what: "embedded: GET /vaults, req/s",
    value: vaults.rps,
    floor: { name: "a constant action, same gateway", value: base.rps },
    unit: "req/s",
    target: { text: ">= 0.50", met: ratio >= 0.5 },
  });
}

/** Item writes, each a new item with its own id, against one committed row per request, alternated. */
async function itemWrites({ product, baseline, token }: Servers, user: VaultUser, itemBody: () => string): Promise<void> {
  const post = {
    method: "POST" as const,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    requests: [{ setupRequest: (req: { body?: string }) => ({ ...req, body: itemBody() }) }],
  };
  // Each run into a vault of its own: at thousands of writes a second, one vault would reach its
  // item limit (VAULT_MAX_ITEMS) within the runs.
  let runs = 0;
  const writes = await alternate(
    () => load(`${baseline.url}/bench/commit`, token, post),
    async () => {
      const vaultId = await newVault(product.url, user, `writes ${runs++}`);
      return load(`${product.url}/vaults/${vaultId}/items`, token, post);
    },
  );
  console.log("| case | req/s | p50 ms | p99 ms | ÷ floor (median of the pairs) |");
  console.log("|---|---|---|---|---|");
  console.log(
    `| floor: gateway + JWT + body parse, one row committed per request (SQLite, WAL, synchronous=FULL) | ${writes.a.rps.toFixed(0)} | ${writes.a.p50} | ${writes.a.p99} | 1.00 |`,
  );
  console.log(`| POST /vaults/:id/items | ${writes.b.rps.toFixed(0)} | ${writes.b.p50} | ${writes.b.p99} | ${writes.ratio.toFixed(2)} |`);
  console.log(`\npairs' ratios: ${writes.ratios.map((x) => x.toFixed(2)).join(", ")}\n`);
  figure({
    what: "embedded: POST /vaults/:id/items, req/s (ratio: median of the pairs')",
    value: writes.b.rps,
    floor: { name: "one SQLite row committed per request, same gateway", value: writes.a.rps },
    unit: "req/s",
    ratio: writes.ratio,
  });
}

/** A rekey of each of REKEY_SIZES items of about 2 KiB, each in a vault of its own, against its floor. */
async function rekeys(servers: Servers, user: VaultUser): Promise<void> {
  console.log(`${REKEY_ROUNDS} rounds, floor and product in turn; medians (each round's in brackets)\n`);
  console.log("| rekey | items | body MiB | time ms | floor ms | ÷ floor | server peak RSS MiB |");
  console.log("|---|---|---|---|---|---|---|");
  for (const n of REKEY_SIZES) {
    const vaultId = await newVault(servers.product.url, user, `rekey ${n}`);
    const ids = Array.from({ length: n }, () => randomUUID());
    await fillVault(servers.product.url, user, vaultId, ids);
    reportRekey(servers, n, await rekeyRounds(servers, user, vaultId, ids));
  }
}

/** Each round's times, floor's and product's, in ms, and the last body's size. */
interface RekeyRounds {
  floors: number[];
  times: number[];
  bodyMiB: number;
}

/** Floor and product in turn, REKEY_ROUNDS times each (F, P, F, P, ...): both warm up alike. */
async function rekeyRounds({ product, baseline, token }: Servers, user: VaultUser, vaultId: string, ids: string[]): Promise<RekeyRounds> {
  const floorUrl = `${baseline.url}/bench/rekey`;
  const productUrl = `${product.url}/vaults/${vaultId}/rekey`;
  const floors: number[] = [];
  const times: number[] = [];
  let body = "";
  for (let k = 1; k <= REKEY_ROUNDS; k++) {
    // The k-th rekey moves the vault from key version k.
    body = rekeyBody(user, vaultId, ids, k);
    floors.push(await timedRekey(floorUrl, token, body, `rekey of ${ids.length} (${floorUrl})`));
    times.push(await timedRekey(productUrl, token, body, `rekey of ${ids.length} (${productUrl})`));
  }
  return { floors, times, bodyMiB: body.length / 1048576 };
}

/** The rekey's row (medians, each round's in brackets, the product's peak RSS) and its figures. */
function reportRekey({ product, baseline }: Servers, n: number, { floors, times, bodyMiB }: RekeyRounds): void {
  const floor = median(floors);
  const ms = median(times);
  const rss = peakRssMiB(product.child.pid!);
  console.log(
    `| ${n === 10000 ? "target <= 1.2x its floor" : ""} | ${n} | ${bodyMiB.toFixed(1)} | ${ms.toFixed(0)} (${times.map((t) => t.toFixed(0)).join(", ")}) | ${floor.toFixed(0)} (${floors.map((t) => t.toFixed(0)).join(", ")}) | ${(ms / floor).toFixed(2)} | ${rss.toFixed(0)} |`,
  );
  figure({
    what: `embedded: rekey of ${n} items of 2 KiB, ms`,
    value: ms,
    floor: { name: "the body parsed, its base64 decoded, a row per item in one transaction", value: floor },
    unit: "ms",
    ...(n === 10000 && { target: { text: "<= 1.2x", met: ms <= 1.2 * floor } }),
  });
  if (n === 10000) {
    const floorRss = peakRssMiB(baseline.child.pid!);
    figure({
      what: "embedded: server peak RSS after the rekeys, MiB",
      value: rss,
      floor: { name: "the floor server's peak", value: floorRss },
      unit: "MiB",
      target: { text: "<= 1.3x", met: rss <= 1.3 * floorRss },
    });
  }
}
