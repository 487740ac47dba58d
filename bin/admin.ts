/**
 * Operator commands on the embedded store under DATA_DIR (the server's settings apply):
 *
 *   npm run admin -- backup FILE             consistent copy, online (the running server writes it) or offline,
 *                                            with the key that seals authenticator apps' secrets
 *   npm run admin -- restore FILE [--force] [--without-seal-key]
 *                                            into DATA_DIR, with no server running on it
 *
 * A PostgreSQL store (DATABASE_URL) is backed up with pg_dump and restored with pg_restore
 * (README, "Operating it").
 */
import "./compile-cache";
import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../lib/config";
import { askServer, restoreBackup, writeBackup } from "../lib/ops/backup";
import { restoringKeys, sealKeyInUse } from "../lib/ops/backup-secrets";
import { openStore } from "../lib/store";
import { STORE_FILE } from "../lib/store/sql/sqlite";

const USAGE = "usage: admin backup FILE | admin restore FILE [--force] [--without-seal-key]   (DATA_DIR as for the server)";
const RESTORE_FLAGS = ["--force", "--without-seal-key"];

async function main(argv: string[]): Promise<number> {
  const [command, target, ...rest] = argv;
  if (!command || !target || !["backup", "restore"].includes(command) || rest.some((a) => !RESTORE_FLAGS.includes(a))) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  if (config.databaseUrl || config.mongoUrl) {
    console.error(
      config.databaseUrl
        ? 'DATABASE_URL is set: back up PostgreSQL with pg_dump and restore with pg_restore (README, "Operating it").'
        : "MONGO_URL is set: back up MongoDB with mongodump and restore with mongorestore.",
    );
    return 2;
  }
  const file = path.resolve(target);

  if (command === "backup") {
    const reply = await askServer(config.dataDir, { command: "backup", file });
    if (reply) {
      if (!reply.ok) throw new Error(reply.error);
      console.log(`Backup written by the running server: ${file} (${reply.bytes} bytes)`);
      return 0;
    }
    // No server on DATA_DIR: open the store here (its lock keeps a server from starting meanwhile).
    // A DATA_DIR without a store is a mistake (a wrong path), not an empty backup to write.
    if (!fs.existsSync(path.join(config.dataDir, STORE_FILE)))
      throw new Error(`${config.dataDir} holds no store (${STORE_FILE}) and no server runs on it: nothing to back up. Is DATA_DIR right?`);
    const store = await openStore(config);
    try {
      const bytes = await writeBackup(store, file, sealKeyInUse(config));
      console.log(`Backup written: ${file} (${bytes} bytes)`);
    } finally {
      await store.close();
    }
    return 0;
  }

  // Restore: only with no server on DATA_DIR. Its socket answering, or its lock held, says there is one.
  if (await askServer(config.dataDir, { command: "ping" }).catch(() => undefined)) {
    throw new Error(`A server is running on ${config.dataDir}: stop it before restoring`);
  }
  // Opening the store fails while another process holds it.
  if (fs.existsSync(path.join(config.dataDir, STORE_FILE))) await (await openStore(config)).close();
  restoreBackup(file, config.dataDir, {
    force: rest.includes("--force"),
    withoutSealKey: rest.includes("--without-seal-key"),
    keys: restoringKeys(config),
  });
  console.log(`Restored ${file} into ${config.dataDir}; start the server on it`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`admin: ${err.message}`);
    process.exit(1);
  },
);
