import { openSqlStore } from "../../lib/store/sql/store";
import { isPostgresUnavailable, openPostgres, postgresOps } from "../../lib/store/sql/postgres";
import { param, prepared, preparedName } from "../../lib/store/sql/prepared";
import { Kysely, sql, SqliteAdapter } from "../../lib/store/sql/kysely";
import { DummyDriver, SqliteIntrospector, SqliteQueryCompiler } from "kysely";
import type { Store } from "../../lib/store/port";
import { describeStoreContract } from "./store.contract";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres";
import { vaultSizeDrift } from "../helpers/vault-sizes";
import type { Database } from "../../lib/store/sql/schema";
import pg from "pg";
import { newId, type ItemId, type UserId } from "../../lib/domain/ids";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "../helpers/crypto";
import { eventually } from "../helpers/wait";

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
 * transaction as on the pool: parsed and planned once per connection. And a schema
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

/**
 * A group of creates (lib/store/sql/items.ts, createGroup) that fails for a reason no one create
 * caused, here its connection cut while it waits for the vault's lock, answers every create with
 * that failure at once: it does not run each again, one after the other, into the same wait.
 */
describe("a group of creates on PostgreSQL", () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = openPostgres(database.url, { poolSize: 10 });
    store = await openSqlStore(db, postgresOps);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it("cut off while it waits for the vault's lock, every create of the group fails as unavailable at once, and none is stored", async () => {
    const keys = await newUserKeys();
    const user = {
      ...registrationBundle(keys),
      userId: newId<UserId>(),
      email: `${newId()}@example.test`,
      authHash: "scrypt$stored",
      createdAt: new Date().toISOString(),
    };
    const { userId, orgId } = await store.accounts.registerOwnerOfNewOrg({
      user,
      org: { orgId: newId(), name: "Org", createdAt: new Date().toISOString() },
      onlyIfFirstUser: false,
    });
    const wrapped = wrapShared(Buffer.alloc(32, 7), user.publicKey);
    const wrap = { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, keys.edPrivate)) };
    const { vaultId } = await store.vaults.createVault({
      vault: { vaultId: newId(), orgId, name: "v", type: "shared", ownerId: userId, ...wrap },
      now: new Date().toISOString(),
    });
    // Another session holds the vault's row lock.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM vaults WHERE vault_id = $1 FOR UPDATE", [vaultId]);
      const create = () =>
        store.items.createItem({
          vaultId,
          actorId: userId,
          itemId: newId<ItemId>(),
          write: { encryptedData: "AAAA", encryptedName: "BBBB" },
          limits: { maxItems: 1000, maxBytes: 1 << 20 },
          now: new Date().toISOString(),
        });
      // The first waits for the lock alone; the four after it wait as one group, behind it.
      const outcomes = Promise.allSettled(Array.from({ length: 5 }, create));
      const waiting = async () =>
        (
          await holder.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'vault-service' AND wait_event_type = 'Lock' AND datname = current_database()",
          )
        ).rows;
      await eventually("the lone create waits for the lock", async () => (await waiting()).length === 1);
      const lone = (await waiting())[0]!.pid;
      await holder.query("SELECT pg_terminate_backend($1)", [lone]);
      await eventually("the group waits for the lock", async () => (await waiting()).some((w) => w.pid !== lone));
      const group = (await waiting()).find((w) => w.pid !== lone)!.pid;
      await holder.query("SELECT pg_terminate_backend($1)", [group]);
      // The lock is still held: a create run again would wait for it, and the answers would not come.
      const settled = await Promise.race([outcomes, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), 5_000))]);
      expect(
        settled === "still waiting" ? settled : settled.map((o) => o.status === "rejected" && isPostgresUnavailable(o.reason)),
      ).toEqual([true, true, true, true, true]);
      // No create waits for the lock again (a terminated backend may still be listed while it exits).
      expect((await waiting()).filter((w) => w.pid !== lone && w.pid !== group)).toEqual([]);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    expect(await store.items.listItems({ vaultId, actorId: userId })).toEqual([]);
  });
});
