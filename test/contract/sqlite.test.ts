import fs from "node:fs";
import path from "node:path";
import { openSqlStore } from "../../lib/store/sql/store";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import { describeStoreContract } from "./store.contract";
import { attachmentChunkDirs } from "./attachments.contract";
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
    // As the server opens it: attachment chunks are files under DATA_DIR/attachments.
    const chunkDir = path.join(dir, "attachments");
    const store = await openSqlStore(db, sqliteOps, { chunkDir });
    attachmentChunkDirs.set(store, chunkDir);
    dirs.set(store, dir);
    dbs.set(store, db);
    return store;
  },
  async (store) => {
    // Every vault's kept sizes (migration 017) match its rows after the whole suite's writes.
    expect(await vaultSizeDrift(dbs.get(store)!)).toEqual([]);
    // Every chunk folder left is an attachment's that is still there: none of a deleted one stays behind.
    const rows = await dbs.get(store)!.selectFrom("attachments").select("attachment_id").execute();
    const folders = fs.readdirSync(attachmentChunkDirs.get(store)!).filter((name) => !name.startsWith("."));
    expect(folders.filter((name) => !rows.some((r) => r.attachment_id === name))).toEqual([]);
    await store.close();
    fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
  },
);
