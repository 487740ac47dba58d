import path from "node:path";
import type { Config } from "../config";
import type { Store } from "./port";
import { openSqlStore } from "./sql/store";
import { openSqlite, sqliteOps } from "./sql/sqlite";
import { ATTACHMENTS_FOLDER } from "./sql/attachment-files";
import { withUnavailableErrors } from "./unavailable";

/**
 * The store the settings ask for: PostgreSQL when DATABASE_URL is set, MongoDB when MONGO_URL is,
 * else the embedded SQLite store under DATA_DIR. `warn` hears about lost connections (never a URL or a secret).
 */
export async function openStore(config: Config, warn: (message: string) => void = () => undefined): Promise<Store> {
  if (config.databaseUrl) {
    // Loaded only when asked for, as MongoDB's below.
    const { isPostgresUnavailable, openPostgres, postgresOps } = await import("./sql/postgres.js");
    const db = openPostgres(config.databaseUrl, { poolSize: config.pgPoolSize, onIdleError: warn });
    try {
      return withUnavailableErrors(await openSqlStore(db, postgresOps), isPostgresUnavailable);
    } catch (err) {
      await db.destroy().catch(() => undefined);
      throw err;
    }
  }
  if (config.mongoUrl) {
    // Loaded only when asked for: the driver adds about 100 ms to every start.
    const [{ openMongoStore }, { isMongoUnavailable }] = await Promise.all([import("./mongo/store.js"), import("./mongo/errors.js")]);
    return withUnavailableErrors(await openMongoStore(config.mongoUrl), isMongoUnavailable);
  }
  return openSqlStore(openSqlite(config.dataDir), sqliteOps, { chunkDir: path.join(config.dataDir, ATTACHMENTS_FOLDER) });
}

export type { Store } from "./port";
