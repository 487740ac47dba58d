/**
 * The server engine: PostgreSQL through `pg`, behind Kysely's PostgresDialect, with a pool of
 * connections. Row locks (`FOR UPDATE` / `FOR SHARE`) and an advisory lock hold across every
 * process that shares the database.
 */
import type { CompiledQuery, RawBuilder } from "kysely";
import { Kysely, PostgresDialect, sql } from "./kysely";
import pg from "pg";
import { lockedVaultRow, type EngineOps } from "./context";
import { outboxRow, writeOutbox } from "./outbox";
import type { Database } from "./schema";
import { param, prepared, preparedName } from "./prepared";

export interface PostgresOptions {
  poolSize: number;
  /** Told once per failure of an idle pooled connection (the pool replaces it). Never the URL. */
  onIdleError?: (message: string) => void;
}

/**
 * A connection that runs the project's prepared statements (prepared.ts) as named statements,
 * wherever they are run: on the pool (`runPrepared`), or on a transaction's connection, where
 * Kysely sends only a text and its values. PostgreSQL then parses and plans each once per
 * connection and afterwards only binds values; an unnamed statement is parsed, analysed and
 * planned again at every run (about a third of PostgreSQL's CPU per item create in the split
 * deployment). Any other text runs as it is sent.
 */
class PreparingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // A connection lost while a request holds it (the server restarted, the backend terminated):
    // the query in flight fails with it (503), and the pool drops the client on release. The pool
    // listens only while a client is idle; without this, that error event would end the process.
    this.on("error", () => undefined);
  }

  // @ts-expect-error -- one implementation of pg.Client's overloaded `query`; Kysely and pg.Pool call it as (text, values[, callback])
  override query(config: unknown, values?: unknown, callback?: (err: unknown, res: unknown) => void): unknown {
    const base = typeof config === "string" && Array.isArray(values) ? preparedName(config) : undefined;
    // @ts-expect-error -- passed on as received
    if (base === undefined) return super.query(config, values, callback);
    const seen = generation;
    const named: pg.QueryConfig = { name: seen === 0 ? base : `${base}.${seen}`, text: config as string, values: values as unknown[] };
    if (callback) return super.query(named, (err: Error, res: unknown) => (noteStalePlan(err, seen), callback(err, res)));
    return super.query(named).catch((err: unknown) => {
      noteStalePlan(err, seen);
      throw err;
    });
  }
}

/**
 * Named statements keep the columns of their first plan: after a schema change that alters what a
 * statement answers (a column added to a table it reads with `*`, by a newer node's migration),
 * PostgreSQL refuses to run it on every connection that prepared it. The first such refusal moves
 * every connection of this process to new names, so each prepares its statements again; the
 * statement that met it fails once (503, to be retried; a read on the pool is retried at once).
 */
let generation = 0;
const STALE_PLAN = /cached plan must not change result type/;

function isStalePlan(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === "0A000" && typeof e.message === "string" && STALE_PLAN.test(e.message);
}

function noteStalePlan(err: unknown, seen: number): void {
  if (seen === generation && isStalePlan(err)) generation++;
}

export function openPostgres(url: string, opts: PostgresOptions): Kysely<Database> {
  if (opts.poolSize < 2) throw new Error("Setting PG_POOL_SIZE must be at least 2");
  const pool = new pg.Pool({
    Client: PreparingClient as unknown as typeof pg.Client,
    connectionString: url,
    max: opts.poolSize,
    // A request waits at most this long for a connection, then fails (503) instead of hanging.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Bounds a statement that would otherwise wait forever (a lost lock holder, a stuck server).
    statement_timeout: 60_000,
    // A connection whose server went silent (a host gone, a half-open socket) is found by TCP
    // keepalive and fails as unavailable, rather than leaving its query waiting for ever (and, for
    // a group of creates, the vault's next group behind it: items.ts).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: "vault-service",
  });
  // Without a listener, an idle connection dropped by a server restart would crash the process.
  pool.on("error", (err) => opts.onIdleError?.(`PostgreSQL connection lost: ${err.message}`));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** Each database handle's pool: for named statements and the pool's figures. */
const pools = new WeakMap<Kysely<Database>, pg.Pool>();

function poolOf(db: Kysely<Database>): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error("This PostgreSQL handle was not opened by openPostgres");
  return pool;
}

/** The vault row's lock, exclusive or shared, with what the item writes decide on (prepared.ts). */
const LOCK_VAULT_UPDATE = prepared("lock_vault_update", (db) => lockedVaultRow(db).forUpdate());
const LOCK_VAULT_SHARE = prepared("lock_vault_share", (db) => lockedVaultRow(db).forShare());

/**
 * The last part of a data-modifying WITH that records items' changes: the vault's counter moved
 * on, and each item's change record written with it (by a `vault_id` param; `itemIds`, a table of
 * one `item_id` column).
 */
const changeRecorded = (itemIds: RawBuilder<unknown>) =>
  sql`next AS (
      UPDATE vaults SET change_seq = change_seq + 1 WHERE vault_id = ${param("vault_id")} RETURNING change_seq
    )
    INSERT INTO item_changes (vault_id, item_id, seq) SELECT ${param("vault_id")}, i.item_id, change_seq FROM next, ${itemIds} AS i(item_id)
    ON CONFLICT (vault_id, item_id) DO UPDATE SET seq = EXCLUDED.seq
    RETURNING seq`;

/**
 * One item's change in one statement, one round trip: the vault's counter moved on and the item's
 * record written with it (a data-modifying WITH). The vault row is locked already (the write's lock).
 */
const RECORD_ITEM_CHANGE = prepared(
  "record_item_change",
  () => sql<{ seq: number }>`WITH ${changeRecorded(sql`(VALUES (${param("item_id")}))`)}`,
);

/**
 * New items' rows of one vault, their change records (as RECORD_ITEM_CHANGE) and the writes'
 * events, in one statement, one round trip under the vault's lock, for any number of each: every
 * param is an array, one element per row (its column's name) or per event, passed whole, so one
 * text serves a create, a group of creates and an import. The items table's size trigger
 * (migration 017) runs at the statement's end, as after a plain insert.
 */
const INSERT_ITEMS_CHANGES_EVENTS = prepared(
  "insert_items_changes_events",
  () => sql<{ seq: number }>`WITH item AS (
      INSERT INTO items (item_id, vault_id, encrypted_data, encrypted_name, revision, key_version, created_at, updated_at)
      SELECT r.item_id, ${param("vault_id")}, r.encrypted_data, r.encrypted_name, r.revision, r.key_version, r.created_at, r.updated_at
      FROM unnest(${param("item_id")}::text[], ${param("encrypted_data")}::text[], ${param("encrypted_name")}::text[],
        ${param("revision")}::integer[], ${param("key_version")}::integer[], ${param("created_at")}::text[], ${param("updated_at")}::text[])
        AS r(item_id, encrypted_data, encrypted_name, revision, key_version, created_at, updated_at)
    ), event AS (
      INSERT INTO outbox (event_id, ord, event)
      SELECT * FROM unnest(${param("event_id")}::text[], ${param("ord")}::text[], ${param("event")}::text[])
    ), ${changeRecorded(sql`unnest(${param("item_id")}::text[])`)}`,
);

/** `rows` as INSERT_ITEMS_CHANGES_EVENTS binds them: per column, its values in order. */
function columnsOf<T extends object>(rows: readonly T[], columns: ReadonlyArray<keyof T>): Record<string, unknown[]> {
  return Object.fromEntries(columns.map((c) => [c, rows.map((r) => r[c])]));
}
const ITEM_COLUMNS = ["item_id", "encrypted_data", "encrypted_name", "revision", "key_version", "created_at", "updated_at"] as const;
const OUTBOX_COLUMNS = ["event_id", "ord", "event"] as const;

/** Advisory lock keys (any constants the schema owns). */
const REGISTRATION_LOCK = 0x7661756c; // "vaul"
const MIGRATION_LOCK = 0x7661756d;

export const postgresOps: EngineOps = {
  name: "postgres",
  // Each transaction commits on its own.
  durably: (_db, run) => run(),
  async backupTo() {
    throw new Error('A PostgreSQL store is backed up with pg_dump and restored with pg_restore (README, "Operating it")');
  },
  // On the pool, without Kysely's connection handling; named by PreparingClient.
  async runPrepared<R>(db: Kysely<Database>, compiled: CompiledQuery<R>, values: unknown[]): Promise<R[]> {
    const run = async () => (await poolOf(db).query<R & pg.QueryResultRow>(compiled.sql, values)).rows;
    try {
      return await run();
    } catch (err) {
      // Prepared again under a new name (PreparingClient): a read, so run again at once.
      if (isStalePlan(err)) return run();
      throw err;
    }
  },
  poolUsage(db) {
    const pool = poolOf(db);
    return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  },
  async lockVault(trx, vaultId, mode) {
    return (await (mode === "update" ? LOCK_VAULT_UPDATE : LOCK_VAULT_SHARE).run(trx, { vaultId })).rows[0];
  },
  rowLock: (query, mode) => (mode === "update" ? query.forUpdate() : query.forShare()),
  async lockRegistrations(trx) {
    await sql`SELECT pg_advisory_xact_lock(${REGISTRATION_LOCK})`.execute(trx);
  },
  async lockName(trx, name) {
    // The two-key form: a space of its own, apart from the one-key locks above.
    await sql`SELECT pg_advisory_xact_lock(${REGISTRATION_LOCK}, hashtext(${name}))`.execute(trx);
  },
  isUniqueViolation(err) {
    return (err as { code?: unknown })?.code === "23505";
  },
  // 3 parameters a row, far below PostgreSQL's 65,535 per statement.
  batchRows: 500,
  async recordItemChange(trx, vaultId, itemId) {
    const { rows } = await RECORD_ITEM_CHANGE.run(trx, { vault_id: vaultId, item_id: itemId });
    if (rows.length !== 1) throw new Error(`recordItemChange: no vault ${vaultId}`);
  },
  async insertItems(trx, items, events) {
    const vaultId = items[0]?.vault_id;
    if (vaultId === undefined) return writeOutbox(trx, events);
    const { rows } = await INSERT_ITEMS_CHANGES_EVENTS.run(trx, {
      vault_id: vaultId,
      ...columnsOf(items, ITEM_COLUMNS),
      ...columnsOf((events ?? []).map(outboxRow), OUTBOX_COLUMNS),
    });
    if (rows.length !== items.length) throw new Error(`insertItems: no vault ${vaultId}`);
  },
  // Batched: one statement, one round trip, per 500 items.
  async rekeyItems(trx, vaultId, items, keyVersion, now) {
    for (let i = 0; i < items.length; i += postgresOps.batchRows) {
      const chunk = items.slice(i, i + postgresOps.batchRows);
      const values = sql.join(chunk.map((it) => sql`(${it.itemId}, ${it.encryptedData}, ${it.encryptedName})`));
      const res = await sql`UPDATE items SET encrypted_data = v.column2, encrypted_name = v.column3,
          revision = items.revision + 1, key_version = ${keyVersion}, updated_at = ${now}
        FROM (VALUES ${values}) AS v WHERE items.vault_id = ${vaultId} AND items.item_id = v.column1`.execute(trx);
      if (Number(res.numAffectedRows) !== chunk.length) throw new Error("rekey: item rows changed under the lock");
    }
  },
  async whileMigrating(db, migrate) {
    // One pooled connection holds a session lock while the migrator works on others: nodes of a
    // split deployment starting together migrate one after the other (the later ones find nothing
    // to do) instead of racing to create the same tables.
    return db.connection().execute(async (conn) => {
      await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
      try {
        return await migrate();
      } finally {
        await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      }
    });
  },
};

/** SQLSTATE classes and socket errors that mean "the database is not reachable right now". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P)/;
const UNAVAILABLE_SOCKET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"]);

export function isPostgresUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  // A statement prepared before a schema change: the next run prepares it again (PreparingClient).
  if (isStalePlan(err)) return true;
  if (typeof e?.code === "string" && (UNAVAILABLE_SQLSTATE.test(e.code) || UNAVAILABLE_SOCKET.has(e.code))) return true;
  const message = typeof e?.message === "string" ? e.message : "";
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(
    message,
  );
}
