import type { Kysely } from "kysely";

// Second factors, recovery codes, organization policies and k-of-n account recovery.
// `second_factors.slot`: "totp" for the one authenticator app an account has, the factor's id for a
// security key, unique per user, so two enrolments of an app at once cannot both land.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("second_factors")
    .addColumn("factor_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("slot", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_used_at", "text")
    .addColumn("sealed_secret", "text")
    .addColumn("last_step", "bigint")
    .addColumn("credential_id", "text")
    .addColumn("public_key", "text")
    .addColumn("counter", "bigint")
    .addColumn("transports", "text")
    .addUniqueConstraint("second_factors_slot", ["user_id", "slot"])
    .execute();
  await db.schema
    .createTable("recovery_codes")
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("used_at", "text")
    .addPrimaryKeyConstraint("recovery_codes_pk", ["user_id", "code_hash"])
    .execute();
  await db.schema
    .createTable("org_policies")
    .addColumn("org_id", "text", (c) => c.primaryKey().references("orgs.org_id").onDelete("cascade"))
    .addColumn("policies", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("recovery_enrolments")
    .addColumn("user_id", "text", (c) => c.primaryKey().references("users.user_id").onDelete("cascade"))
    .addColumn("enrolment_id", "text", (c) => c.notNull().unique())
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("threshold", "integer", (c) => c.notNull())
    .addColumn("copy", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("kdf_salt", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("recovery_shares")
    .addColumn("enrolment_id", "text", (c) => c.notNull().references("recovery_enrolments.enrolment_id").onDelete("cascade"))
    .addColumn("trustee_id", "text", (c) => c.notNull())
    .addColumn("encrypted_share", "text", (c) => c.notNull())
    .addColumn("trustee_keys", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("recovery_shares_pk", ["enrolment_id", "trustee_id"])
    .execute();
  await db.schema.createIndex("recovery_shares_by_trustee").on("recovery_shares").column("trustee_id").execute();
  await db.schema
    .createTable("recovery_requests")
    .addColumn("request_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.user_id").onDelete("cascade"))
    .addColumn("org_id", "text", (c) => c.notNull())
    .addColumn("enrolment_id", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("ended_at", "text")
    // A request whose device signed in (`opened`): that session, and when; it may set a new password without the old one.
    .addColumn("session_id", "text")
    .addColumn("opened_at", "text")
    .execute();
  await db.schema.createIndex("recovery_requests_by_user").on("recovery_requests").columns(["user_id", "status"]).execute();
  await db.schema.createIndex("recovery_requests_by_enrolment").on("recovery_requests").columns(["enrolment_id", "status"]).execute();
  await db.schema
    .createTable("recovery_approvals")
    .addColumn("request_id", "text", (c) => c.notNull().references("recovery_requests.request_id").onDelete("cascade"))
    .addColumn("trustee_id", "text", (c) => c.notNull())
    .addColumn("encrypted_share", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("approved_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("recovery_approvals_pk", ["request_id", "trustee_id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    "recovery_approvals",
    "recovery_requests",
    "recovery_shares",
    "recovery_enrolments",
    "org_policies",
    "recovery_codes",
    "second_factors",
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
