import type { Kysely } from "kysely";

// Remembered devices (lib/domain/accounts/remembered-devices.ts): a second step's token, stored as
// its hash, that stands in for the second factor at the account's next logins from one device.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("remembered_devices")
    .addColumn("device_id", "text", (c) => c.primaryKey())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id"))
    .addColumn("device_name", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_used_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("remembered_devices_user_idx").on("remembered_devices").column("user_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("remembered_devices").execute();
}
