/**
 * A 100 MiB file through the split deployment while its nodes die under it: a real SDK client
 * uploads it through a gateway; a third of the way in the attachments node is SIGKILLed, two
 * thirds of the way in the gateway the client talks to; the supervisor starts each again, the
 * upload goes on by itself (the chunks in flight sent again while the server is away, none stored
 * before sent again) and the file reads back with the same SHA-256. Meanwhile no process
 * of the deployment grows by more than 64 MiB: chunks stream through, each held in a bounded slot,
 * and the chunks' garbage is collected as it goes (lib/limits/collect-pacer.ts), where a bare
 * node:http server moving the same bodies grows by about 80 MiB (BENCHMARKS.md, "files").
 */
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import { VaultClient } from "../../sdk";
import { killAllClusters, startCluster, type Cluster } from "../helpers/cluster";
import { countingFetch, keystreamFile, rssTable, RssWatch, type ChunkPut } from "../helpers/attachment-load";
import { TEST_KDF, SDK_PASSWORD } from "../helpers/sdk";
import { eventually } from "../helpers/wait";

jest.setTimeout(300_000);

const MiB = 1024 * 1024;
const SIZE = 100 * MiB;
const CHUNKS = SIZE / MiB;
/** The target: no process grows by more while the file streams through it. */
const MAX_GROWTH_MIB = 64;
/** The chunks sent when each node is killed: a third and two thirds of the way. */
const KILL_ATTACHMENTS_AT = Math.ceil(CHUNKS / 3);
const KILL_GATEWAY_AT = Math.ceil((2 * CHUNKS) / 3);
/**
 * PUTs past one per chunk: those refused while a node was away (each request waits its turn of
 * the SDK's back-off, from 100 ms to the server's Retry-After of 1 s), over two outages of a few
 * seconds each. Starting over after a kill would send a third of the chunks again.
 */
const RETRIES_ALLOWED = 24;
/** Chunks in flight at once (the SDK's), each maybe stored just before its answer was lost. */
const IN_FLIGHT = 2;

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ REGISTRATION_MODE: "open" });
});
afterAll(async () => {
  await cluster?.stop();
  killAllClusters();
});

/** Every process of the deployment by name: each node, and the supervisor that restarts them. */
function deploymentPids(): () => Record<string, number> {
  const names = [...new Set([...cluster.output().matchAll(/\[cluster\] (\S+) started, pid \d+/g)].map((m) => m[1]!))];
  const ppid = /PPid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${cluster.pid(names[0]!)}/status`, "utf8"))![1];
  return () => ({ supervisor: Number(ppid), ...Object.fromEntries(names.map((n) => [n, cluster.pid(n)])) });
}

/**
 * SIGKILLs a node's process and waits until the supervisor's new one has stored a chunk (a PUT
 * begun after it started and answered 204): from then its memory is measured.
 */
async function killAndServeAgain(node: string, puts: ChunkPut[], watch: RssWatch, ended: () => boolean): Promise<number> {
  const from = cluster.output().length;
  const killedAt = Date.now();
  process.kill(cluster.pid(node), "SIGKILL");
  await cluster.waitFor(new RegExp(`\\[cluster\\] ${node} started, pid \\d+`), 15_000, from);
  const startedAt = Date.now();
  // (Or the upload ended without it: the test has failed already, and must not wait on.)
  await eventually(`a chunk stored by the new ${node}`, () => ended() || puts.some((p) => p.started > startedAt && p.status === 204), {
    timeoutMs: 30_000,
    everyMs: 20,
  });
  watch.rebase(node);
  return Date.now() - killedAt;
}

/** A new user's SDK client through the first gateway (its fetch counting the chunk PUTs), with an item to attach to. */
async function clientWithItem(): Promise<{ client: VaultClient; puts: ChunkPut[]; vaultId: string; itemId: string }> {
  const { fetch, puts } = countingFetch();
  const client = new VaultClient({ baseUrl: cluster.urls[0]!, fetch });
  await client.register({
    email: `files-${randomUUID().slice(0, 8)}@example.test`,
    password: SDK_PASSWORD,
    orgName: "Files",
    kdf: TEST_KDF,
    rsaBits: 2048,
  });
  const { vaultId } = await client.vaults.create("Files", "shared");
  const { itemId } = await client.items.add(vaultId, { name: "Disk image", fields: { password: "hunter2" } });
  return { client, puts, vaultId, itemId };
}

/**
 * The upload with its two kills, then the download, every process's memory watched throughout:
 * what the test checks, and how long each step took.
 */
async function uploadThroughKills() {
  const t0 = Date.now();
  const file = keystreamFile(SIZE);
  const { client, puts, vaultId, itemId } = await clientWithItem();
  const gateway = `api-${new URL(cluster.urls[0]!).port}`;
  const watch = new RssWatch(deploymentPids());
  // Settled at once: a failed kill is reported after the upload, never as an unhandled rejection.
  const outages: Array<Promise<number | Error>> = [];
  const settled = (p: Promise<number>) => p.catch((err: Error) => err);
  let stored = 0;
  let ended = false;
  const hash = createHash("sha256");
  const ms: number[] = [Date.now() - t0];
  watch.start();
  try {
    const item = await client.attachments.upload(vaultId, itemId, "disk.img", file, {
      onProgress: () => {
        stored++;
        if (stored === KILL_ATTACHMENTS_AT) outages.push(settled(killAndServeAgain("attachments", puts, watch, () => ended)));
        if (stored === KILL_GATEWAY_AT) outages.push(outages[0]!.then(() => settled(killAndServeAgain(gateway, puts, watch, () => ended))));
      },
    });
    const outageMs = await Promise.all(outages);
    for (const o of outageMs) if (o instanceof Error) throw o;
    ms.push(Date.now() - t0 - ms[0]!);
    await client.attachments.download(vaultId, item.attachments![0]!, (chunk) => void hash.update(chunk));
    ms.push(Date.now() - t0 - ms[0]! - ms[1]!);
    return { item, stored, puts, ms, outageMs, gateway, watch, sha256: hash.digest("hex"), sent: file.sha256 };
  } finally {
    ended = true;
    watch.stop();
  }
}

test("a 100 MiB upload survives the attachments node and its gateway SIGKILLed, reads back whole, and no process grows past its bound", async () => {
  const { item, stored, puts, ms, outageMs, gateway, watch, sha256, sent } = await uploadThroughKills();
  console.log(
    `setup ${ms[0]} ms, upload ${ms[1]} ms (outages ${outageMs.join(", ")} ms), download ${ms[2]} ms; ` +
      `PUTs ${puts.length}, refused ${puts.filter((p) => p.status !== 204).length}; ` +
      `the bound ${MAX_GROWTH_MIB} MiB\n${rssTable(watch)}`,
  );
  expect(stored).toBe(CHUNKS);
  expect(sha256).toBe(sent);
  expect(item.attachments).toEqual([expect.objectContaining({ name: "disk.img", size: SIZE })]);
  // Both nodes died with chunks in flight, and the upload went on where it was.
  expect(outageMs).toHaveLength(2);
  expect(watch.lives.filter((l) => l.ended).map((l) => l.name)).toEqual(["attachments", gateway]);
  const storedPuts = puts.filter((p) => p.status === 204);
  expect(new Set(storedPuts.map((p) => p.index)).size).toBe(CHUNKS);
  expect(storedPuts.length).toBeLessThanOrEqual(CHUNKS + 2 * IN_FLIGHT);
  expect(puts.length).toBeGreaterThan(CHUNKS);
  expect(puts.length).toBeLessThanOrEqual(CHUNKS + RETRIES_ALLOWED);
  // Every process, each restarted one from when it served again.
  const grown = watch.lives.filter((l) => watch.growth(l) > MAX_GROWTH_MIB);
  expect(grown.map((l) => `${l.name}: +${watch.growth(l).toFixed(1)} MiB`)).toEqual([]);
  expect(watch.lives.length).toBeGreaterThanOrEqual(16);
});
