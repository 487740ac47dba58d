/**
 * The embedded engine: SQLite through node:sqlite, behind Kysely's SqliteDialect.
 * WAL with synchronous=FULL: a committed transaction survives power loss.
 */
import fs from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import {
  Kysely,
  sql,
  SqliteAdapter,
  SqliteDialect,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SqliteDatabase,
  type SqliteStatement,
  type TransactionSettings,
  type CompiledQuery,
} from "kysely";
import { LOCKED_VAULT_COLUMNS, type EngineOps } from "./context";
import type { Database } from "./schema";

const STATEMENT_CACHE = 256;

/** node:sqlite speaks positional varargs and prepares per call; Kysely wants better-sqlite3's shape. */
class NodeSqlite implements SqliteDatabase {
  private readonly statements = new Map<string, SqliteStatement>();
  constructor(private readonly db: DatabaseSync) {}

  close(): void {
    this.statements.clear();
    if (this.db.isOpen) this.db.close();
  }

  prepare(sql: string): SqliteStatement {
    let cached = this.statements.get(sql);
    if (cached) return cached;
    const stmt: StatementSync = this.db.prepare(sql);
    type Params = Parameters<StatementSync["all"]>;
    cached = {
      reader: stmt.columns().length > 0,
      all: (params) => stmt.all(...(params as Params)),
      run: (params) => stmt.run(...(params as Params)),
      iterate: (params) => stmt.iterate(...(params as Params)),
    };
    if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value!);
    this.statements.set(sql, cached);
    return cached;
  }
}

/**
 * The one connection, handed to one query or transaction at a time in arrival order. Kysely's
 * own mutex for single-connection dialects wakes every waiter on each release (a thundering herd:
 * with 50 requests in flight, 50 wake-ups per query); this queue wakes exactly the next one.
 */
class QueuedSqliteDriver implements Driver {
  private readonly waiting: Array<() => void> = [];
  private busy = false;

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy = true;
    return this.inner.acquireConnection();
  }

  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (next)
      next(); // stays busy: the connection passes straight to the next in line
    else this.busy = false;
  }

  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(c, settings);
  }

  commitTransaction(c: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(c);
  }

  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(c);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** SQLite through our queue: the adapter declares that the driver serializes its own connection. */
class QueuedSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new QueuedSqliteDriver(super.createDriver());
  }

  override createAdapter(): DialectAdapter {
    return new (class extends SqliteAdapter {
      override get supportsMultipleConnections(): boolean {
        return true;
      }
    })();
  }
}

/** The embedded store's file under DATA_DIR. */
export const STORE_FILE = "vault.sqlite";

export function openSqlite(dataDir: string): Kysely<Database> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, STORE_FILE);
  // Owner-only, whatever the folder's mode or the umask: SQLite gives its WAL the database file's mode.
  ownerOnly(file);
  const db = new DatabaseSync(file);
  try {
    // Wait for a process that is stopping rather than fail at once.
    db.exec("PRAGMA busy_timeout = 5000");
    // One process owns the embedded store: exclusive locking keeps a second one out, and spares
    // every read the shared-memory lock calls of WAL mode.
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    // Take the lock now, not at the first request.
    db.exec("BEGIN IMMEDIATE; COMMIT");
  } catch (err) {
    db.close();
    if (/locked|busy/i.test((err as Error).message)) {
      throw new Error(
        `The embedded store in ${dataDir} is in use by another process; one process owns it (split deployments need DATABASE_URL)`,
      );
    }
    throw err;
  }
  for (const companion of [`${file}-wal`, `${file}-shm`]) if (fs.existsSync(companion)) fs.chmodSync(companion, 0o600);
  return new Kysely<Database>({ dialect: new QueuedSqliteDialect({ database: new NodeSqlite(db) }) });
}

/** Creates the file if it is missing, and makes it readable and writable by its owner only. */
export function ownerOnly(file: string): void {
  fs.closeSync(fs.openSync(file, "a", 0o600));
  fs.chmodSync(file, 0o600);
}

/** SQLite: one connection, every transaction serialized by Kysely's connection mutex. */
export const sqliteOps: EngineOps = {
  name: "sqlite",
  async lockVault(trx, vaultId) {
    return trx.selectFrom("vaults").select(LOCKED_VAULT_COLUMNS).where("vault_id", "=", vaultId).executeTakeFirst();
  },
  async lockRegistrations() {
    // Transactions on the single connection never overlap.
  },
  isUniqueViolation(err) {
    // By message, not `instanceof Error`: node:sqlite's errors may come from another realm (a test VM).
    const message = (err as { message?: unknown })?.message;
    return typeof message === "string" && /UNIQUE constraint failed|PRIMARY KEY constraint failed/i.test(message);
  },
  batchRows: 500,
  // The file is opened in exclusive mode: no other process can be migrating it.
  whileMigrating: (_db, migrate) => migrate(),
  poolUsage: () => undefined,
  async runPrepared<R>(db: Kysely<Database>, _name: string, compiled: CompiledQuery<R>, values: unknown[]): Promise<R[]> {
    return (await db.executeQuery<R>({ ...compiled, parameters: values })).rows;
  },
  // One statement on the one connection: a snapshot of a single point in time; writes queue
  // behind it and go on once it is done.
  async backupTo(db, file) {
    await sql`VACUUM INTO ${file}`.execute(db);
  },
};
