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
import { b64, encryptItem, newUserKeys, registrationBundle, signWrap, wrapShared } from "../test/helpers/crypto";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { alternate, call, figure, load, median, peakRssMiB, PIN, REKEY_ROUNDS, REKEY_SIZES } from "./common";
import { NODE_FLAGS, START_ENV } from "../lib/ops/start-flags";

/** A server script of dist/, on a free port, pinned. */
function start(script: string, env: Record<string, string>): Promise<ServerProcess> {
  return spawnServer(env, { script: path.join(__dirname, script), prefix: PIN.server });
}

export async function singleProcess(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-"));
  const env = {
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    REGISTRATION_MODE: "open",
    JWT_SECRET: randomBytes(32).toString("base64"), // one secret: a token of the product works on the baseline
  };
  // Another build's server starts as this one does (the same flags), or the two differ by more than their code.
  const product = await spawnServer(
    { ...START_ENV, ...env },
    {
      script: process.env.BENCH_SINGLE_SERVER ? path.resolve(process.env.BENCH_SINGLE_SERVER) : path.join(__dirname, "../bin/server.js"),
      prefix: PIN.server,
      nodeArgs: NODE_FLAGS,
    },
  );
  let baseline: ServerProcess | undefined;
  try {
    console.log("## Single process, embedded store (SQLite)\n");

    // A user with 5 shared vaults.
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
    await call("POST", `${product.url}/auth/register`, undefined, { email, ...bundle });
    const login = await call("POST", `${product.url}/auth/login`, undefined, { email, authHash: bundle.authHash });
    const token: string = login.accessToken;
    const vaultKey = randomBytes(32);
    const wrapped = wrapShared(vaultKey, bundle.publicKey);
    const vaultBody = { type: "shared", encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys.edPrivate)) };
    const vaultIds: string[] = [];
    for (let i = 0; i < 5; i++)
      vaultIds.push((await call("POST", `${product.url}/vaults`, token, { ...vaultBody, name: `vault ${i}` })).vaultId);

    // The baseline answers, as a constant, exactly what GET /vaults answers.
    const constant = JSON.stringify(await call("GET", `${product.url}/vaults`, token));
    const itemBody = () => JSON.stringify(encryptItem(vaultKey, vaultIds[0]!, randomUUID(), "correct horse battery staple", "example.com"));
    const write = JSON.stringify(await call("POST", `${product.url}/vaults/${vaultIds[0]}/items`, token, JSON.parse(itemBody())));
    baseline = await start("baseline-server.js", {
      ...env,
      DATA_DIR: path.join(dataDir, "baseline"),
      BENCH_CONSTANT: constant,
      BENCH_CONSTANT_WRITE: write,
    });
    console.log(`response: ${constant.length} bytes of JSON\n`);
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

    // Item writes, each a new item with its own id, against one committed row per request.
    const post = {
      method: "POST" as const,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      requests: [{ setupRequest: (req: { body?: string }) => ({ ...req, body: itemBody() }) }],
    };
    // Each run into a vault of its own: at thousands of writes a second, one vault would reach its
    // item limit (VAULT_MAX_ITEMS) within the runs.
    let runs = 0;
    const writes = await alternate(
      () => load(`${baseline!.url}/bench/commit`, token, post),
      async () => {
        const { vaultId } = await call("POST", `${product.url}/vaults`, token, { ...vaultBody, name: `writes ${runs++}` });
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

    console.log(`${REKEY_ROUNDS} rounds, floor and product in turn; medians (each round's in brackets)\n`);
    console.log("| rekey | items | body MiB | time ms | floor ms | ÷ floor | server peak RSS MiB |");
    console.log("|---|---|---|---|---|---|---|");
    for (const n of REKEY_SIZES) {
      const created = await call("POST", `${product.url}/vaults`, token, { ...vaultBody, name: `rekey ${n}` });
      const vaultId: string = created.vaultId;
      const ids = Array.from({ length: n }, () => randomUUID());
      const payload = () =>
        randomBytes(2048 - 28)
          .toString("hex")
          .slice(0, 2048 - 28); // ~2 KiB of ciphertext with IV and tag
      for (let i = 0; i < n; i += 50) {
        await Promise.all(
          ids
            .slice(i, i + 50)
            .map((id) =>
              call("POST", `${product.url}/vaults/${vaultId}/items`, token, encryptItem(vaultKey, vaultId, id, payload(), "site")),
            ),
        );
      }
      // A body for the rekey from key version `k` (each product rekey moves the vault one on).
      const bodyAt = (k: number) => {
        const newWrap = wrapShared(randomBytes(32), bundle.publicKey);
        return JSON.stringify({
          newKeys: [{ userId: login.userId, encryptedVaultKey: b64(newWrap), wrapSignature: b64(signWrap(newWrap, keys.edPrivate)) }],
          // Each at the revision it was read at, as the SDK sends it (the k-th rekey finds every item at revision k).
          items: ids.map((id) => ({ ...encryptItem(randomBytes(32), vaultId, id, payload(), "site"), revision: k })),
          keyVersion: k,
        });
      };
      const post = async (url: string, body: string) => {
        const t0 = performance.now();
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body,
        });
        const ms = performance.now() - t0;
        if (res.status !== 204) throw new Error(`rekey of ${n} (${url}): ${res.status} ${await res.text()}`);
        return ms;
      };
      // Floor and product in turn, REKEY_ROUNDS times each (F, P, F, P, ...): both warm up alike; medians.
      const floors: number[] = [];
      const times: number[] = [];
      let body = "";
      for (let k = 1; k <= REKEY_ROUNDS; k++) {
        body = bodyAt(k);
        floors.push(await post(`${baseline.url}/bench/rekey`, body));
        times.push(await post(`${product.url}/vaults/${vaultId}/rekey`, body));
      }
      const floor = median(floors);
      const ms = median(times);
      const rss = peakRssMiB(product.child.pid!);
      console.log(
        `| ${n === 10000 ? "target <= 1.2x its floor" : ""} | ${n} | ${(body.length / 1048576).toFixed(1)} | ${ms.toFixed(0)} (${times.map((t) => t.toFixed(0)).join(", ")}) | ${floor.toFixed(0)} (${floors.map((t) => t.toFixed(0)).join(", ")}) | ${(ms / floor).toFixed(2)} | ${rss.toFixed(0)} |`,
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
  } finally {
    await Promise.all([product.kill("SIGTERM"), baseline?.kill("SIGTERM")]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
