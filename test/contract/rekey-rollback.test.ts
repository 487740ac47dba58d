/**
 * A rekey that fails in the middle of its batched writes changes nothing, on each SQL engine: the
 * failure is injected by a trigger on one item, in the second batch, after the first was written.
 */
import { newId, type ItemId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import fs from "node:fs";
import { sql, type Kysely } from "kysely";
import { openSqlStore } from "../../lib/store/sql/store";
import type { Store } from "../../lib/store/port";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import { openPostgres, postgresOps } from "../../lib/store/sql/postgres";
import { tempDir } from "../helpers/server";
import { createTestDatabase } from "../helpers/postgres";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "../helpers/crypto";

interface Engine {
  store: Store;
  db: Kysely<any>;
  /** Makes any update of this item fail with "injected failure". */
  failUpdatesOf(itemId: string): Promise<void>;
  heal(): Promise<void>;
  close(): Promise<void>;
}

const engines: Array<[string, () => Promise<Engine>]> = [
  [
    "SQLite",
    async () => {
      const dir = tempDir("vault-store-");
      const db = openSqlite(dir);
      const store = await openSqlStore(db, sqliteOps);
      return {
        store,
        db,
        failUpdatesOf: async (itemId) =>
          void (await sql`CREATE TRIGGER fail_one BEFORE UPDATE ON items WHEN OLD.item_id = ${sql.lit(itemId)}
        BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(db)),
        heal: async () => void (await sql`DROP TRIGGER fail_one`.execute(db)),
        close: async () => {
          await store.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const database = await createTestDatabase();
      const db = openPostgres(database.url, { poolSize: 4 });
      const store = await openSqlStore(db, postgresOps);
      return {
        store,
        db,
        failUpdatesOf: async (itemId) => {
          await sql`CREATE FUNCTION fail_one() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'injected failure'; END $$`.execute(db);
          await sql`CREATE TRIGGER fail_one BEFORE UPDATE ON items FOR EACH ROW WHEN (OLD.item_id = ${sql.lit(itemId)})
          EXECUTE FUNCTION fail_one()`.execute(db);
        },
        heal: async () => void (await sql`DROP TRIGGER fail_one ON items`.execute(db)),
        close: async () => {
          await store.close();
          await database.drop();
        },
      };
    },
  ],
];

test.each(engines)(
  "%s: a rekey that fails in the middle of its batched writes changes nothing",
  async (_name, open) => {
    const engine = await open();
    const { store } = engine;
    try {
      const keys = await newUserKeys();
      const bundle = registrationBundle(keys);
      const now = new Date().toISOString();
      const user = await store.accounts.registerOwnerOfNewOrg({
        user: { ...bundle, userId: newId<UserId>(), email: "o@example.test", authHash: "h", createdAt: now },
        org: { orgId: newId<OrgId>(), name: "o", createdAt: now },
        onlyIfFirstUser: false,
      });
      const wrap = (key: Buffer) => {
        const w = wrapShared(key, bundle.publicKey);
        return { encryptedVaultKey: b64(w), wrapSignature: b64(signWrap(w, keys.edPrivate)) };
      };
      const vault = await store.vaults.createVault({
        vault: {
          vaultId: newId<VaultId>(),
          orgId: user.orgId,
          name: "v",
          type: "shared",
          ownerId: user.userId,
          ...wrap(Buffer.alloc(32, 1)),
        },
        now,
      });
      const ids = Array.from({ length: 1000 }, () => newId<ItemId>());
      for (const id of ids)
        await store.items.createItem({
          vaultId: vault.vaultId,
          actorId: user.userId,
          itemId: id,
          write: { encryptedData: "T0xE", encryptedName: "T0xE" },
          limits: { maxBytes: 1 << 30, maxItems: 1_000_000 },
          now,
        });
      const before = await store.items.listItems({ vaultId: vault.vaultId, actorId: user.userId });

      // The 700th item's update fails inside the second batch (of 500 rows), after the first batch was written.
      await engine.failUpdatesOf(ids[699]!);
      const input = {
        newKeys: [{ userId: user.userId, ...wrap(Buffer.alloc(32, 2)) }],
        items: ids.map((itemId) => ({ itemId, encryptedData: "TkVX", encryptedName: "TkVX" })),
      };
      await expect(
        store.vaults.rekeyVault({ vaultId: vault.vaultId, actorId: user.userId, rekey: input, now: new Date().toISOString() }),
      ).rejects.toThrow(/injected failure/);

      expect(await store.items.listItems({ vaultId: vault.vaultId, actorId: user.userId })).toEqual(before);
      expect(await store.vaults.getVault({ vaultId: vault.vaultId, userId: user.userId })).toEqual(vault);

      await engine.heal();
      await store.vaults.rekeyVault({ vaultId: vault.vaultId, actorId: user.userId, rekey: input, now: new Date().toISOString() });
      expect(
        (await store.items.listItems({ vaultId: vault.vaultId, actorId: user.userId }))!.every(
          (i) => i.encryptedData === "TkVX" && i.keyVersion === 2,
        ),
      ).toBe(true);
    } finally {
      await engine.close();
    }
  },
  60_000,
);
