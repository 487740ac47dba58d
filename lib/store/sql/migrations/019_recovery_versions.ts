import type { Kysely } from "kysely";

// A recovery enrolment's signed version (protocol/formats/recovery.ts, `vault-recovery-enrolment/v2`):
// its number in the account's sequence, the account's keys and KDF statement version it was made
// under. Null for an enrolment made before versions (signed in the unversioned form).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("recovery_enrolments").addColumn("version", "integer").execute();
  await db.schema.alterTable("recovery_enrolments").addColumn("account_keys", "text").execute();
  await db.schema.alterTable("recovery_enrolments").addColumn("kdf_version", "integer").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("recovery_enrolments").dropColumn("kdf_version").execute();
  await db.schema.alterTable("recovery_enrolments").dropColumn("account_keys").execute();
  await db.schema.alterTable("recovery_enrolments").dropColumn("version").execute();
}
