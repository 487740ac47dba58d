/**
 * The SQL engines a migration test runs on, for `test.each`: each a new, empty database (SQLite in a
 * temporary folder, PostgreSQL a throwaway database) opened as often as the test needs, with its
 * engine's operations and what to drop afterwards; and a step to bring one to an older version's schema.
 */
import fs from "node:fs";
import type { Kysely } from "kysely";
import { Migrator } from "kysely/migration";
import type { EngineOps } from "../../lib/store/sql/context";
import { migrationProvider } from "../../lib/store/sql/migrations";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import { openPostgres, postgresOps } from "../../lib/store/sql/postgres";
import type { Database } from "../../lib/store/sql/schema";
import { tempDir } from "./temp";
import { createTestDatabase } from "./postgres";

export interface MigrationEngine {
  /** A new connection to the engine's database (each to be destroyed or closed by its user). */
  open(): Kysely<Database>;
  ops: EngineOps;
  drop(): Promise<void>;
}

export const MIGRATION_ENGINES: Array<[string, () => Promise<MigrationEngine>]> = [
  [
    "SQLite",
    async () => {
      const dir = tempDir("vault-migrate-");
      return { open: () => openSqlite(dir), ops: sqliteOps, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const database = await createTestDatabase();
      return { open: () => openPostgres(database.url, { poolSize: 2 }), ops: postgresOps, drop: () => database.drop() };
    },
  ],
];

/** Brings the engine's store to the schema of migration `name` (up from a new store, or down from a later one), and closes it. */
export async function migratedTo(engine: Pick<MigrationEngine, "open">, name: string): Promise<void> {
  const db = engine.open();
  try {
    expect((await new Migrator({ db, provider: migrationProvider }).migrateTo(name)).error).toBeUndefined();
  } finally {
    await db.destroy();
  }
}
