import type { Kysely } from "kysely";

// Each user's key log (protocol/formats/key-log.ts, lib/domain/accounts/key-rotation.ts): the entries of their key
// bundles, from version 1 (written at their first rotation, from the keys they registered with).
// An account that never rotated has no rows: its log is its registered keys, served as entry 1.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("key_log")
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id"))
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("entry", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("key_log_pk", ["user_id", "version"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("key_log").execute();
}
