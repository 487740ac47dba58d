import type { Kysely } from "kysely";

// Sign-in passkeys (lib/domain/accounts/passkey-logins.ts): a discoverable WebAuthn credential that
// signs in to the account, and, with the PRF extension, three wraps the client made that open the
// account's stretched key on the client (protocol/formats/passkey-unlock.ts); null when it keeps none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("passkey_logins")
    .addColumn("credential_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("counter", "bigint", (c) => c.notNull())
    .addColumn("transports", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_used_at", "text")
    .addColumn("prf_wrapped_key", "text")
    .addColumn("wrapped_stretched_key", "text")
    .addColumn("kept_wrapped_key", "text")
    .execute();
  await db.schema.createIndex("passkey_logins_user_idx").on("passkey_logins").column("user_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("passkey_logins").execute();
}
