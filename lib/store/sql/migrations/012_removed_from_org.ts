import type { Kysely } from "kysely";

// When a person was taken out of their organization (lib/domain/orgs/membership.ts); null while
// they are in it. Their row stays: the rosters they signed name their keys.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("users").addColumn("removed_at", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("users").dropColumn("removed_at").execute();
}
