import type { Kysely } from "kysely";

// Signed vault rosters (protocol/formats/roster.ts): each link, stored with the change it describes, keyed by
// vault and seq (so two links can never take one place in a chain); the head on the vault row,
// read under the vault's lock. A vault without a roster has no head (null).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("roster_links")
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("link", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("roster_links_pk", ["vault_id", "seq"])
    .execute();
  await db.schema.alterTable("vaults").addColumn("roster_seq", "integer").execute();
  await db.schema.alterTable("vaults").addColumn("roster_hash", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("vaults").dropColumn("roster_hash").execute();
  await db.schema.alterTable("vaults").dropColumn("roster_seq").execute();
  await db.schema.dropTable("roster_links").execute();
}
