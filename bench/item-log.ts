/**
 * `BENCH_PARTS=itemlog`: what the signed item log costs a user, through the real SDK
 * against the real server, alternating this build and the one in BENCH_BASE_DIST (a `dist/` of the
 * commit before the item log), each round on fresh servers:
 *
 * 1. Item create and item read (`items.add`, `items.get` on a vault the client has open), ms per call,
 *    the median of BENCH_ITEMLOG_OPS sequential calls, embedded (SQLite) and split (a process per
 *    service over NATS, PostgreSQL).
 * 2. Opening a vault of BENCH_ITEMLOG_ITEMS items (10,000) on a new device: login, then
 *    `items.list` (every item opened, and with the log: the log followed from its last checkpoint,
 *    each link's signature verified, the list checked against it). With the log, the vault has
 *    1,000 writes since its last checkpoint (the worst before the next one).
 * 3. The bytes the log adds per write: the stored link (canonical JSON with its signature).
 *
 * BENCH_ITEMLOG_SPLIT=0 leaves the split deployment out.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { startCluster } from "../test/helpers/cluster";
import { spawnServer, type ServerProcess } from "../test/helpers/process";
import { median, PIN } from "./common";

const ITEMS = Number(process.env.BENCH_ITEMLOG_ITEMS ?? 10_000);
const EDITS = Number(process.env.BENCH_ITEMLOG_EDITS ?? 1_000);
const OPS = Number(process.env.BENCH_ITEMLOG_OPS ?? 100);
const ROUNDS = Number(process.env.BENCH_ITEMLOG_ROUNDS ?? 2);
const OPENS = 3;
const PASSWORD = "correct horse battery staple";
const KDF = { algorithm: "pbkdf2-sha256", iterations: 600_000 };

interface Build {
  label: string;
  dist: string;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- each build's SDK is loaded from its own dist/ at run time */
const load = createRequire(__filename);
const sdkOf = (build: Build): any => load(path.join(build.dist, "sdk/index.js"));

const content = (i: number) => ({
  name: `login ${i}`,
  fields: {
    username: `user${i}@example.test`,
    password: randomBytes(12).toString("base64"),
    url: `https://site${i}.example.test`,
    notes: "x".repeat(120),
  },
});

async function timed<T = any>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

/**
 * The calls this bench makes, on either build's client: its namespaces (`client.vaults.create`),
 * or, in a build from before them (BENCH_BASE_DIST), its flat methods (`client.createVault`). The
 * bench also reaches two parts a caller never sees: the vault's key and, where the build has one,
 * the item log.
 */
function calls(client: any) {
  const flat = typeof client.createVault === "function";
  const parts = flat ? client : client.parts;
  return {
    http: client.http,
    createVault: (name: string, type: string) => (flat ? client.createVault(name, type) : client.vaults.create(name, type)),
    addItem: (vaultId: string, c: unknown) => (flat ? client.addItem(vaultId, c) : client.items.add(vaultId, c)),
    getItem: (vaultId: string, itemId: string) => (flat ? client.getItem(vaultId, itemId) : client.items.get(vaultId, itemId)),
    listItems: (vaultId: string) => (flat ? client.listItems(vaultId) : client.items.list(vaultId)),
    verifiedRoster: (vaultId: string) => (flat ? client.verifiedRoster(vaultId) : client.members.roster(vaultId)),
    verifyAuditLog: () => (flat ? client.verifyAuditLog() : client.audit.verify()),
    openCurrentVault: (vaultId: string) => parts.vaults.openCurrentVault(vaultId),
    logs: parts.items?.logs,
  };
}

async function register(sdk: any, url: string): Promise<{ client: ReturnType<typeof calls>; email: string }> {
  const email = `bench-${randomUUID().slice(0, 8)}@example.test`;
  const client = new sdk.VaultClient({ baseUrl: url });
  await client.register({ email, password: PASSWORD, orgName: "Bench", kdf: KDF, rsaBits: 2048 });
  return { client: calls(client), email };
}

/** Median ms of `items.add`, then of `items.get`, each OPS sequential calls on one vault (after 10 of each to warm up). */
async function createAndRead(sdk: any, url: string): Promise<{ create: number; read: number }> {
  const { client } = await register(sdk, url);
  const vault = await client.createVault("Ops", "shared");
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await client.addItem(vault.vaultId, content(i))).itemId);
  const creates: number[] = [];
  for (let i = 0; i < OPS; i++) {
    const [ms, item] = await timed<{ itemId: string }>(() => client.addItem(vault.vaultId, content(i)));
    creates.push(ms);
    ids.push(item.itemId);
  }
  for (let i = 0; i < 10; i++) await client.getItem(vault.vaultId, ids[i]);
  const reads: number[] = [];
  for (let i = 0; i < OPS; i++) reads.push((await timed(() => client.getItem(vault.vaultId, ids[i % ids.length])))[0]);
  return { create: median(creates), read: median(reads) };
}

/**
 * Item create with and without an audit head in its link, alternating call by call on two clients
 * of one server: one that never checked the audit log (its links carry no head) and one that did
 * (each link carries `auditSeq`/`auditHead`, which the server looks up in the audit log before the
 * write). Median ms of OPS calls each.
 */
async function createsWithAuditHead(sdk: any, url: string): Promise<{ plain: number; claimed: number }> {
  const plain = (await register(sdk, url)).client;
  const claimed = (await register(sdk, url)).client;
  const vaults = [(await plain.createVault("Plain", "shared")).vaultId, (await claimed.createVault("Claimed", "shared")).vaultId];
  const deadline = Date.now() + 20_000;
  while ((await claimed.verifyAuditLog()).seq === 0) {
    if (Date.now() > deadline) throw new Error("the audit log stays empty");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < OPS + 10; i++) {
    for (const which of i % 2 ? [0, 1] : [1, 0]) {
      const [ms] = await timed(() => [plain, claimed][which]!.addItem(vaults[which], content(i)));
      if (i >= 10) times[which]!.push(ms);
    }
  }
  return { plain: median(times[0]), claimed: median(times[1]) };
}

/**
 * A vault of ITEMS items, then EDITS edits, written at the protocol level for speed: one request
 * per write, sealed with the SDK's code; with the log, each with its signed link, and a checkpoint
 * (a listing) after the creates, so that EDITS links follow the last checkpoint.
 */
async function bigVault(build: Build, client: ReturnType<typeof calls>): Promise<{ vaultId: string; bytesPerLink?: number }> {
  const sdk = sdkOf(build);
  const vault = await client.createVault("Big", "shared");
  const vaultId: string = vault.vaultId;
  const key = await client.openCurrentVault(vaultId);
  const logs = client.logs;
  const post = (method: string, p: string, body: unknown) => client.http.request(method, p, { body });
  if (!logs) {
    const ids: string[] = [];
    for (let i = 0; i < ITEMS; i++) {
      const itemId = randomUUID();
      ids.push(itemId);
      await post("POST", `/vaults/${vaultId}/items`, { ...(await sdk.sealItem(key, vaultId, itemId, content(i))), keyVersion: 1 });
    }
    for (let i = 0; i < EDITS; i++) {
      const itemId = ids[i % ids.length]!;
      const sealed = await sdk.sealItem(key, vaultId, itemId, content(i));
      await post("PUT", `/vaults/${vaultId}/items/${itemId}`, {
        encryptedData: sealed.encryptedData,
        encryptedName: sealed.encryptedName,
        keyVersion: 1,
      });
    }
    return { vaultId };
  }
  const protocol = load(path.join(build.dist, "protocol/formats/item-log.js"));
  await client.listItems(vaultId); // starts the log
  const roster = await client.verifiedRoster(vaultId);
  let head = (await logs.follow(vaultId, roster)).head;
  const states = new Map<string, { revision: number; sha256: string }>();
  const write = async (method: string, itemId: string, i: number) => {
    const sealed = await sdk.sealItem(key, vaultId, itemId, content(i));
    const sha256 = await protocol.itemDigest(sealed);
    const before = states.get(itemId);
    const link = await logs.sign(
      head,
      before
        ? { op: "update", itemId, revision: before.revision + 1, sha256, prevSha256: before.sha256 }
        : { op: "create", itemId, revision: 1, sha256 },
      roster.state,
    );
    const p = method === "POST" ? `/vaults/${vaultId}/items` : `/vaults/${vaultId}/items/${itemId}`;
    const body = { encryptedData: sealed.encryptedData, encryptedName: sealed.encryptedName, keyVersion: 1, itemLink: link };
    await post(method, p, method === "POST" ? { ...body, itemId } : body);
    head = protocol.applyItemLink(head, link, await protocol.itemLinkHash(link));
    states.set(itemId, { revision: (before?.revision ?? 0) + 1, sha256 });
  };
  const ids = Array.from({ length: ITEMS }, () => randomUUID());
  for (const [i, id] of ids.entries()) await write("POST", id, i);
  logs.forget(vaultId);
  await client.listItems(vaultId); // past CHECKPOINT_EVERY links: signs a checkpoint
  head = (await logs.follow(vaultId, roster)).head;
  if (head.baseSeq !== head.seq) throw new Error(`no checkpoint after ${ITEMS} creates (base ${head.baseSeq}, head ${head.seq})`);
  for (let i = 0; i < EDITS; i++) await write("PUT", ids[i % ids.length]!, i);
  const page = await client.http.request("GET", `/vaults/${vaultId}/item-log`, { query: { from: head.baseSeq + 1 } });
  const bytesPerLink = page.links.reduce((sum: number, l: unknown) => sum + JSON.stringify(l).length, 0) / page.links.length;
  return { vaultId, bytesPerLink };
}

/** Opening the big vault on a new device: login (not timed), then `items.list`; the median of OPENS. */
async function opens(sdk: any, url: string, email: string, vaultId: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < OPENS; i++) {
    // A device that signs no checkpoint itself: every open reads the same EDITS links since the last one.
    const device = new sdk.VaultClient({ baseUrl: url, checkpointEvery: Infinity });
    await device.login(email, PASSWORD);
    const [ms, items] = await timed<unknown[]>(() => calls(device).listItems(vaultId));
    if (items.length !== ITEMS) throw new Error(`opened ${items.length} items, not ${ITEMS}`);
    times.push(ms);
  }
  return median(times);
}

async function embedded(build: Build): Promise<{ create: number; read: number; open: number; bytesPerLink?: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-bench-itemlog-"));
  let server: ServerProcess | undefined;
  try {
    server = await spawnServer(
      { DATA_DIR: dataDir, LOG_LEVEL: "warn", REGISTRATION_MODE: "open", JWT_SECRET: randomBytes(32).toString("base64") },
      { script: path.join(build.dist, "bin/server.js"), prefix: PIN.server, timeoutMs: 30_000 },
    );
    const sdk = sdkOf(build);
    const ops = await createAndRead(sdk, server.url);
    if (build.label === "after") {
      const heads = await createsWithAuditHead(sdk, server.url);
      console.error(
        `item create, embedded: ${heads.plain.toFixed(1)} ms without an audit head in its link, ${heads.claimed.toFixed(1)} ms with one`,
      );
      console.log(
        `item create (embedded, alternating): ${heads.plain.toFixed(1)} ms without an audit head in its link, ${heads.claimed.toFixed(1)} ms with one`,
      );
    }
    const { client, email } = await register(sdk, server.url);
    const big = await bigVault(build, client);
    return { ...ops, open: await opens(sdk, server.url, email, big.vaultId), bytesPerLink: big.bytesPerLink };
  } finally {
    await server?.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function split(build: Build): Promise<{ create: number; read: number }> {
  const cluster = await startCluster(
    { REGISTRATION_MODE: "open", GATEWAYS: "1", JWT_SECRET: randomBytes(32).toString("base64"), LOG_LEVEL: "warn" },
    { prefix: PIN.server, script: path.join(build.dist, "bin/cluster.js") },
  );
  try {
    return await createAndRead(sdkOf(build), cluster.urls[0]!);
  } finally {
    await cluster.stop();
  }
}

export async function itemLogCost(): Promise<void> {
  console.log("## The signed item log: item create, read and open through the SDK\n");
  const product: Build = { label: "after", dist: path.join(__dirname, "..") };
  const base = process.env.BENCH_BASE_DIST;
  const builds: Build[] = base ? [{ label: "before", dist: path.resolve(base) }, product] : [product];
  const rows: Array<{ build: string; round: number; where: string; create: number; read: number; open?: number; bytesPerLink?: number }> =
    [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const build of round % 2 ? builds : [...builds].reverse()) {
      const e = await embedded(build);
      rows.push({ build: build.label, round, where: "embedded", ...e });
      const s = process.env.BENCH_ITEMLOG_SPLIT === "0" ? undefined : await split(build);
      if (s) rows.push({ build: build.label, round, where: "split", ...s });
      console.error(`round ${round} ${build.label}: ${JSON.stringify(e)} split ${JSON.stringify(s)}`);
    }
  }
  console.log(`| build | round | deployment | create ms | read ms | open ${ITEMS} items ms | log bytes per write |`);
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows)
    console.log(
      `| ${r.build} | ${r.round} | ${r.where} | ${r.create.toFixed(1)} | ${r.read.toFixed(1)} | ${r.open?.toFixed(0) ?? ""} | ${r.bytesPerLink?.toFixed(0) ?? ""} |`,
    );
  const med = (build: string, where: string, k: "create" | "read" | "open") =>
    median(rows.filter((r) => r.build === build && r.where === where && r[k] !== undefined).map((r) => r[k]!));
  if (base) {
    const ratio = med("after", "embedded", "open") / med("before", "embedded", "open");
    console.log(`\nopening ${ITEMS} items, after ÷ before: ${ratio.toFixed(2)} (target < 2: ${ratio < 2 ? "met" : "MISSED"})`);
    for (const where of [...new Set(rows.map((r) => r.where))])
      console.log(
        `${where}: create ${med("before", where, "create").toFixed(1)} -> ${med("after", where, "create").toFixed(1)} ms, read ${med("before", where, "read").toFixed(1)} -> ${med("after", where, "read").toFixed(1)} ms`,
      );
  }
  console.log("");
}
