import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { SqlStore, sqliteOps } from "../lib/store/sql/adapter";
import { openSqlite } from "../lib/store/sql/sqlite";
import { describeStoreContract } from "./store.contract";
import { tempDir } from "./helpers/server";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "./helpers/crypto";

const dirs = new Map<object, string>();

describeStoreContract("SQL on SQLite (node:sqlite)", async () => {
  const dir = tempDir("vault-store-");
  const store = await SqlStore.open(openSqlite(dir), sqliteOps);
  dirs.set(store, dir);
  return store;
}, async (store) => {
  await store.close();
  fs.rmSync(dirs.get(store)!, { recursive: true, force: true });
});

test("a rekey that fails in the middle of its batched writes changes nothing", async () => {
  const dir = tempDir("vault-store-");
  const db = openSqlite(dir);
  const store = await SqlStore.open(db, sqliteOps);
  try {
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const now = new Date().toISOString();
    const user = await store.registerOwnerOfNewOrg({ ...bundle, userId: randomUUID(), email: "o@example.test", authHash: "h", createdAt: now },
      { orgId: randomUUID(), name: "o", createdAt: now }, { onlyIfFirstUser: false });
    const wrap = (key: Buffer) => {
      const w = wrapShared(key, bundle.publicKey);
      return { encryptedVaultKey: b64(w), wrapSignature: b64(signWrap(w, keys.edPrivate)) };
    };
    const vault = await store.createVault({ vaultId: randomUUID(), orgId: user.orgId, name: "v", type: "shared", ownerId: user.userId, ...wrap(Buffer.alloc(32, 1)) }, now);
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    for (const id of ids) await store.createItem(vault.vaultId, user.userId, id, { encryptedData: "T0xE", encryptedName: "T0xE" }, now);
    const before = await store.listItems(vault.vaultId, user.userId);

    // The 700th item's update fails inside the second batch, after the first batch was written.
    await sql`CREATE TRIGGER fail_one BEFORE UPDATE ON items WHEN OLD.item_id = ${sql.lit(ids[699]!)}
      BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(db);
    const input = { newKeys: [{ userId: user.userId, ...wrap(Buffer.alloc(32, 2)) }], items: ids.map((itemId) => ({ itemId, encryptedData: "TkVX", encryptedName: "TkVX" })) };
    await expect(store.rekeyVault(vault.vaultId, user.userId, input, new Date().toISOString())).rejects.toThrow(/injected failure/);

    expect(await store.listItems(vault.vaultId, user.userId)).toEqual(before);
    expect(await store.getVault(vault.vaultId, user.userId)).toEqual(vault);

    await sql`DROP TRIGGER fail_one`.execute(db);
    await store.rekeyVault(vault.vaultId, user.userId, input, new Date().toISOString());
    expect((await store.listItems(vault.vaultId, user.userId))!.every((i) => i.encryptedData === "TkVX" && i.keyVersion === 2)).toBe(true);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
