import { openSqlStore } from "../lib/store/sql/store";
import { openPostgres, postgresOps } from "../lib/store/sql/postgres";
import type { Store } from "../lib/store/port";
import { describeStoreContract } from "./store.contract";
import { createTestDatabase, type TestDatabase } from "./helpers/postgres";

const databases = new Map<Store, TestDatabase>();

describeStoreContract(
  "SQL on PostgreSQL (pg)",
  async () => {
    const database = await createTestDatabase();
    const store = await openSqlStore(openPostgres(database.url, { poolSize: 10 }), postgresOps);
    databases.set(store, database);
    return store;
  },
  async (store) => {
    await store.close();
    await databases.get(store)!.drop();
  },
);
