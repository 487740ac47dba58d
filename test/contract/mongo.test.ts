/**
 * The store contract on MongoDB. It needs a replica set (transactions, snapshot reads: MongoDB 5.0
 * or newer) at MONGO_URL, e.g. the docker-compose `mongo` service with its port published
 * (`ports: ["27017:27017"]`): `docker compose up -d mongo`, then
 * `MONGO_URL='mongodb://127.0.0.1:27017/?directConnection=true' npm test`. A direct connection,
 * because the set's only member calls itself `mongo:27017`, a name known only inside the compose
 * network: with `?replicaSet=rs0` the driver would go looking for that host and time out.
 * No MongoDB server can be installed on the machines this was written on, so jest.config.js
 * leaves this file out when MONGO_URL is unset, and the summary line says it was not run.
 */
import { randomUUID } from "node:crypto";
import { MongoClient } from "mongodb";
import { openMongoStore } from "../../lib/store/mongo/store";
import type { Store } from "../../lib/store/port";
import { describeStoreContract } from "./store.contract";

const url = process.env.MONGO_URL;
if (!url) throw new Error("store.mongo.test.ts needs MONGO_URL (jest.config.js runs it only when it is set)");

// A database per run: the contract starts from an empty store (its first user is the first of the server).
const dbName = `vault_test_${randomUUID().replace(/-/g, "").slice(0, 12)}`;

describeStoreContract(
  "MongoDB (replica set at MONGO_URL)",
  () => openMongoStore(url, { dbName }),
  async (store: Store) => {
    await store.close();
    const client = await new MongoClient(url).connect();
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
  },
);
