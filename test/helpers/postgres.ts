/**
 * Throwaway databases on the machine's PostgreSQL server (PG_ADMIN_URL, default the local server
 * with trust auth): each test gets its own, dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>, adminUrl = PG_ADMIN_URL): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new database on the machine's PostgreSQL server, or on another (a throwaway cluster's `postgres` database URL). */
export async function createTestDatabase(adminUrl = PG_ADMIN_URL): Promise<TestDatabase> {
  const name = `vault_test_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`), adminUrl);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    // WITH (FORCE) ends sessions a killed test process may have left behind.
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), adminUrl).then(() => undefined),
  };
}

/** A server's store for a test: its settings, and what to drop afterwards. */
export interface ServerStore {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * The two SQL engines a server can run on, for `describe.each`: SQLite (the embedded default, one
 * connection) and PostgreSQL (a throwaway database, a pool whose transactions run side by side).
 */
export const SQL_ENGINES: Array<[string, () => Promise<ServerStore>]> = [
  ["SQLite", async () => ({ env: {}, drop: async () => undefined })],
  [
    "PostgreSQL",
    async () => {
      const database = await createTestDatabase();
      return { env: { DATABASE_URL: database.url, PG_POOL_SIZE: "10" }, drop: () => database.drop() };
    },
  ],
];
