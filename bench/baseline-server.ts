/**
 * The benchmark's baseline: the product's gateway configuration and authentication (the same
 * mixin, the same token verification) in front of one action that answers a constant (the
 * product's response, given by bench/run.ts in BENCH_CONSTANT).
 * Not a route of the product; started only by the benchmark.
 *
 * POST /bench/commit: the floor of an item write on the embedded store, the same
 * gateway and body parse, then one row inserted and committed in its own transaction in a SQLite
 * file with the product's settings (WAL, synchronous=FULL: one fsync per write).
 * POST /bench/rekey: the floor of a rekey (rekeyRows below), its body streamed as the product's is.
 *
 * BENCH_ROLE=gateway or constant runs one half, for the split baseline: the two processes meet
 * over NATS (TRANSPORTER) like the product's gateway and services. Unset: both in one process.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { brokerOptions } from "../lib/broker-options";
import { loadConfig } from "../lib/config";
import { isCanonicalBase64 } from "../lib/domain/encoding";
import { AccessTokens } from "../lib/auth/access-tokens";
import { signingKeys } from "../lib/auth/secrets";
import { gatewayMixin } from "../mixins/gateway.mixin";

/** One row per call, each in its own transaction, in a SQLite file set up as the product's store. */
function oneRowCommits(dataDir: string): (body: string) => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(path.join(dataDir, "baseline.sqlite"));
  db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO rows (id, body) VALUES (?, ?)");
  return (body) => void insert.run(randomUUID(), body);
}

/**
 * The floor of a rekey: the body read once as bytes and parsed, each ciphertext's
 * canonical base64 checked by decoding it, and one row per item written through a prepared
 * statement, all in one transaction, in the same SQLite file settings. No membership, no
 * revisions, no signatures: what no rekey can do without.
 */
function rekeyRows(dataDir: string): (body: Buffer) => number {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new DatabaseSync(path.join(dataDir, "baseline-rekey.sqlite"));
  db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, name TEXT NOT NULL, data TEXT NOT NULL)");
  const put = db.prepare("INSERT OR REPLACE INTO items (id, name, data) VALUES (?, ?, ?)");
  return (body) => {
    const { items } = JSON.parse(body.toString("utf8")) as {
      items: Array<{ itemId: string; encryptedName: string; encryptedData: string }>;
    };
    db.exec("BEGIN");
    try {
      for (const item of items) {
        if (!isCanonicalBase64(item.encryptedName) || !isCanonicalBase64(item.encryptedData)) throw new Error("not canonical base64");
        put.run(item.itemId, item.encryptedName, item.encryptedData);
      }
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
    return items.length;
  };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const role = process.env.BENCH_ROLE ?? "both";
  const read: unknown = JSON.parse(process.env.BENCH_CONSTANT ?? "{}");
  const write: unknown = JSON.parse(process.env.BENCH_CONSTANT_WRITE ?? "{}");
  const tokens = new AccessTokens(signingKeys(config), config.accessTokenTtlSec);
  const broker = new ServiceBroker(brokerOptions(config, { nodeID: `baseline-${role}-${os.hostname()}-${process.pid}` }));
  if (role !== "constant") {
    broker.createService({
      name: "api",
      mixins: [
        gatewayMixin(config, tokens, [
          { method: "GET", path: "/health", action: "api.health", public: true },
          { method: "GET", path: "/bench/constant", action: "bench.constant" },
          { method: "POST", path: "/bench/constant", action: "bench.constantWrite" },
          { method: "POST", path: "/bench/commit", action: "bench.commitWrite" },
          { method: "POST", path: "/bench/rekey", action: "bench.rekeyFloor", streamBody: true },
        ]),
      ],
      actions: { health: { handler: () => ({ status: "ok" }) } },
    } as ServiceSchema);
  }
  if (role !== "gateway") {
    const commit = oneRowCommits(config.dataDir);
    const rekey = rekeyRows(config.dataDir);
    broker.createService({
      name: "bench",
      // The constants are the product's own answers (GET /vaults, an item create), so both
      // servers send the same bytes and the ratio measures the work behind the gateway.
      actions: {
        constant: { handler: () => read },
        constantWrite: {
          handler(ctx) {
            ctx.meta.$statusCode = 201;
            return write;
          },
        },
        rekeyFloor: {
          async handler(ctx) {
            rekey(await readAll((ctx as unknown as { stream: NodeJS.ReadableStream }).stream));
            ctx.meta.$statusCode = 204;
            return null;
          },
        },
        commitWrite: {
          handler(ctx) {
            commit(JSON.stringify(ctx.params));
            ctx.meta.$statusCode = 201;
            return write;
          },
        },
      },
    });
  }
  await broker.start();
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
