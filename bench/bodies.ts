/**
 * `BENCH_PARTS=bodies`: what the worst rekey bodies cost the server at the default
 * limits, and the rekey figures against an earlier build, alternated.
 *
 * 1. Worst bodies, each on a fresh server (peak RSS is a high-water mark), sent from a child
 *    process while this one asks /health every 20 ms: the server's peak RSS and the slowest
 *    /health answer.
 *    - 64 MiB of `[{},{},...]` (22 million values);
 *    - 64 MiB shaped as a rekey at the values bound: 50,000 items, to a vault that does not exist
 *      (parsed and validated in full, then 404);
 *    - 64 MiB of strings of the longest length allowed;
 *    - four of the 50,000-item bodies at once, from four users of two organizations (every slot).
 * 2. Rekey of 1,000 and 10,000 items of 2 KiB: time and peak RSS, three rounds alternating the
 *    product and the build in BENCH_BASE_DIST (a `dist/` of an earlier commit), when it is set.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { b64, encryptItem, newUserKeys, registrationBundle, signWrap, wrapShared } from "../test/helpers/crypto";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { postFileFromChild, whileHealthWatched } from "../test/helpers/heavy-bodies";
import { call, peakRssMiB, PIN } from "./common";

const MiB = 1024 * 1024;

interface Account {
  token: string;
  userId: string;
  keys: Awaited<ReturnType<typeof newUserKeys>>;
  bundle: ReturnType<typeof registrationBundle>;
}

async function account(url: string, inviteToken?: string, email = `bench-${randomUUID().slice(0, 8)}@example.test`): Promise<Account> {
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  await call("POST", `${url}/auth/register`, undefined, { email, ...bundle, ...(inviteToken && { inviteToken }) });
  const login = await call("POST", `${url}/auth/login`, undefined, { email, authHash: bundle.authHash });
  return { token: login.accessToken, userId: login.userId, keys, bundle };
}

async function start(script: string, dataDir: string): Promise<ServerProcess> {
  return spawnServer(
    { DATA_DIR: dataDir, LOG_LEVEL: "warn", REGISTRATION_MODE: "open", JWT_SECRET: randomBytes(32).toString("base64") },
    { script, prefix: PIN.server, timeoutMs: 30_000 },
  );
}

/** Posts each file from its own child process, all at once; resolves with their statuses. */
async function sendAll(url: string, sends: Array<{ token: string; file: string }>): Promise<number[]> {
  const answers = await Promise.all(sends.map(({ token, file }) => postFileFromChild(`${url}/vaults/${randomUUID()}/rekey`, token, file)));
  return answers.map((a) => a.status);
}

/** Runs `send` while /health is asked every 20 ms; the slowest answer, ms. */
async function watchedHealth(url: string, send: () => Promise<unknown>): Promise<number> {
  return (await whileHealthWatched(url, send)).slowestHealthMs;
}

const fill = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i)).join(",");

/** The worst bodies, as files of about 64 MiB. */
function worstBodies(dir: string): Array<{ name: string; file: string }> {
  const write = (name: string, text: string) => {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, text);
    return { name, file };
  };
  const tiny = `[${"{},".repeat(Math.floor((64 * MiB - 2) / 3) - 1)}{}]`;
  // 50,000 items of about 1,340 bytes: the values bound (6 per item) and the body limit, both nearly reached.
  const data = "A".repeat(1_200);
  const items = fill(50_000, () => `{"itemId":"${randomUUID()}","encryptedData":"${data}","encryptedName":"AAAA","revision":1}`);
  const key = {
    userId: randomUUID(),
    encryptedVaultKey: randomBytes(512).toString("base64"),
    wrapSignature: randomBytes(64).toString("base64"),
  };
  const shaped = `{"newKeys":[${JSON.stringify(key)}],"items":[${items}]}`;
  const longest = "A".repeat(2 * 349_528 - 4);
  const strings = `{"pad":[${fill(Math.floor((64 * MiB) / (longest.length + 3)) - 1, () => `"${longest}"`)}]}`;
  return [
    write("64 MiB of [{},{},...]", tiny),
    write("50,000 items, the values bound", shaped),
    write("64 MiB of longest strings", strings),
  ];
}

async function worst(script: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-bodies-"));
  try {
    const bodies = worstBodies(dir);
    console.log("| worst rekey body (default limits) | body MiB | answer | slowest /health ms | server peak RSS MiB |");
    console.log("|---|---|---|---|---|");
    const idle = await start(script, path.join(dir, "idle"));
    const a = await account(idle.url);
    await call("GET", `${idle.url}/vaults`, a.token);
    console.log(`| none (a fresh server after a login) | 0 | | | ${peakRssMiB(idle.child.pid!).toFixed(0)} |`);
    await idle.kill("SIGTERM");
    for (const body of bodies) {
      const server = await start(script, path.join(dir, randomUUID()));
      const user = await account(server.url);
      let statuses: number[] = [];
      const slowest = await watchedHealth(server.url, async () => {
        statuses = await sendAll(server.url, [{ token: user.token, file: body.file }]);
      });
      const size = fs.statSync(body.file).size / MiB;
      console.log(
        `| ${body.name} | ${size.toFixed(1)} | ${statuses.join(" ")} | ${slowest.toFixed(0)} | ${peakRssMiB(server.child.pid!).toFixed(0)} |`,
      );
      await server.kill("SIGTERM");
    }
    // Four at once: two organizations of two users (each user's and organization's share).
    const server = await start(script, path.join(dir, "four"));
    const users: Account[] = [];
    for (let org = 0; org < 2; org++) {
      const owner = await account(server.url);
      users.push(owner);
      const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
      const inv = await call("POST", `${server.url}/invites`, owner.token, { email, role: "admin" });
      users.push(await account(server.url, inv.token, email));
    }
    let statuses: number[] = [];
    const shaped = bodies[1]!.file;
    const slowest = await watchedHealth(server.url, async () => {
      statuses = await sendAll(
        server.url,
        users.map((u) => ({ token: u.token, file: shaped })),
      );
    });
    console.log(
      `| four 50,000-item bodies at once (every slot) | 4 × 64 | ${statuses.join(" ")} | ${slowest.toFixed(0)} | ${peakRssMiB(server.child.pid!).toFixed(0)} |`,
    );
    await server.kill("SIGTERM");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One rekey of `n` items of about 2 KiB on a fresh server: ms and peak RSS MiB. */
async function rekeyOnce(script: string, n: number): Promise<{ ms: number; rss: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-rekey-"));
  const server = await start(script, dataDir);
  try {
    const a = await account(server.url);
    const vaultKey = randomBytes(32);
    const wrapped = wrapShared(vaultKey, a.bundle.publicKey);
    const created = await call("POST", `${server.url}/vaults`, a.token, {
      name: "rekey",
      type: "shared",
      encryptedVaultKey: b64(wrapped),
      wrapSignature: b64(signWrap(wrapped, a.keys.edPrivate)),
    });
    const vaultId: string = created.vaultId;
    const ids = Array.from({ length: n }, () => randomUUID());
    const payload = () => randomBytes(1010).toString("hex");
    for (let i = 0; i < n; i += 50)
      await Promise.all(
        ids
          .slice(i, i + 50)
          .map((id) =>
            call("POST", `${server.url}/vaults/${vaultId}/items`, a.token, encryptItem(vaultKey, vaultId, id, payload(), "site")),
          ),
      );
    const newKey = randomBytes(32);
    const newWrap = wrapShared(newKey, a.bundle.publicKey);
    const body = JSON.stringify({
      newKeys: [{ userId: a.userId, encryptedVaultKey: b64(newWrap), wrapSignature: b64(signWrap(newWrap, a.keys.edPrivate)) }],
      items: ids.map((id) => encryptItem(newKey, vaultId, id, payload(), "site")),
      keyVersion: 1,
    });
    const t0 = performance.now();
    const res = await fetch(`${server.url}/vaults/${vaultId}/rekey`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${a.token}` },
      body,
    });
    const ms = performance.now() - t0;
    if (res.status !== 204) throw new Error(`rekey of ${n}: ${res.status} ${await res.text()}`);
    return { ms, rss: peakRssMiB(server.child.pid!) };
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

async function rekeyFigures(product: string, base: string | undefined): Promise<void> {
  const builds = base ? [["earlier build", base] as const, ["this build", product] as const] : [["this build", product] as const];
  console.log("\n| rekey of 2 KiB items | build | time ms (median of 3; all) | server peak RSS MiB (median) |");
  console.log("|---|---|---|---|");
  for (const n of [1_000, 10_000]) {
    const runs = new Map<string, Array<{ ms: number; rss: number }>>();
    for (let round = 0; round < 3; round++)
      for (const [name, script] of round % 2 === 0 ? builds : [...builds].reverse()) {
        const r = await rekeyOnce(script, n);
        runs.set(name, [...(runs.get(name) ?? []), r]);
      }
    for (const [name, rs] of runs)
      console.log(
        `| ${n.toLocaleString("en")} | ${name} | ${median(rs.map((r) => r.ms)).toFixed(0)} (${rs.map((r) => r.ms.toFixed(0)).join(", ")}) | ${median(rs.map((r) => r.rss)).toFixed(0)} |`,
      );
  }
}

export async function rekeyBodies(): Promise<void> {
  const product = path.join(__dirname, "../bin/server.js");
  console.log("## Rekey bodies: the worst at the default limits, and rekeys against an earlier build\n");
  await worst(product);
  await rekeyFigures(product, process.env.BENCH_BASE_DIST ? path.resolve(process.env.BENCH_BASE_DIST, "bin/server.js") : undefined);
}
