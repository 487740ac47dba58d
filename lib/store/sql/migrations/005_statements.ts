import type { Kysely } from "kysely";

// Signed statements (protocol/formats/statements.ts), each as JSON text `{"version", "signature"}`, null where
// there is none: a user's key statement and KDF statement, the binding MAC an invited user
// registered with (`{"inviteId", "mac"}`), and an invite's statement by its inviter.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("users").addColumn("key_statement", "text").execute();
  await db.schema.alterTable("users").addColumn("kdf_statement", "text").execute();
  await db.schema.alterTable("users").addColumn("invite_binding", "text").execute();
  await db.schema.alterTable("invites").addColumn("statement", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("invites").dropColumn("statement").execute();
  await db.schema.alterTable("users").dropColumn("invite_binding").execute();
  await db.schema.alterTable("users").dropColumn("kdf_statement").execute();
  await db.schema.alterTable("users").dropColumn("key_statement").execute();
}
