/**
 * The store's own item race (`itemChangedMeanwhile`), on the SQL adapter on both engines. An
 * update reads the item under its vault's lock and writes it only while the row is still at the
 * revision it read (`writeItemAt`, lib/store/sql/item-rows.ts). Through the port the lock keeps
 * every other writer out (SQLite runs one transaction at a time; on PostgreSQL every writer of an
 * item's row locks its vault first), so the race cannot be provoked there: it is provoked at the
 * conditional write itself, by writers that read without the lock.
 */
import fs from "node:fs";
import { newId, type ItemId, type UserId, type VaultId } from "../../lib/domain/ids";
import { itemChangedMeanwhile } from "../../lib/domain/items/refusals";
import type { AppError } from "../../lib/errors";
import type { Store } from "../../lib/store/port";
import type { Db, EngineOps } from "../../lib/store/sql/context";
import { itemRow, writeItemAt } from "../../lib/store/sql/item-rows";
import { sql, type Kysely } from "../../lib/store/sql/kysely";
import { openPostgres, postgresOps } from "../../lib/store/sql/postgres";
import type { Database, ItemsTable } from "../../lib/store/sql/schema";
import { openSqlite, sqliteOps } from "../../lib/store/sql/sqlite";
import { openSqlStore } from "../../lib/store/sql/store";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared } from "../helpers/crypto";
import { createTestDatabase } from "../helpers/postgres";
import { asRefusal } from "../helpers/refusal";
import { tempDir } from "../helpers/server";
import { eventually } from "../helpers/wait";

const ROOMY = { maxBytes: 1 << 30, maxItems: 1_000_000 };
const at = () => new Date().toISOString();

interface Engine {
  db: Kysely<Database>;
  ops: EngineOps;
  close(): Promise<void>;
}

const ENGINES: Array<[string, () => Promise<Engine>]> = [
  [
    "SQLite",
    async () => {
      const dir = tempDir("vault-item-race-");
      const db = openSqlite(dir);
      return { db, ops: sqliteOps, close: async () => fs.rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const database = await createTestDatabase();
      return { db: openPostgres(database.url, { poolSize: 4 }), ops: postgresOps, close: () => database.drop() };
    },
  ],
];

/** What a write does: "ok", or the refusal it was given, in `asRefusal`'s terms. */
const outcome = (write: Promise<unknown>) =>
  write.then(
    () => "ok",
    (err: unknown) => asRefusal(err as AppError),
  );

/** The row a write of `text` over `read` would leave: the next revision. */
const nextOf = (read: ItemsTable, text: string): ItemsTable => ({
  ...read,
  encrypted_data: text,
  encrypted_name: text,
  revision: Number(read.revision) + 1,
  updated_at: at(),
});

describe.each(ENGINES)("the store's own item race on %s", (engine, openEngine) => {
  let e: Engine;
  let store: Store;
  let ownerId: UserId;
  let vaultId: VaultId;

  /** A transaction as the store runs one on this engine. */
  const tx = <T>(fn: (trx: Db) => Promise<T>) => e.ops.durably(e.db, () => e.db.transaction().execute(fn));
  const rowOf = async (itemId: ItemId) => (await itemRow(e.db, vaultId, itemId))!;

  async function newItem(): Promise<ItemId> {
    const item = await store.items.createItem({
      vaultId,
      actorId: ownerId,
      itemId: newId(),
      write: { encryptedData: "AAAA", encryptedName: "AAAA" },
      limits: ROOMY,
      now: at(),
    });
    return item.itemId;
  }

  beforeAll(async () => {
    e = await openEngine();
    store = await openSqlStore(e.db, e.ops);
    const keys = await newUserKeys();
    const user = {
      ...registrationBundle(keys),
      userId: newId<UserId>(),
      email: `${newId()}@example.test`,
      authHash: "scrypt$x",
      createdAt: at(),
    };
    const owner = await store.accounts.registerOwnerOfNewOrg({
      user,
      org: { orgId: newId(), name: "Org", createdAt: at() },
      onlyIfFirstUser: true,
    });
    ownerId = owner.userId;
    const wrapped = wrapShared(Buffer.alloc(32, 7), user.publicKey);
    const vault = await store.vaults.createVault({
      vault: {
        vaultId: newId(),
        orgId: owner.orgId,
        name: "v",
        type: "shared",
        ownerId,
        encryptedVaultKey: b64(wrapped),
        wrapSignature: b64(signWrap(wrapped, keys.edPrivate)),
      },
      now: at(),
    });
    vaultId = vault.vaultId;
  });
  afterAll(async () => {
    await store.close();
    await e.close();
  });

  test("a write over a revision another write has moved on is refused by name, and the other write stands", async () => {
    const itemId = await newItem();
    const read = await rowOf(itemId);
    // Another update lands, through the port, between this read and its write.
    await store.items.updateItem({
      vaultId,
      actorId: ownerId,
      itemId,
      write: { encryptedData: "BBBB", encryptedName: "BBBB" },
      limits: ROOMY,
      now: at(),
    });
    expect(await outcome(tx((trx) => writeItemAt(trx, read, nextOf(read, "CCCC"))))).toEqual(asRefusal(itemChangedMeanwhile()));
    expect(await rowOf(itemId)).toMatchObject({ revision: 2, encrypted_data: "BBBB" });
    // The same write over the revision the row is at goes through.
    const current = await rowOf(itemId);
    expect(await outcome(tx((trx) => writeItemAt(trx, current, nextOf(current, "CCCC"))))).toBe("ok");
    expect(await rowOf(itemId)).toMatchObject({ revision: 3, encrypted_data: "CCCC" });
  });

  // Two transactions side by side need a pool: SQLite's one connection runs one after the other.
  if (engine === "PostgreSQL")
    test("two transactions at once that read the same revision: the second waits on the row, then finds it moved (real concurrency)", async () => {
      const itemId = await newItem();
      const gate = () => {
        let open!: () => void;
        const opened = new Promise<void>((resolve) => (open = resolve));
        return { open, opened };
      };
      const [bothRead, firstWrote, commitFirst] = [gate(), gate(), gate()];
      let reads = 0;
      const readInside = async (trx: Db) => {
        const row = (await itemRow(trx, vaultId, itemId))!;
        if (++reads === 2) bothRead.open();
        await bothRead.opened;
        return row;
      };
      const first = tx(async (trx) => {
        const read = await readInside(trx);
        await writeItemAt(trx, read, nextOf(read, "FIRST"));
        firstWrote.open();
        await commitFirst.opened;
      });
      const second = outcome(
        tx(async (trx) => {
          const read = await readInside(trx);
          await firstWrote.opened;
          await writeItemAt(trx, read, nextOf(read, "SECOND"));
        }),
      );
      // The second write waits on the row the first holds; then the first commits.
      await eventually("the second write waiting on the item's row", async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(e.db);
        return rows[0]!.n > 0;
      });
      commitFirst.open();
      await first;
      expect(await second).toEqual(asRefusal(itemChangedMeanwhile()));
      expect(await rowOf(itemId)).toMatchObject({ revision: 2, encrypted_data: "FIRST" });
    });
});
