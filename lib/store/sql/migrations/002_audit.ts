import type { Kysely } from "kysely";

// The audit log (lib/domain/audit/log.ts): records keyed by organization and seq, each event id once;
// one head row per organization, the lock that appends take and the end verification checks.
// Indexes for the sweeper's purge of expired invites and refresh tokens.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("audit_events")
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull().unique())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("actor_id", "text", (c) => c.notNull())
    .addColumn("vault_id", "text")
    .addColumn("item_id", "text")
    .addColumn("target_user_id", "text")
    .addColumn("invite_id", "text")
    .addColumn("prev_hash", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("audit_events_pk", ["org_id", "seq"])
    .execute();

  await db.schema
    .createTable("audit_heads")
    .addColumn("org_id", "text", (c) => c.primaryKey())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .execute();

  await db.schema.createIndex("invites_expiry_idx").on("invites").column("expires_at").execute();
  await db.schema.createIndex("refresh_tokens_expiry_idx").on("refresh_tokens").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("refresh_tokens_expiry_idx").execute();
  await db.schema.dropIndex("invites_expiry_idx").execute();
  await db.schema.dropTable("audit_heads").execute();
  await db.schema.dropTable("audit_events").execute();
}
