import type { Kysely } from "kysely";

// Portable DDL: text and integer columns only; foreign keys cascade from vaults.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("orgs")
    .addColumn("org_id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("users")
    .addColumn("user_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("email", "text", (c) => c.notNull().unique())
    .addColumn("org_role", "text", (c) => c.notNull())
    .addColumn("auth_hash", "text", (c) => c.notNull())
    .addColumn("kdf", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("signing_public_key", "text", (c) => c.notNull())
    .addColumn("public_key_signature", "text", (c) => c.notNull())
    .addColumn("encrypted_private_key", "text", (c) => c.notNull())
    .addColumn("encrypted_signing_private_key", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("users_org_idx").on("users").columns(["org_id", "created_at"]).execute();

  await db.schema
    .createTable("vaults")
    .addColumn("vault_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("rekey_required", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("vault_members")
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("encrypted_vault_key", "text", (c) => c.notNull())
    .addColumn("sender_id", "text", (c) => c.notNull())
    .addColumn("wrap_signature", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("vault_members_pk", ["vault_id", "user_id"])
    .execute();
  await db.schema.createIndex("vault_members_user_idx").on("vault_members").column("user_id").execute();

  await db.schema
    .createTable("items")
    .addColumn("item_id", "text", (c) => c.primaryKey())
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("encrypted_data", "text", (c) => c.notNull())
    .addColumn("encrypted_name", "text", (c) => c.notNull())
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("items_vault_idx").on("items").columns(["vault_id", "created_at", "item_id"]).execute();

  await db.schema
    .createTable("invites")
    .addColumn("invite_id", "text", (c) => c.primaryKey())
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("inviter_id", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("invites_org_idx").on("invites").columns(["org_id", "status", "created_at"]).execute();

  await db.schema
    .createTable("refresh_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("family_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id"))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("refresh_tokens_family_idx").on("refresh_tokens").column("family_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ["refresh_tokens", "invites", "items", "vault_members", "vaults", "users", "orgs"]) {
    await db.schema.dropTable(t).execute();
  }
}
