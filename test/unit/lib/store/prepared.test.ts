/**
 * Statements compiled once and bound by name (lib/store/sql/prepared.ts), on both SQL engines:
 * a value goes where its name stands whatever order the placeholders were compiled in, a value
 * that looks like a stand-in is stored as data, a missing one fails before the database is asked.
 */
import fs from "node:fs";
import type { Kysely } from "kysely";
import { openSqlStore } from "../../../../lib/store/sql/store";
import { openSqlite, sqliteOps } from "../../../../lib/store/sql/sqlite";
import { openPostgres, postgresOps } from "../../../../lib/store/sql/postgres";
import { param, prepared } from "../../../../lib/store/sql/prepared";
import type { EngineOps } from "../../../../lib/store/sql/context";
import type { Database } from "../../../../lib/store/sql/schema";
import type { Store } from "../../../../lib/store/port";
import { createTestDatabase } from "../../../helpers/postgres";
import { tempDir } from "../../../helpers/server";

// The columns named in an order other than the one the WHERE clause and the values take them in.
const PUT = prepared("test_put", (db) =>
  db.insertInto("server_keys").values({ created_at: param("at"), value: param("value"), name: param("name") }),
);
const GET = prepared("test_get", (db) =>
  db
    .selectFrom("server_keys")
    .select(["name", "value", "created_at"])
    .where("value", "=", param<string>("value"))
    .where("name", "=", param<string>("name")),
);

const engines: Array<[string, () => Promise<{ db: Kysely<Database>; engine: EngineOps; store: Store; done: () => Promise<void> }>]> = [
  [
    "SQLite",
    async () => {
      const dir = tempDir("vault-prepared-");
      const db = openSqlite(dir);
      const store = await openSqlStore(db, sqliteOps);
      return { db, engine: sqliteOps, store, done: async () => (await store.close(), fs.rmSync(dir, { recursive: true, force: true })) };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const database = await createTestDatabase();
      const db = openPostgres(database.url, { poolSize: 2 });
      const store = await openSqlStore(db, postgresOps);
      return { db, engine: postgresOps, store, done: async () => (await store.close(), await database.drop()) };
    },
  ],
];

describe.each(engines)("prepared statements on %s", (_name, open) => {
  let t: Awaited<ReturnType<typeof open>>;
  beforeAll(async () => void (t = await open()));
  afterAll(async () => t?.done());

  test("values are bound by name, in a transaction and on the pool, each statement compiled once", async () => {
    await t.db.transaction().execute(async (trx) => {
      await PUT.run(trx, { name: "test:a", value: "1", at: "2026-01-01T00:00:00.000Z" });
      await PUT.run(trx, { value: "2", at: "2026-01-02T00:00:00.000Z", name: "test:b" });
    });
    expect(await GET.rows(t.db, t.engine, { name: "test:b", value: "2" })).toEqual([
      { name: "test:b", value: "2", created_at: "2026-01-02T00:00:00.000Z" },
    ]);
    expect((await GET.run(t.db, { name: "test:a", value: "1" })).rows).toEqual([
      { name: "test:a", value: "1", created_at: "2026-01-01T00:00:00.000Z" },
    ]);
    // The wrong pair finds nothing: the two values are not swapped into each other's place.
    expect(await GET.rows(t.db, t.engine, { name: "1", value: "test:a" })).toEqual([]);
    // Built and compiled at its first use on this database, not again.
    let builds = 0;
    const counted = prepared(
      `test_counted_${t.engine.name}`,
      (db) => (builds++, db.selectFrom("server_keys").select("name").where("name", "=", param<string>("name"))),
    );
    for (let i = 0; i < 3; i++) await counted.run(t.db, { name: "test:a" });
    await t.db.transaction().execute((trx) => counted.run(trx, { name: "test:a" }));
    expect(await counted.rows(t.db, t.engine, { name: "test:a" })).toEqual([{ name: "test:a" }]);
    expect(builds).toBe(1);
  });

  test("a value that looks like a stand-in is data, nothing else", async () => {
    const sly = "\u0000prepared:name";
    if (t.engine.name === "postgres") {
      // PostgreSQL's text holds no NUL: no value can even look like a stand-in there.
      await expect(PUT.run(t.db, { name: "test:sly", value: sly, at: "2026-01-03T00:00:00.000Z" })).rejects.toThrow("0x00");
      return;
    }
    await PUT.run(t.db, { name: "test:sly", value: sly, at: "2026-01-03T00:00:00.000Z" });
    expect((await GET.run(t.db, { name: "test:sly", value: sly })).rows).toEqual([
      { name: "test:sly", value: sly, created_at: "2026-01-03T00:00:00.000Z" },
    ]);
    expect((await GET.run(t.db, { name: sly, value: sly })).rows).toEqual([]);
  });

  test("two statements of one name are refused where they are made (PostgreSQL keeps one statement per name on a connection)", () => {
    expect(() => prepared("test_get", (db) => db.selectFrom("server_keys").select("value"))).toThrow("a second statement named test_get");
  });

  test("a statement built with a captured string (not a param) is refused at its first use: it would be bound for ever", async () => {
    const captured = prepared(`test_captured_${t.engine.name}`, (db) =>
      db.selectFrom("server_keys").select("name").where("name", "=", "test:a"),
    );
    await expect(captured.run(t.db, {})).rejects.toThrow("neither a param nor a number");
  });

  test("a missing value fails before the database is asked", async () => {
    await expect(PUT.run(t.db, { name: "test:c", at: "2026-01-04T00:00:00.000Z" })).rejects.toThrow("no value for value");
    expect((await GET.run(t.db, { name: "test:c", value: "x" })).rows).toEqual([]);
  });
});
