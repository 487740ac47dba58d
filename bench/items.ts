/**
 * `BENCH_PARTS=items`: what a team moving in does, through the real SDK against the
 * embedded server in this process, each figure beside a floor measured in the same run,
 * alternating:
 *
 * 1. Search over BENCH_ITEMS_SEARCH items (10,000): building the index, and the median query
 *    (prefix and near spellings, every word), against a plain substring filter over the same
 *    fields (the floor: what searching costs with no index and no ranking).
 * 2. An import of BENCH_ITEMS_IMPORT items (5,000) through `items.import` (checked, sealed, one
 *    bulk request with its signed link, the server's checks and insert), against its floor: sealing
 *    the same items and sending them in one bulk request with no item log, no checks.
 * 3. Opening a vault of BENCH_ITEMS_OPEN items (2,000), each edited 3 times, on a new device, its
 *    revisions kept, against the same vault on a server that keeps none (ITEM_HISTORY=0: history is
 *    not read to open a vault, but it grows the store); and reading one item's history.
 * 4. Reads that scale with what changed: a vault of BENCH_ITEMS_SYNC items (10,000)
 *    read again after one item changed elsewhere, as a delta (`?since=`) against the whole list,
 *    over HTTP (time and bytes) and through the SDK (`items.list` on a device that read it before,
 *    against a device reading it the first time), alternating.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startNode } from "../app/node";
import { loadConfig } from "../lib/config";
import { sealItem, VaultClient, type ItemContent } from "../sdk";
import { ItemSearch } from "../sdk/search";
import type { Bytes } from "../protocol/encoding";
import { figure, median } from "./common";

const SEARCH = Number(process.env.BENCH_ITEMS_SEARCH ?? 10_000);
const IMPORT = Number(process.env.BENCH_ITEMS_IMPORT ?? 5_000);
const OPEN = Number(process.env.BENCH_ITEMS_OPEN ?? 2_000);
const SYNC = Number(process.env.BENCH_ITEMS_SYNC ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ITEMS_ROUNDS ?? 3);
const PASSWORD = "correct horse battery staple";
const KDF = { algorithm: "pbkdf2-sha256", iterations: 600_000 } as const;
const WORDS = ["github", "bank", "mail", "cloud", "shop", "travel", "work", "home", "news", "music", "photo", "code"];

const content = (i: number): ItemContent & { vaultId: string; itemId: string } => ({
  vaultId: "v",
  itemId: String(i),
  name: `${WORDS[i % WORDS.length]} account ${i}`,
  type: "login",
  fields: {
    username: `user${i}@example.test`,
    password: randomBytes(12).toString("base64"),
    notes: `note ${i} ${WORDS[(i * 7) % WORDS.length]}`,
  },
  urls: [{ url: `https://${WORDS[(i * 3) % WORDS.length]}${i}.example.test`, match: "domain" }],
});

async function timed<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0));

function search(): void {
  const items = Array.from({ length: SEARCH }, (_, i) => content(i));
  const queries = Array.from({ length: 200 }, (_, i) => [WORDS[i % WORDS.length]!.slice(0, 3 + (i % 3)), `user${i * 37}`][i % 2]!);
  const builds: number[] = [];
  const hits: number[] = [];
  const floor: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    const index = new ItemSearch(items);
    builds.push(performance.now() - t0);
    for (const q of queries) {
      const a = performance.now();
      index.search(q);
      hits.push(performance.now() - a);
      const b = performance.now();
      const needle = q.toLowerCase();
      items.filter((i) =>
        [i.name, i.fields.username ?? "", i.urls?.[0]?.url ?? "", i.fields.notes ?? ""].some((f) => f.toLowerCase().includes(needle)),
      );
      floor.push(performance.now() - b);
    }
  }
  console.log(
    `search over ${SEARCH} items: index built in ${fmt(median(builds))} ms; a query ${fmt(median(hits))} ms (median of ${hits.length}), ` +
      `a plain substring filter ${fmt(median(floor))} ms: ${(median(hits) / median(floor)).toFixed(2)}× the floor`,
  );
  figure({
    what: `items: a search query over ${SEARCH} items, ms`,
    value: median(hits),
    floor: { name: "a plain substring filter", value: median(floor) },
    unit: "ms",
  });
}

async function register(url: string): Promise<VaultClient> {
  const client = new VaultClient({ baseUrl: url });
  await client.register({
    email: `bench-${randomUUID().slice(0, 8)}@example.test`,
    password: PASSWORD,
    orgName: "Bench",
    kdf: KDF,
    rsaBits: 2048,
  });
  return client;
}

async function importing(url: string): Promise<void> {
  const client = await register(url);
  const items = Array.from({ length: IMPORT }, (_, i) => content(i));
  const sdk: number[] = [];
  const floor: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const vault = await client.vaults.create(`Import ${r}`, "shared");
    sdk.push((await timed(() => client.items.import(vault.vaultId, items)))[0]);
    // The floor: a vault without a roster (so without an item log), its key known, the same items sealed and sent in one request.
    const plain = await client.vaults.create(`Plain ${r}`, "personal");
    const key = await (
      client as unknown as { parts: { vaults: { openCurrentVault(id: string): Promise<Bytes> } } }
    ).parts.vaults.openCurrentVault(plain.vaultId);
    floor.push(
      (
        await timed(async () => {
          const sealed = [];
          for (const c of items) sealed.push(await sealItem(key, plain.vaultId, randomUUID(), c));
          const res = await fetch(`${url}/vaults/${plain.vaultId}/items/bulk`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${client.http.currentTokens!.accessToken}` },
            body: JSON.stringify({ items: sealed }),
          });
          if (res.status !== 201) throw new Error(`bulk: ${res.status} ${await res.text()}`);
        })
      )[0],
    );
  }
  console.log(
    `import of ${IMPORT} items: ${fmt(median(sdk))} ms through the SDK (checked, sealed, one bulk request with its signed link), ` +
      `${fmt(median(floor))} ms sealed and sent bare: ${(median(sdk) / median(floor)).toFixed(2)}× the floor`,
  );
  figure({
    what: `items: an import of ${IMPORT} items through the SDK, ms`,
    value: median(sdk),
    floor: { name: "sealed and sent in one bulk request", value: median(floor) },
    unit: "ms",
  });
}

/** A vault of OPEN items, each edited 3 times, on the server at `url`; a function that opens it on a new device (ms). */
async function editedVault(url: string): Promise<{ open(): Promise<number>; history(): Promise<number> }> {
  const owner = await register(url);
  const vault = await owner.vaults.create("Edited", "shared");
  await owner.items.import(
    vault.vaultId,
    Array.from({ length: OPEN }, (_, i) => content(i)),
  );
  const listed = await owner.items.list(vault.vaultId);
  for (let rev = 0; rev < 3; rev++)
    for (const item of listed)
      await owner.items.edit(vault.vaultId, item.itemId, { ...item, fields: { ...item.fields, password: `p${rev}` } });
  return {
    async open() {
      const device = new VaultClient({ baseUrl: url });
      await device.login(owner.account.email, PASSWORD);
      return (await timed(() => device.items.list(vault.vaultId)))[0];
    },
    history: async () => (await timed(() => owner.items.history(vault.vaultId, listed[0]!.itemId)))[0],
  };
}

/** The same vault, edited the same way, on a server that keeps 10 revisions per item and on one that keeps none. */
async function opening(withUrl: string, withoutUrl: string): Promise<void> {
  const kept = await editedVault(withUrl);
  const none = await editedVault(withoutUrl);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await kept.open());
    b.push(await none.open());
  }
  console.log(
    `opening a vault of ${OPEN} items, each edited 3 times, on a new device: ${fmt(median(a))} ms with their 3 revisions kept, ` +
      `${fmt(median(b))} ms on a server that keeps none (ITEM_HISTORY=0): ${(median(a) / median(b)).toFixed(2)}×; ` +
      `one item's history read and opened in ${fmt(await kept.history())} ms`,
  );
}

/** A vault of SYNC items; each round one item changes elsewhere, then the vault is read again: as a delta, and whole. */
async function rereading(url: string): Promise<void> {
  const owner = await register(url);
  const vault = await owner.vaults.create("Synced", "shared");
  for (let i = 0; i < SYNC; i += 5_000)
    await owner.items.import(
      vault.vaultId,
      Array.from({ length: Math.min(5_000, SYNC - i) }, (_, j) => content(i + j)),
    );
  const listed = await owner.items.list(vault.vaultId);
  const device = new VaultClient({ baseUrl: url });
  await device.login(owner.account.email, PASSWORD);
  await device.items.list(vault.vaultId);
  const token = () => ({ authorization: `Bearer ${device.http.currentTokens!.accessToken}` });
  const get = async (query: string) => {
    const res = await fetch(`${url}/vaults/${vault.vaultId}/items${query}`, { headers: token() });
    const body = await res.arrayBuffer();
    return { status: res.status, bytes: body.byteLength, body };
  };
  let cursor = ((await (await fetch(`${url}/vaults/${vault.vaultId}/items?since=0`, { headers: token() })).json()) as { cursor: number })
    .cursor;
  const http = { delta: [] as number[], full: [] as number[], deltaBytes: 0, fullBytes: 0 };
  const sdk = { delta: [] as number[], full: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const item = listed[r % listed.length]!;
    await owner.items.edit(vault.vaultId, item.itemId, { ...item, fields: { ...item.fields, password: `sync${r}` } });
    const [deltaMs, delta] = await timed(() => get(`?since=${cursor}`));
    const [fullMs, full] = await timed(() => get(""));
    if (delta.status !== 200 || full.status !== 200) throw new Error(`reads: ${delta.status} ${full.status}`);
    http.delta.push(deltaMs);
    http.full.push(fullMs);
    http.deltaBytes = delta.bytes;
    http.fullBytes = full.bytes;
    // The timed delta's own answer gives the next cursor.
    cursor = (JSON.parse(Buffer.from(delta.body).toString("utf8")) as { cursor: number }).cursor;
    sdk.delta.push((await timed(() => device.items.list(vault.vaultId)))[0]);
    const fresh = new VaultClient({ baseUrl: url });
    await fresh.login(owner.account.email, PASSWORD);
    sdk.full.push((await timed(() => fresh.items.list(vault.vaultId)))[0]);
  }
  console.log(
    `re-reading a vault of ${SYNC} items after one change: over HTTP ${fmt(median(http.delta))} ms and ${http.deltaBytes} bytes as a delta, ` +
      `${fmt(median(http.full))} ms and ${(http.fullBytes / 1e6).toFixed(1)} MB whole (${(median(http.delta) / median(http.full)).toFixed(3)}× the time); ` +
      `through the SDK (the signed item log checked, every item opened) ${fmt(median(sdk.delta))} ms on a device that read it before, ` +
      `${fmt(median(sdk.full))} ms on one reading it the first time (${(median(sdk.delta) / median(sdk.full)).toFixed(2)}×)`,
  );
  figure({
    what: `items: re-reading ${SYNC} items after one change, HTTP delta, ms`,
    value: median(http.delta),
    floor: { name: "the whole list over HTTP", value: median(http.full) },
    unit: "ms",
  });
  figure({
    what: `items: re-reading ${SYNC} items after one change, SDK items.list, ms`,
    value: median(sdk.delta),
    floor: { name: "a first read on a new device", value: median(sdk.full) },
    unit: "ms",
  });
}

export async function itemsBench(): Promise<void> {
  console.log("## Items: search, import, history");
  search();
  const dirs = [fs.mkdtempSync(path.join(os.tmpdir(), "bench-items-")), fs.mkdtempSync(path.join(os.tmpdir(), "bench-items-"))];
  const node = await startNode(loadConfig({ PORT: "0", LOG_LEVEL: "warn", DATA_DIR: dirs[0], REGISTRATION_MODE: "open" }));
  const bare = await startNode(
    loadConfig({ PORT: "0", LOG_LEVEL: "warn", DATA_DIR: dirs[1], REGISTRATION_MODE: "open", ITEM_HISTORY: "0" }),
  );
  try {
    const url = `http://127.0.0.1:${node.port}/api/v1`;
    // Opening first, on two fresh stores alike but for ITEM_HISTORY; then the import.
    await opening(url, `http://127.0.0.1:${bare.port}/api/v1`);
    await importing(url);
    await rereading(url);
  } finally {
    await node.stop();
    await bare.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  console.log();
}
