/**
 * The embedded engine: SQLite through node:sqlite, behind Kysely's SqliteDialect.
 * WAL with synchronous=FULL: a committed transaction survives power loss.
 */
import fs from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from "kysely";
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

export function openSqlite(dataDir: string): Kysely<Database> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, "vault.sqlite");
  const db = new DatabaseSync(file);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: new NodeSqlite(db) }) });
}
