import type { Kysely } from "kysely";

// Delta reads (lib/domain/items/changes.ts). `vaults.change_seq`: the vault's last change number;
// `vaults.reset_seq`: the number of its last reset (a rekey). `item_changes`: per item, the number
// of its last change (an item no longer in `items` is a tombstone). Vaults of earlier releases
// start at a reset, numbered 1 (the columns' default), with no change records: a client's first
// delta read of one is a full read. So is one of a vault that a node of an earlier release creates
// during a rolling upgrade; this release creates vaults at 0.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("vaults")
    .addColumn("change_seq", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable("vaults")
    .addColumn("reset_seq", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createTable("item_changes")
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("item_id", "text", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("item_changes_pk", ["vault_id", "item_id"])
    .execute();
  await db.schema.createIndex("item_changes_by_seq").on("item_changes").columns(["vault_id", "seq"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("item_changes").execute();
  await db.schema.alterTable("vaults").dropColumn("reset_seq").execute();
  await db.schema.alterTable("vaults").dropColumn("change_seq").execute();
}
