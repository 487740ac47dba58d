import type { Kysely } from "../kysely";

// Emergency access (lib/domain/emergency/decisions.ts): one row per grant, from its grantor to one
// grantee, holding the account's stretched key wrapped to the grantee (opaque to the server), the
// grantor's signature, what it was made under, and its request: when the grantee asked (the wait
// runs from there), the last refusal, and the session it last opened as the grantor.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("emergency_grants")
    .addColumn("grant_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("grantor_id", "text", (c) => c.notNull())
    .addColumn("grantee_id", "text", (c) => c.notNull())
    .addColumn("level", "text", (c) => c.notNull())
    .addColumn("wait_hours", "integer", (c) => c.notNull())
    .addColumn("grantee_keys", "text", (c) => c.notNull())
    .addColumn("grant_keys", "text", (c) => c.notNull())
    .addColumn("kdf_version", "integer", (c) => c.notNull())
    .addColumn("wrapped_key", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("requested_at", "text")
    .addColumn("refused_at", "text")
    .addColumn("session_id", "text")
    .addColumn("opened_at", "text")
    .execute();
  // One grant per grantor and grantee (a grantor's grants, and the session a takeover opened, by its first column); a grantee's grants.
  await db.schema.createIndex("emergency_grants_pair_idx").on("emergency_grants").columns(["grantor_id", "grantee_id"]).unique().execute();
  await db.schema.createIndex("emergency_grants_grantee_idx").on("emergency_grants").column("grantee_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("emergency_grants").execute();
}
