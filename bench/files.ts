/**
 * `BENCH_PARTS=files`: a 100 MiB file (BENCH_FILES_MIB) up and down through the SDK, sealed in
 * 1 MiB chunks, two PUTs in flight, read back a chunk at a time, opened and checked; on the embedded
 * server (dist/bin/server.js on a fresh DATA_DIR, started as `npm start` starts it) and on the split
 * deployment (its gateway streaming each chunk to the attachments node, on PostgreSQL). Each way's
 * MB/s (10^6 bytes of the file a second), and the peak RSS growth of the server's processes while
 * the file streams: RSS sampled every 100 ms and the kernel's high-water mark, reset just before
 * the upload, read after the download (test/helpers/attachment-load.ts).
 * The floor, measured just before each: as many requests of the same size to a bare node:http
 * server (bench/files-floor-server.ts, started with the product's node flags and environment):
 * pre-made JSON bodies of one sealed chunk each in base64, two in flight, the server parsing,
 * decoding and appending them to a file; then each GET back in turn, parsed and decoded with
 * Buffer. The figures are the product's MB/s over the floor's, and the product's RSS growth beside
 * the bare server's (what Node's garbage collector lets any process moving these bodies grow by).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { toBase64 } from "../protocol/encoding";
import { ATTACHMENT_CHUNK_BYTES, chunkCountOf, chunkPlainBytes, sealChunk } from "../protocol/formats/attachments";
import { NODE_FLAGS, START_ENV } from "../lib/ops/start-flags";
import { VaultClient } from "../sdk";
import { keystreamFile, RssWatch } from "../test/helpers/attachment-load";
import { startCluster } from "../test/helpers/cluster";
import { spawnServer } from "../test/helpers/process";
import { SDK_PASSWORD, TEST_KDF } from "../test/helpers/sdk";
import { figure, PIN, timed } from "./common";

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_FILES_MIB ?? 100) * MiB;
/** The built floor server, whether this runs built (npm run bench) or from the sources (a test, through ts-jest). */
const FLOOR = path.join(
  __dirname.split(path.sep).includes("dist") ? __dirname : path.resolve(__dirname, "../dist/bench"),
  "files-floor-server.js",
);
/** The bound the design sets on any process while a file streams through it. */
const MAX_GROWTH_MIB = 64;

interface Transfer {
  upMBs: number;
  downMBs: number;
  /** Peak RSS growth of each process measured, MiB. */
  growth: Record<string, number>;
}

const mbps = (ms: number) => SIZE / 1e6 / (ms / 1000);

/** The file up and down through a real SDK client of a new user at `url`, the processes of `pids` watched. */
async function throughSdk(url: string, pids: () => Record<string, number>): Promise<Transfer> {
  const client = new VaultClient({ baseUrl: url });
  const email = `bench-files-${randomUUID().slice(0, 8)}@example.test`;
  await client.register({ email, password: SDK_PASSWORD, orgName: "Files", kdf: TEST_KDF, rsaBits: 2048 });
  const { vaultId } = await client.vaults.create("Files", "shared");
  const { itemId } = await client.items.add(vaultId, { name: "Disk image", fields: { password: "hunter2" } });
  const file = keystreamFile(SIZE);
  const watch = new RssWatch(pids);
  watch.start();
  let item: Awaited<ReturnType<VaultClient["attachments"]["upload"]>> | undefined;
  const upMs = await timed(async () => (item = await client.attachments.upload(vaultId, itemId, "disk.img", file)));
  const hash = createHash("sha256");
  const downMs = await timed(() => client.attachments.download(vaultId, item!.attachments![0]!, (c) => void hash.update(c)));
  watch.stop();
  if (hash.digest("hex") !== file.sha256) throw new Error(`${url}: the file read back differs from the one sent`);
  return { upMBs: mbps(upMs), downMBs: mbps(downMs), growth: Object.fromEntries(watch.lives.map((l) => [l.name, watch.growth(l)])) };
}

/** The same number of same-size requests to the bare server: pre-made bodies, two PUTs in flight, then each GET in turn. */
export async function floorTransfer(): Promise<Transfer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-files-floor-"));
  // Started as the product is (lib/ops/start-flags.ts): the same heap and malloc settings.
  const server = await spawnServer(
    { ...START_ENV, FLOOR_FILE: path.join(dir, "chunks") },
    { script: FLOOR, prefix: PIN.server, nodeArgs: NODE_FLAGS },
  );
  try {
    const file = keystreamFile(SIZE);
    const key = randomBytes(32);
    const id = randomUUID();
    const count = chunkCountOf(SIZE);
    const bodies: string[] = [];
    for (let i = 0; i < count; i++) {
      const plain = await file.read(i * ATTACHMENT_CHUNK_BYTES, chunkPlainBytes(SIZE, i));
      bodies.push(JSON.stringify({ data: toBase64(await sealChunk(key, id, i, i === count - 1, plain)) }));
    }
    const url = (i: number) => `${server.url}/vaults/${id}/attachments/${id}/chunks/${i}`;
    const headers = { accept: "application/json", "content-type": "application/json" };
    const watch = new RssWatch(() => ({ floor: server.child.pid! }));
    watch.start();
    const todo = bodies.map((_, i) => i);
    const upMs = await timed(() =>
      Promise.all(
        [0, 1].map(async () => {
          for (let i = todo.shift(); i !== undefined; i = todo.shift()) {
            const res = await fetch(url(i), { method: "PUT", headers, body: bodies[i] });
            await res.text();
            if (res.status !== 204) throw new Error(`floor PUT ${i}: ${res.status}`);
          }
        }),
      ),
    );
    const hash = createHash("sha256");
    const downMs = await timed(async () => {
      for (let i = 0; i < count; i++) {
        const res = await fetch(url(i), { headers });
        hash.update(Buffer.from((JSON.parse(await res.text()) as { data: string }).data, "base64"));
      }
    });
    watch.stop();
    return { upMBs: mbps(upMs), downMBs: mbps(downMs), growth: { floor: watch.growth(watch.lives[0]!) } };
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function embedded(): Promise<Transfer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-files-"));
  const server = await spawnServer(
    { ...START_ENV, DATA_DIR: dataDir, LOG_LEVEL: "warn", REGISTRATION_MODE: "open" },
    { nodeArgs: NODE_FLAGS, prefix: PIN.server, timeoutMs: 30_000 },
  );
  try {
    return await throughSdk(server.url, () => ({ server: server.child.pid! }));
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function split(): Promise<Transfer> {
  const cluster = await startCluster({ REGISTRATION_MODE: "open", GATEWAYS: "1" }, { prefix: PIN.server });
  try {
    const names = [...new Set([...cluster.output().matchAll(/\[cluster\] (\S+) started, pid \d+/g)].map((m) => m[1]!))];
    return await throughSdk(cluster.urls[0]!, () => Object.fromEntries(names.map((n) => [n, cluster.pid(n)])));
  } finally {
    await cluster.stop();
  }
}

/** The part's table, and the summary's figures. */
function report(rows: Array<{ name: string; floor: Transfer; product: Transfer; watched: string[] }>): void {
  const mib = SIZE / MiB;
  console.log(`| ${mib} MiB through the SDK | upload MB/s | download MB/s | peak RSS growth MiB |`);
  console.log("|---|---|---|---|");
  for (const { name, floor, product, watched } of rows) {
    const up = product.upMBs / floor.upMBs;
    const down = product.downMBs / floor.downMBs;
    const others = Object.entries(product.growth).filter(([n]) => !watched.includes(n));
    const rest = others.length ? `; every other process at most +${Math.max(...others.map(([, g]) => g)).toFixed(1)}` : "";
    console.log(`| floor before ${name} | ${floor.upMBs.toFixed(1)} | ${floor.downMBs.toFixed(1)} | +${floor.growth.floor!.toFixed(1)} |`);
    console.log(
      `| ${name} | ${product.upMBs.toFixed(1)} (${up.toFixed(2)} of the floor) | ${product.downMBs.toFixed(1)} (${down.toFixed(2)}) | ${watched.map((n) => `${n} +${product.growth[n]!.toFixed(1)}`).join(", ")}${rest} |`,
    );
    for (const [way, value, base] of [
      ["upload", product.upMBs, floor.upMBs],
      ["download", product.downMBs, floor.downMBs],
    ] as const)
      figure({
        what: `files: ${way} ${mib} MiB through the SDK, ${name}`,
        value,
        floor: { name: `bare node:http, ${way === "upload" ? "PUT 2 in flight, appended to a file" : "GET in turn"}`, value: base },
        unit: "MB/s",
      });
    const growth = Math.max(...watched.map((n) => product.growth[n]!));
    figure({
      what: `files: peak RSS growth while streaming, ${name} (${watched.join(", ")})`,
      value: growth,
      floor: { name: "the bare server's", value: floor.growth.floor! },
      unit: "MiB",
      target: { text: `<= ${MAX_GROWTH_MIB} MiB`, met: growth <= MAX_GROWTH_MIB },
    });
  }
  const worst = Math.max(...rows.flatMap((r) => Object.values(r.product.growth)));
  console.log(
    `\ntarget: no process grows by more than ${MAX_GROWTH_MIB} MiB while streaming -> ${worst <= MAX_GROWTH_MIB ? "met" : "MISSED"} (at most +${worst.toFixed(1)} MiB)\n`,
  );
}

export async function filesBench(): Promise<void> {
  console.log(`## Files: ${SIZE / MiB} MiB up and down through the SDK, against a bare node:http server\n`);
  const rows = [];
  rows.push({ name: "embedded", floor: await floorTransfer(), product: await embedded(), watched: ["server"] });
  const floor = await floorTransfer();
  const product = await split();
  rows.push({
    name: "split",
    floor,
    product,
    watched: ["attachments", ...Object.keys(product.growth).filter((n) => n.startsWith("api-"))],
  });
  report(rows);
}
