import type { Kysely } from "kysely";

// Keys the server holds for itself, by name: the audit key's Ed25519 seed (`audit-key`), made by
// the first node that needs it and then the same for every node (lib/domain/audit/log.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("server_keys")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("server_keys").execute();
}
