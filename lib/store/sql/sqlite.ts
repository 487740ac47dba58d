/**
 * The embedded engine: SQLite through node:sqlite, behind Kysely's SqliteDialect.
 * WAL with synchronous=FULL: a committed transaction survives power loss.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import fs from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { DatabaseConnection, DialectAdapter, Driver, SqliteDatabase, SqliteStatement, CompiledQuery } from "kysely";
import { Kysely, sql, SqliteAdapter, SqliteDialect } from "./kysely";
import { insertItemSteps, lockedVaultRow, NEXT_CHANGE, ONE_CHANGE, type Db, type EngineOps } from "./context";
import { failpoint } from "../../failpoints";
import { ensureDataDir } from "../../config/data-dir";
import type { Database } from "./schema";
import { prepared } from "./prepared";

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

/** Transactions a group commits at most, and how long a group may stay open, before it commits. */
const GROUP_MAX_TRANSACTIONS = 32;
const GROUP_MAX_MS = 20;

/**
 * The one connection, handed out in arrival order, with group commit: transactions that arrive
 * together share one durable COMMIT. Why and how: docs/design/sqlite-group-commit.md.
 */
class QueuedSqliteDriver implements Driver {
  private readonly waiting: Array<{ resume: () => void }> = [];
  private busy = false;
  /** The group's transaction, while one is open. */
  private group: Group | undefined;
  /** Where a transaction learns which group it committed in (`durably`). */
  private readonly slots = new AsyncLocalStorage<{ group?: Group }>();
  /** Inside a transaction's savepoint (between begin and commit or rollback). */
  private inTransaction = false;
  private raw: DatabaseConnection | undefined;

  constructor(
    private readonly inner: Driver,
    private readonly db: DatabaseSync,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.busy) await new Promise<void>((resume) => this.waiting.push({ resume }));
    this.busy = true;
    this.raw ??= await this.inner.acquireConnection();
    return this.connection;
  }

  /** The connection as queries see it: a query outside a transaction commits an open group first. */
  private readonly connection: DatabaseConnection = {
    executeQuery: async (query) => {
      if (!this.inTransaction) this.commitGroup();
      return this.raw!.executeQuery(query);
    },
    streamQuery: (query, chunkSize) => {
      if (!this.inTransaction) this.commitGroup();
      return this.raw!.streamQuery(query, chunkSize);
    },
  };

  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (this.group && (this.group.count >= GROUP_MAX_TRANSACTIONS || Date.now() - this.group.started >= GROUP_MAX_MS)) this.commitGroup();
    if (next) {
      next.resume(); // stays busy: the connection passes straight to the next in line
      return;
    }
    this.busy = false;
    // Requests already read but not yet at the store join the group until the event loop's next turn.
    if (this.group) this.scheduleCommit();
  }

  private commitScheduled = false;

  private scheduleCommit(): void {
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    setImmediate(() => {
      this.commitScheduled = false;
      // Held meanwhile: its release commits or schedules again (or a plain query commits first).
      if (!this.busy) this.commitGroup();
    });
  }

  async beginTransaction(): Promise<void> {
    if (!this.group) {
      this.db.exec("BEGIN");
      this.group = newGroup();
    }
    this.db.exec("SAVEPOINT tx");
    this.inTransaction = true;
  }

  async commitTransaction(): Promise<void> {
    this.inTransaction = false;
    this.db.exec("RELEASE tx");
    this.group!.count++;
    const slot = this.slots.getStore();
    if (slot) slot.group = this.group;
  }

  async rollbackTransaction(): Promise<void> {
    this.inTransaction = false;
    if (!this.db.isTransaction) {
      // An error that ended the whole transaction (SQLite rolls back on some I/O errors): the
      // group's earlier transactions are gone too, and fail.
      this.failGroup(new Error("The embedded store rolled back a group of transactions"));
      return;
    }
    this.db.exec("ROLLBACK TO tx; RELEASE tx");
  }

  /**
   * Runs a transaction (`run`), and answers once the group it committed in has committed. A
   * transaction that failed answers its error once the group open then has committed too: what
   * it read (an id taken, say) may have come from the group.
   */
  async durably<T>(run: () => Promise<T>): Promise<T> {
    const slot: { group?: Group } = {};
    let result: T;
    try {
      result = await this.slots.run(slot, run);
    } catch (err) {
      await this.group?.committed.catch(() => undefined);
      throw err;
    }
    await slot.group?.committed;
    return result;
  }

  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    this.group = undefined;
    if (group.count > 1) failpoint("group-commit-before-commit");
    try {
      this.db.exec("COMMIT");
    } catch (err) {
      try {
        if (this.db.isTransaction) this.db.exec("ROLLBACK");
      } catch {
        // Nothing more to undo here: the group fails either way.
      }
      group.fail(err);
      return;
    }
    group.commit();
  }

  private failGroup(err: unknown): void {
    const group = this.group;
    this.group = undefined;
    group?.fail(err);
  }

  /** At close: a transaction still running is rolled back (never committed half), the group's finished ones are committed. */
  destroy(): Promise<void> {
    if (this.inTransaction) {
      this.inTransaction = false;
      try {
        this.db.exec("ROLLBACK TO tx; RELEASE tx");
      } catch {
        this.failGroup(new Error("The embedded store closed during a transaction"));
      }
    }
    this.commitGroup();
    return this.inner.destroy();
  }
}

/** One group commit: its transactions, and the promise they wait for. */
interface Group {
  started: number;
  count: number;
  committed: Promise<void>;
  commit(): void;
  fail(err: unknown): void;
}

function newGroup(): Group {
  let commit!: () => void;
  let fail!: (err: unknown) => void;
  const committed = new Promise<void>((resolve, reject) => {
    commit = resolve;
    fail = reject;
  });
  // Awaited by its transactions; a failed group nobody awaits any more is not an unhandled rejection.
  committed.catch(() => undefined);
  return { started: Date.now(), count: 0, committed, commit, fail };
}

/** SQLite through our queue: the adapter declares that the driver serializes its own connection. */
class QueuedSqliteDialect extends SqliteDialect {
  constructor(
    private readonly connection: NodeSqlite,
    private readonly db: DatabaseSync,
  ) {
    super({ database: connection });
  }

  override createDriver(): Driver {
    const driver = new QueuedSqliteDriver(super.createDriver(), this.db);
    this.driver = driver;
    return driver;
  }

  driver: QueuedSqliteDriver | undefined;

  override createAdapter(): DialectAdapter {
    const adapter = new (class extends SqliteAdapter {
      override get supportsMultipleConnections(): boolean {
        return true;
      }
      // SQLite's DDL is transactional (Kysely's adapter says no, for PRAGMAs that a transaction
      // ignores; no migration here uses one): the migrator then runs every pending migration in
      // one transaction. An upgrade stopped half-way leaves the schema as it was, and a new data
      // directory's schema costs one commit instead of one per statement.
      override get supportsTransactionalDdl(): boolean {
        return true;
      }
    })();
    CONNECTIONS.set(adapter, this.connection);
    return adapter;
  }
}

/** Each store's one connection, by its Kysely instance's adapter (shared by its transactions). */
const CONNECTIONS = new WeakMap<DialectAdapter, NodeSqlite>();

/**
 * The connection under `trx`, for statements stepped in a loop without a promise per row. Only
 * inside a transaction's callback: the driver's queue has given that transaction the connection,
 * and nothing else runs on it until the callback ends.
 */
function connectionOf(trx: Db): NodeSqlite {
  if (!trx.isTransaction) throw new Error("connectionOf: only inside a transaction");
  const connection = CONNECTIONS.get(trx.getExecutor().adapter);
  if (!connection) throw new Error("connectionOf: not an embedded store");
  return connection;
}

/** The embedded store's file under DATA_DIR. */
export const STORE_FILE = "vault.sqlite";

export function openSqlite(dataDir: string): Kysely<Database> {
  ensureDataDir(dataDir);
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
  const dialect = new QueuedSqliteDialect(new NodeSqlite(db), db);
  const kysely = new Kysely<Database>({ dialect });
  GROUPS.set(kysely, (run) => (dialect.driver ? dialect.driver.durably(run) : run()));
  return kysely;
}

/** Creates the file if it is missing, and makes it readable and writable by its owner only. */
export function ownerOnly(file: string): void {
  fs.closeSync(fs.openSync(file, "a", 0o600));
  fs.chmodSync(file, 0o600);
}

/** The vault row, as the item writes decide on it (prepared.ts); the single connection is the lock. */
const LOCKED_VAULT = prepared("locked_vault", lockedVaultRow);

/** How each embedded store runs a transaction to its group's commit (QueuedSqliteDriver). */
const GROUPS = new WeakMap<Kysely<Database>, <T>(run: () => Promise<T>) => Promise<T>>();

/** SQLite: one connection, every transaction serialized by Kysely's connection mutex. */
export const sqliteOps: EngineOps = {
  name: "sqlite",
  durably: (db, run) => GROUPS.get(db)?.(run) ?? run(),
  async lockVault(trx, vaultId) {
    return (await LOCKED_VAULT.run(trx, { vaultId })).rows[0];
  },
  rowLock: (query) => query,
  async lockRegistrations() {
    // Transactions on the single connection never overlap.
  },
  async lockName() {
    // As above: the single connection serializes every transaction.
  },
  isUniqueViolation(err) {
    // By message, not `instanceof Error`: node:sqlite's errors may come from another realm (a test VM).
    const message = (err as { message?: unknown })?.message;
    return typeof message === "string" && /UNIQUE constraint failed|PRIMARY KEY constraint failed/i.test(message);
  },
  batchRows: 500,
  // One prepared update per item, stepped in a loop on the connection the transaction holds: on
  // SQLite that costs less than each row's share of a batched update joined with its VALUES
  // (10,000 items of 2 KiB: 130 against 210 ms), and no batch is assembled.
  async rekeyItems(trx, vaultId, items, keyVersion, now) {
    const update = connectionOf(trx).prepare(
      "UPDATE items SET encrypted_data = ?, encrypted_name = ?, revision = revision + 1, key_version = ?, updated_at = ? WHERE vault_id = ? AND item_id = ?",
    );
    for (const it of items) {
      const res = update.run([it.encryptedData, it.encryptedName, keyVersion, now, vaultId, it.itemId]);
      if (Number(res.changes) !== 1) throw new Error("rekey: item rows changed under the lock");
    }
  },
  // Two statements: each is a call into SQLite in this process, not a round trip.
  async recordItemChange(trx, vaultId, itemId) {
    const [next] = (await NEXT_CHANGE.run(trx, { vaultId })).rows;
    if (!next) throw new Error(`recordItemChange: no vault ${vaultId}`);
    await ONE_CHANGE.run(trx, { vaultId, itemId, seq: Number(next.seq) });
  },
  insertItems: (trx, rows, events) => insertItemSteps(sqliteOps, trx, rows, events),
  // The file is opened in exclusive mode: no other process can be migrating it. The migrations'
  // one transaction (the dialect's adapter, above) answers once its group has committed, as every
  // transaction does: a commit that fails fails the start instead of leaving the old schema unseen.
  whileMigrating: (db, migrate) => GROUPS.get(db)?.(migrate) ?? migrate(),
  poolUsage: () => undefined,
  async runPrepared<R>(db: Kysely<Database>, compiled: CompiledQuery<R>, values: unknown[]): Promise<R[]> {
    return (await db.executeQuery<R>({ ...compiled, parameters: values })).rows;
  },
  // One statement on the one connection: a snapshot of a single point in time; writes queue
  // behind it and go on once it is done.
  async backupTo(db, file) {
    await sql`VACUUM INTO ${file}`.execute(db);
  },
};
