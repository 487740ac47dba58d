import { sql, type Kysely } from "../kysely";

// The account's key version (lib/domain/accounts/password-change.ts): 1 for every account, bumped by each
// master password change. A personal vault's wrap is under the stretched key of one version, and
// a write that states another is refused.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("users")
    .addColumn("account_version", "integer", (c) => c.notNull().defaultTo(sql`1`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("users").dropColumn("account_version").execute();
}
