import fs from "node:fs";
import { openSqlStore } from "../lib/store/sql/store";
import { openSqlite, sqliteOps } from "../lib/store/sql/sqlite";
import { describeStoreContract } from "./store.contract";
import { tempDir } from "./helpers/server";

const dirs = new Map<object, string>();

describeStoreContract(
  "SQL on SQLite (node:sqlite)",
  async () => {
    const dir = tempDir("vault-store-");
    const store = await openSqlStore(openSqlite(dir), sqliteOps);
    dirs.set(store, dir);
    return store;
  },
  async (store) => {
    await store.close();
    fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
  },
);
