import { PostgresAdapter, sql, type Kysely } from "../kysely";

// Attachments (lib/domain/attachments/decisions.ts): files on items, sealed on the client in chunks.
// `attachments` holds what the server keeps of each (its item, its organization for the quota, its
// size, who began the upload, whether it is whole); `attachment_chunks` one row per chunk that
// arrived, its bytes in `data` on PostgreSQL, and null for the embedded store, which keeps them in
// files of their own under DATA_DIR (lib/store/sql/attachment-files.ts).
//
// The vault is referenced without a cascade: a vault is deleted only after its attachments are
// (lib/store/sql/attachments.ts, `txDroppingAttachments`), whose files must go too; one forgotten
// fails the delete instead of leaving files behind. A chunk goes with its attachment.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("attachments")
    .addColumn("attachment_id", "text", (c) => c.primaryKey())
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id"))
    .addColumn("item_id", "text", (c) => c.notNull())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("size", "bigint", (c) => c.notNull())
    .addColumn("chunk_count", "integer", (c) => c.notNull())
    .addColumn("sealed_bytes", "bigint", (c) => c.notNull())
    .addColumn("complete", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("uploaded_by", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("completed_at", "text")
    .execute();
  // An item's files; an organization's usage; the sweeper's unfinished uploads, oldest first.
  await db.schema.createIndex("attachments_item_idx").on("attachments").columns(["vault_id", "item_id"]).execute();
  await db.schema.createIndex("attachments_org_idx").on("attachments").column("org_id").execute();
  await db.schema.createIndex("attachments_pending_idx").on("attachments").columns(["complete", "created_at"]).execute();
  await db.schema
    .createTable("attachment_chunks")
    .addColumn("attachment_id", "text", (c) => c.notNull().references("attachments.attachment_id").onDelete("cascade"))
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("sealed_bytes", "integer", (c) => c.notNull())
    .addColumn("data", postgres ? "bytea" : "blob")
    .addPrimaryKeyConstraint("attachment_chunks_pk", ["attachment_id", "idx"])
    .execute();
  // Sealed bytes do not compress: stored out of line as they are, without an attempt at it.
  if (postgres) await sql`ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("attachment_chunks").execute();
  await db.schema.dropTable("attachments").execute();
}
