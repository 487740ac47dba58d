import { PostgresAdapter, sql, type Kysely } from "../kysely";

// Sends (lib/domain/sends/decisions.ts): a text or a file shared by link, sealed on the client.
// `sends` holds what the server keeps of each (whose, its organization for the quota and policy,
// its size and part count, its views, its expiry, the hash of its link's access proof, a slow hash
// of its password's proof, the owner's
// sealed note); `send_parts` one row per sealed part, its bytes in `data` on both engines: a send
// lives days within its organization's quota, and its delete takes its bytes in one transaction.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("sends")
    .addColumn("send_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("owner_id", "text", (c) => c.notNull())
    .addColumn("parts", "integer", (c) => c.notNull())
    .addColumn("bytes", "bigint", (c) => c.notNull())
    .addColumn("max_views", "integer")
    .addColumn("views", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("access_hash", "text", (c) => c.notNull())
    .addColumn("password_hash", "text")
    .addColumn("owner_note", "text", (c) => c.notNull())
    .addColumn("complete", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("parts_gone_at", "text")
    .execute();
  // A member's sends; an organization's usage; the sweeper's expired and unfinished ones.
  await db.schema.createIndex("sends_owner_idx").on("sends").columns(["owner_id", "created_at"]).execute();
  await db.schema.createIndex("sends_org_idx").on("sends").column("org_id").execute();
  await db.schema.createIndex("sends_expiry_idx").on("sends").column("expires_at").execute();
  await db.schema.createIndex("sends_gone_idx").on("sends").column("parts_gone_at").execute();
  await db.schema
    .createTable("send_parts")
    .addColumn("send_id", "text", (c) => c.notNull().references("sends.send_id").onDelete("cascade"))
    .addColumn("idx", "integer", (c) => c.notNull())
    .addColumn("sealed_bytes", "integer", (c) => c.notNull())
    .addColumn("data", postgres ? "bytea" : "blob", (c) => c.notNull())
    .addPrimaryKeyConstraint("send_parts_pk", ["send_id", "idx"])
    .execute();
  if (postgres) await sql`ALTER TABLE send_parts ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("send_parts").execute();
  await db.schema.dropTable("sends").execute();
}
