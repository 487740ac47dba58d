import type { Kysely } from "kysely";

// Signed item logs (protocol/formats/item-log.ts): each link, stored in the transaction of the write it
// describes, keyed by vault and seq (two links can never take one place); the head on the vault
// row, read under the vault's lock: the last link's seq and hash, the seq of the last checkpoint
// or rekey link (where readers start), and the roster seq the last link signed against. A vault
// without an item log has no head (null): every vault of an earlier release.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("item_links")
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("link", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("item_links_pk", ["vault_id", "seq"])
    .execute();
  await db.schema.alterTable("vaults").addColumn("item_seq", "integer").execute();
  await db.schema.alterTable("vaults").addColumn("item_hash", "text").execute();
  await db.schema.alterTable("vaults").addColumn("item_base_seq", "integer").execute();
  await db.schema.alterTable("vaults").addColumn("item_roster_seq", "integer").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ["item_roster_seq", "item_base_seq", "item_hash", "item_seq"])
    await db.schema.alterTable("vaults").dropColumn(column).execute();
  await db.schema.dropTable("item_links").execute();
}
