/**
 * What metrics cost: the product on its embedded default, authenticated GET /vaults (a user with
 * 5 vaults), with metrics off (no OPS_PORT) and on (OPS_PORT, METRICS=on, scraped once a second
 * as Prometheus would), alternating off and on runs, medians. Target: on >= 0.95 of off.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "../test/helpers/crypto";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { freePort } from "../test/helpers/ports";
import { alternate, call, load, PAIRS, PIN } from "./common";

/** A server with a user owning 5 vaults: its URL and the user's token. */
async function serverWithVaults(env: Record<string, string>): Promise<{ server: ServerProcess; token: string }> {
  const server = await spawnServer(env, { script: path.join(__dirname, "../bin/server.js"), prefix: PIN.server });
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
  await call("POST", `${server.url}/auth/register`, undefined, { email, ...bundle });
  const { accessToken } = await call("POST", `${server.url}/auth/login`, undefined, { email, authHash: bundle.authHash });
  const wrapped = wrapShared(randomBytes(32), bundle.publicKey);
  for (let i = 0; i < 5; i++) {
    await call("POST", `${server.url}/vaults`, accessToken, {
      name: `vault ${i}`,
      type: "shared",
      encryptedVaultKey: b64(wrapped),
      wrapSignature: b64(signWrap(wrapped, keys.edPrivate)),
    });
  }
  return { server, token: accessToken };
}

export async function metricsCost(): Promise<void> {
  console.log("## Metrics: GET /vaults with metrics off and on (embedded store)\n");
  const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-")));
  const common = { LOG_LEVEL: "warn", REGISTRATION_MODE: "open" };
  const opsPort = await freePort();
  const off = await serverWithVaults({ ...common, DATA_DIR: dirs[0]! });
  const on = await serverWithVaults({ ...common, DATA_DIR: dirs[1]!, OPS_PORT: String(opsPort), METRICS: "on" });
  let scrapes = 0;
  let scraping = true;
  const scraper = (async () => {
    while (scraping) {
      const res = await fetch(`http://127.0.0.1:${opsPort}/metrics`).catch(() => undefined);
      if (res?.status === 200) scrapes++;
      await res?.text();
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  try {
    const r = await alternate(
      () => load(`${off.server.url}/vaults`, off.token),
      () => load(`${on.server.url}/vaults`, on.token),
    );
    console.log(`${PAIRS} pairs, off then on; medians. Scraped ${scrapes} times.\n`);
    console.log("| case | req/s | p50 ms | p99 ms | ÷ metrics off |");
    console.log("|---|---|---|---|---|");
    console.log(`| metrics off | ${r.a.rps.toFixed(0)} | ${r.a.p50} | ${r.a.p99} | 1.00 |`);
    console.log(`| metrics on, scraped every second | ${r.b.rps.toFixed(0)} | ${r.b.p50} | ${r.b.p99} | ${r.ratio.toFixed(3)} |`);
    console.log(`\npairs' ratios: ${r.ratios.map((x) => x.toFixed(3)).join(", ")}`);
    console.log(`target: metrics on >= 0.95 of off -> ${r.ratio >= 0.95 ? "met" : "MISSED"} (${r.ratio.toFixed(3)})\n`);
  } finally {
    scraping = false;
    await scraper;
    await Promise.all([off.server.kill("SIGTERM"), on.server.kill("SIGTERM")]);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}
