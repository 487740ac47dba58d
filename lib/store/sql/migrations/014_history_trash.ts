import type { Kysely } from "kysely";

// Item history and the trash (lib/domain/items/history.ts). `item_revisions`: the revisions updates
// replaced, per item (read by item, and oldest first when a write needs the room). `item_trash`:
// deleted items as they were, by id, until restored or purged (the sweeper purges those deleted
// before TRASH_RETENTION, by `deleted_at`). Vaults of earlier releases start with neither.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("item_revisions")
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("item_id", "text", (c) => c.notNull())
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("encrypted_data", "text", (c) => c.notNull())
    .addColumn("encrypted_name", "text", (c) => c.notNull())
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("replaced_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("item_revisions_pk", ["vault_id", "item_id", "revision"])
    .execute();
  await db.schema.createIndex("item_revisions_by_age").on("item_revisions").columns(["vault_id", "replaced_at"]).execute();
  await db.schema
    .createTable("item_trash")
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("item_id", "text", (c) => c.notNull())
    .addColumn("encrypted_data", "text", (c) => c.notNull())
    .addColumn("encrypted_name", "text", (c) => c.notNull())
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("deleted_at", "text", (c) => c.notNull())
    .addColumn("deleted_by", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("item_trash_pk", ["vault_id", "item_id"])
    .execute();
  await db.schema.createIndex("item_trash_by_age").on("item_trash").column("deleted_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("item_trash").execute();
  await db.schema.dropTable("item_revisions").execute();
}
