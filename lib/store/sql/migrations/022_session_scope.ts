import type { Kysely } from "kysely";

// A session's scope and why it ended (lib/domain/accounts/session-scope.ts): `enrol_only` 1 for a
// login that may only enrol a second factor (a refresh keeps it; a policy that comes to require a
// factor sets it), and `ended_why` the reason its devices are told ("factors-changed"), null for
// other ends. Sessions from before are whole; their refresh still applies the policy as it is.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("sessions")
    .addColumn("enrol_only", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("sessions").addColumn("ended_why", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("sessions").dropColumn("ended_why").execute();
  await db.schema.alterTable("sessions").dropColumn("enrol_only").execute();
}
