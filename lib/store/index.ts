import type { Config } from "../config";
import type { Store } from "./port";
import { SqlStore, sqliteOps } from "./sql/adapter";
import { openSqlite } from "./sql/sqlite";

/** The store the settings ask for: the embedded SQLite store under DATA_DIR by default. */
export async function openStore(config: Config): Promise<Store> {
  return SqlStore.open(openSqlite(config.dataDir), sqliteOps);
}

export type { Store } from "./port";
