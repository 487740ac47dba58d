import { openSqlStore } from "../lib/store/sql/store";
import { isPostgresUnavailable, openPostgres, postgresOps } from "../lib/store/sql/postgres";
import { param, prepared, preparedName } from "../lib/store/sql/prepared";
import { Kysely, sql, SqliteAdapter } from "../lib/store/sql/kysely";
import { DummyDriver, SqliteIntrospector, SqliteQueryCompiler } from "kysely";
import type { Store } from "../lib/store/port";
import { describeStoreContract } from "./store.contract";
import { createTestDatabase, type TestDatabase } from "./helpers/postgres";
import { vaultSizeDrift } from "./helpers/vault-sizes";
import type { Database } from "../lib/store/sql/schema";

const databases = new Map<Store, TestDatabase>();
const dbs = new Map<Store, Kysely<Database>>();

describeStoreContract(
  "SQL on PostgreSQL (pg)",
  async () => {
    const database = await createTestDatabase();
    const db = openPostgres(database.url, { poolSize: 10 });
    const store = await openSqlStore(db, postgresOps);
    databases.set(store, database);
    dbs.set(store, db);
    return store;
  },
  async (store) => {
    // Every vault's kept sizes (migration 017) match its rows after the whole suite's writes.
    expect(await vaultSizeDrift(dbs.get(store)!)).toEqual([]);
    await store.close();
    await databases.get(store)!.drop();
  },
);

/**
 * The prepared statements (lib/store/sql/prepared.ts) run as named statements on PostgreSQL, in a
 * transaction as on the pool: parsed and planned once per connection (issue 31). And a schema
 * change that alters what one answers does not leave it failing until a restart.
 */
describe("named statements on PostgreSQL", () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  const PROBE = prepared("test_named_probe", () => sql<Record<string, unknown>>`SELECT * FROM named_probe WHERE id = ${param("id")}`);
  const inTransaction = () => db.transaction().execute(async (trx) => (await PROBE.run(trx, { id: 1 })).rows);

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openPostgres(database.url, { poolSize: 2 });
    await sql`CREATE TABLE named_probe (id int PRIMARY KEY, a text NOT NULL)`.execute(db);
    await sql`INSERT INTO named_probe VALUES (1, 'x')`.execute(db);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  it("a statement run in a transaction is prepared on its connection, not parsed and planned at each run", async () => {
    const names = await db.transaction().execute(async (trx) => {
      await PROBE.run(trx, { id: 1 });
      return (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(trx)).rows.map((r) => r.name);
    });
    expect(names.some((n) => n.startsWith("test_named_probe"))).toBe(true);
  });

  it("a statement compiled for SQLite and for PostgreSQL gets one name per text, so no connection sees two texts under one name", async () => {
    const both = prepared("test_named_dialects", () => sql<{ id: number }>`SELECT id FROM named_probe WHERE id = ${param("id")}`);
    // SQLite first (a compiler without a database), as a process that opened both would.
    const sqlite = new Kysely<Database>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (k) => new SqliteIntrospector(k),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    });
    await both.run(sqlite, { id: 1 });
    expect(await both.rows(db, postgresOps, { id: 1 })).toEqual([{ id: 1 }]);
    const sqliteName = preparedName("SELECT id FROM named_probe WHERE id = ?");
    const postgresName = preparedName("SELECT id FROM named_probe WHERE id = $1");
    expect(sqliteName).toBe("test_named_dialects");
    expect(postgresName).toBe("test_named_dialects#1");
  });

  it("after a column is added to what a statement reads, the statement fails once as unavailable, then runs with the new column", async () => {
    expect(await inTransaction()).toEqual([{ id: 1, a: "x" }]);
    expect(await PROBE.rows(db, postgresOps, { id: 1 })).toEqual([{ id: 1, a: "x" }]);
    await sql`ALTER TABLE named_probe ADD COLUMN b text NOT NULL DEFAULT 'y'`.execute(db);
    // In a transaction: 503, to be retried (the transaction is lost), and the retry runs.
    const err = await inTransaction().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isPostgresUnavailable(err)).toBe(true);
    for (let i = 0; i < 3; i++) expect(await inTransaction()).toEqual([{ id: 1, a: "x", b: "y" }]);
    // On the pool, a read is run again at once: no failure reaches the caller, on any connection.
    await sql`ALTER TABLE named_probe ADD COLUMN c text NOT NULL DEFAULT 'z'`.execute(db);
    const reads = await Promise.all([1, 2, 3, 4].map(() => PROBE.rows(db, postgresOps, { id: 1 })));
    for (const rows of reads) expect(rows).toEqual([{ id: 1, a: "x", b: "y", c: "z" }]);
  });
});
