/**
 * Migration 025 (attachments) on each SQL engine: a store of the version before opens with the
 * current one, and the items it holds take files (their chunks in rows, as a store without a chunk
 * folder keeps them); and back down, the attachment tables go and the items stay.
 */
import { sql } from "kysely";
import { Migrator } from "kysely/migration";
import { openSqlStore } from "../../lib/store/sql/store";
import { migrationProvider } from "../../lib/store/sql/migrations";
import { MIGRATION_ENGINES, migratedTo } from "../helpers/migration-engines";
import { digest, openFile, ownerWithItem, sealFile } from "../helpers/sealed-files";
import { ATTACHMENT_CHUNK_BYTES } from "../../protocol/formats/attachments";

const BEFORE = "024_passkey_logins";

test.each(MIGRATION_ENGINES)(
  "%s: an item of the version before takes a file after the upgrade; the downgrade drops only the attachments",
  async (_name, make) => {
    const engine = await make();
    try {
      // An account, a vault and an item, as the version before stores them (through the store, then the schema taken back).
      const older = await openSqlStore(engine.open(), engine.ops);
      const p = await ownerWithItem(older);
      await older.close();
      await migratedTo(engine, BEFORE);

      const store = await openSqlStore(engine.open(), engine.ops);
      try {
        expect((await store.items.getItem({ vaultId: p.vaultId, actorId: p.userId, itemId: p.itemId })).itemId).toBe(p.itemId);
        const f = await sealFile(ATTACHMENT_CHUNK_BYTES + 9);
        const on = { vaultId: p.vaultId, actorId: p.userId, attachmentId: f.attachmentId };
        await store.attachments.beginUpload({
          ...on,
          itemId: p.itemId,
          size: f.size,
          limits: { maxFileBytes: 1 << 30, perItem: 5, orgQuotaBytes: 1 << 30 },
          now: new Date().toISOString(),
        });
        for (const [index, data] of f.chunks.entries()) await store.attachments.putChunk({ ...on, index, data });
        await store.attachments.finishUpload({ ...on, now: new Date().toISOString() });
        const sealed = [0, 1].map((index) => store.attachments.readChunk({ ...on, index }));
        expect(digest(await openFile(f, await Promise.all(sealed)))).toBe(digest(f.plain));
        expect(await store.attachments.usage({ orgId: p.orgId })).toEqual({ bytes: f.chunks[0]!.length + f.chunks[1]!.length, files: 1 });
      } finally {
        await store.close();
      }
      const down = engine.open();
      try {
        expect((await new Migrator({ db: down, provider: migrationProvider }).migrateTo(BEFORE)).error).toBeUndefined();
        const items = await sql<{ item_id: string }>`SELECT item_id FROM items`.execute(down);
        expect(items.rows.map((r) => r.item_id)).toEqual([p.itemId]);
        await expect(sql`SELECT 1 FROM attachments`.execute(down)).rejects.toThrow();
        await expect(sql`SELECT 1 FROM attachment_chunks`.execute(down)).rejects.toThrow();
      } finally {
        await down.destroy();
      }
    } finally {
      await engine.drop();
    }
  },
  60_000,
);
