import fs from "node:fs";
import { openSqlStore } from "../../lib/store/sql/store";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import { describeStoreContract } from "./store.contract";
import { tempDir } from "../helpers/server";
import { vaultSizeDrift } from "../helpers/vault-sizes";
import type { Kysely } from "kysely";
import type { Database } from "../../lib/store/sql/schema";

const dirs = new Map<object, string>();
const dbs = new Map<object, Kysely<Database>>();

describeStoreContract(
  "SQL on SQLite (node:sqlite)",
  async () => {
    const dir = tempDir("vault-store-");
    const db = openSqlite(dir);
    const store = await openSqlStore(db, sqliteOps);
    dirs.set(store, dir);
    dbs.set(store, db);
    return store;
  },
  async (store) => {
    // Every vault's kept sizes (migration 017) match its rows after the whole suite's writes.
    expect(await vaultSizeDrift(dbs.get(store)!)).toEqual([]);
    await store.close();
    fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
  },
);
