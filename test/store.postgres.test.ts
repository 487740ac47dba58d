import { openSqlStore } from "../lib/store/sql/store";
import { openPostgres, postgresOps } from "../lib/store/sql/postgres";
import type { Store } from "../lib/store/port";
import { describeStoreContract } from "./store.contract";
import { createTestDatabase, type TestDatabase } from "./helpers/postgres";
import { vaultSizeDrift } from "./helpers/vault-sizes";
import type { Kysely } from "kysely";
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
