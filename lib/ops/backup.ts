// Backup (online, through the admin socket) and restore (offline) of the embedded store.
// Design: docs/design/online-backup.md
import { CHANGE_EPOCH_KEY } from "../domain/items/changes";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import type { Store } from "../store/port";
import { STORE_FILE } from "../store/sql/sqlite";
import { ATTACHMENTS_FOLDER, writeOutBackupChunks } from "../store/sql/attachment-files";
import { ensureDataDir, ensureFolder, fsyncPathSync } from "../config/data-dir";
import { addBackupSecrets, dropBackupSecrets, planSealKeyRestore, readBackupSeal, writeSealKey, type SealKeyInUse } from "./backup-secrets";

export const adminSocketPath = (dataDir: string): string => path.join(dataDir, "admin.sock");

/**
 * Writes a consistent copy of `store` to `file` (absolute; it must not exist), with the key that
 * seals its authenticator-app secrets (`seal`, lib/ops/backup-secrets.ts). Resolves with its size
 * in bytes. The copy is private from its first byte: it is written into a new folder only its
 * owner may enter (0700), into a file created 0600 before SQLite writes to it (SQLite gives its
 * journal the database file's mode), and linked into place only when complete. A missing folder
 * for it is made (owner-only); one that cannot be is refused in a sentence.
 */
export async function writeBackup(store: Store, file: string, seal: SealKeyInUse): Promise<number> {
  if (!path.isAbsolute(file)) throw new Error("The backup file must be an absolute path");
  if (fs.existsSync(file)) throw new Error(`${file} exists already; a backup never overwrites a file`);
  const into = path.dirname(file);
  ensureFolder(into, (reason) => new Error(`The backup cannot be written into ${into}: ${reason}`));
  const folder = fs.mkdtempSync(path.join(path.dirname(file), `.${path.basename(file)}.partial-`));
  try {
    fs.chmodSync(folder, 0o700);
    const partial = path.join(folder, "backup.sqlite");
    fs.closeSync(fs.openSync(partial, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
    fs.chmodSync(partial, 0o600); // whatever the umask
    await store.housekeeping.backupTo(partial);
    addBackupSecrets(partial, seal);
    fsyncPathSync(partial);
    fs.linkSync(partial, file); // fails if the file appeared meanwhile: never overwrites
    fsyncPathSync(path.dirname(file));
    return fs.statSync(file).size;
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

/** Checks that `file` is a complete store backup: SQLite's integrity check passes and it has the schema's migrations. */
export function checkBackup(file: string): void {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { readOnly: true });
  } catch (err) {
    throw new Error(`${file} is not a readable SQLite database: ${(err as Error).message}`);
  }
  try {
    const integrity = db
      .prepare("PRAGMA integrity_check")
      .all()
      .map((r) => Object.values(r)[0]);
    if (integrity.length !== 1 || integrity[0] !== "ok")
      throw new Error(`${file} fails SQLite's integrity check: ${integrity.slice(0, 3).join("; ")}`);
    const migrations = db.prepare("SELECT count(*) AS n FROM kysely_migration").get() as { n: number };
    if (!migrations.n) throw new Error(`${file} holds no migrations: not a backup of this service's store`);
  } catch (err) {
    if (/no such table/.test((err as Error).message)) throw new Error(`${file} is not a backup of this service's store`);
    if (/file is not a database/.test((err as Error).message)) throw new Error(`${file} is not a SQLite database`);
    throw err;
  } finally {
    db.close();
  }
}

/** How a restore goes: over an existing store (`force`), and without the key its sealed secrets need (`withoutSealKey`). */
export interface RestoreOptions {
  force: boolean;
  withoutSealKey: boolean;
  /** The restoring side's seal keys (`restoringKeys`, lib/ops/backup-secrets.ts). */
  keys: { configured?: Buffer; existing?: Buffer };
}

/**
 * Puts the backup `file` in place as DATA_DIR's store, the attachment chunks it carries as files
 * under DATA_DIR/attachments (in place of the old store's), and the seal key it carries as
 * DATA_DIR/seal-secret; refuses, before changing anything, when the key the restored server would
 * run with does not open the backup's sealed secrets. The caller has made sure no server owns
 * DATA_DIR (`assertStoreFree`).
 */
export function restoreBackup(file: string, dataDir: string, opts: RestoreOptions): void {
  checkBackup(file);
  const seal = planSealKeyRestore({ backup: readBackupSeal(file), ...opts.keys, withoutSealKey: opts.withoutSealKey });
  ensureDataDir(dataDir);
  const target = path.join(dataDir, STORE_FILE);
  if (fs.existsSync(target) && !opts.force)
    throw new Error(`${dataDir} holds a store already; restore into an empty DATA_DIR, or pass --force to replace it`);
  const suffix = randomBytes(4).toString("hex");
  const incoming = `${target}.restore-${suffix}`;
  const chunks = path.join(dataDir, ATTACHMENTS_FOLDER);
  const [incomingChunks, oldChunks] = [`${chunks}.restore-${suffix}`, `${chunks}.replaced-${suffix}`];
  try {
    fs.copyFileSync(file, incoming, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(incoming, 0o600);
    dropChangeEpoch(incoming);
    dropBackupSecrets(incoming);
    writeOutBackupChunks(incoming, incomingChunks);
    fsyncPathSync(incoming);
    // The old store's write-ahead log must not be applied to the restored file.
    for (const companion of [`${target}-wal`, `${target}-shm`]) fs.rmSync(companion, { force: true });
    // The old store's chunk files go with it (a backup from before attachments brings none).
    if (fs.existsSync(chunks)) fs.renameSync(chunks, oldChunks);
    if (fs.existsSync(incomingChunks)) fs.renameSync(incomingChunks, chunks);
    fs.renameSync(incoming, target);
    if (seal.write) writeSealKey(dataDir, seal.write);
    fsyncPathSync(dataDir);
  } finally {
    fs.rmSync(incoming, { force: true });
    for (const folder of [incomingChunks, oldChunks]) fs.rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * A restored store starts a new change epoch (lib/domain/items/changes.ts): the cursors clients
 * hold are from after the backup, and are answered with a full read, never read against the
 * restored counters. (A backup of a release without delta reads has no epoch to drop.)
 */
function dropChangeEpoch(file: string): void {
  const db = new DatabaseSync(file);
  try {
    const hasKeys = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'server_keys'").get();
    if (hasKeys) db.prepare("DELETE FROM server_keys WHERE name = ?").run(CHANGE_EPOCH_KEY);
  } finally {
    db.close();
  }
}

// ------------------------------------------------------------------------------ the admin socket

export type AdminRequest = { command: "ping" } | { command: "backup"; file: string };
export type AdminReply = { ok: true; bytes?: number } | { ok: false; error: string };

/**
 * The running server's admin socket: one JSON request a connection, one JSON reply. Created
 * owner-only; a stale one (from a crash) is replaced, which is safe because the store's lock
 * already proved no other process owns DATA_DIR.
 */
export async function listenAdminSocket(dataDir: string, store: Store, seal: SealKeyInUse): Promise<net.Server | undefined> {
  const socket = adminSocketPath(dataDir);
  if (Buffer.byteLength(socket) > 100) return undefined; // past the platform's limit for a socket path
  fs.rmSync(socket, { force: true });
  const server = net.createServer((conn) => {
    let raw = "";
    conn.setEncoding("utf8");
    conn.on("data", (chunk) => {
      raw += chunk;
      if (raw.length > 8192) conn.destroy();
      if (!raw.includes("\n")) return;
      void answerAdmin(raw.slice(0, raw.indexOf("\n")), store, seal).then((reply) => conn.end(`${JSON.stringify(reply)}\n`));
    });
    conn.on("error", () => undefined);
  });
  const umask = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => resolve());
    });
  } finally {
    process.umask(umask);
  }
  fs.chmodSync(socket, 0o600);
  return server;
}

async function answerAdmin(line: string, store: Store, seal: SealKeyInUse): Promise<AdminReply> {
  try {
    const request = JSON.parse(line) as { command?: unknown; file?: unknown };
    if (request.command === "ping") return { ok: true };
    if (request.command !== "backup" || typeof request.file !== "string") return { ok: false, error: "Unknown admin request" };
    return { ok: true, bytes: await writeBackup(store, request.file, seal) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** Asks the server owning DATA_DIR; undefined when no server listens there. */
export function askServer(dataDir: string, request: AdminRequest): Promise<AdminReply | undefined> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(adminSocketPath(dataDir));
    let raw = "";
    conn.setEncoding("utf8");
    conn.on("connect", () => conn.write(`${JSON.stringify(request)}\n`));
    conn.on("data", (chunk) => (raw += chunk));
    conn.on("end", () => {
      try {
        resolve(JSON.parse(raw) as AdminReply);
      } catch {
        reject(new Error("The server's admin socket answered something unexpected"));
      }
    });
    conn.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT" || err.code === "ECONNREFUSED") resolve(undefined);
      else reject(err);
    });
  });
}
