import { PostgresAdapter, sql, type Kysely } from "../kysely";

// Recovery requests for any address (lib/domain/accounts/recovery-requests.ts): a decoy, a request
// for an address with no enrolled account, is stored as a real one is, with no account, organization
// or enrolment. Each request is counted by `address_key` and `client_key` (keyed hashes of the
// address asked for and of the client's address), and may carry `binding_hash`, the hash of the
// secret its device started it with. Requests from before have no address key of their own: they
// are counted by their account (`user:<id>`) until they expire.
//
// `user_id` no longer references `users`: the reference's check, a lookup of the account on every
// insert, was work a real request's write did and a decoy's did not. The request names the account
// the server read just before writing it, and accounts are never deleted (a removal marks them).
const NEW_COLUMNS = ["address_key", "client_key", "binding_hash"] as const;
/** The name PostgreSQL gave migration 015's reference from `user_id` to `users`. */
const USER_REFERENCE = "recovery_requests_user_id_fkey";

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const column of ["user_id", "org_id", "enrolment_id"])
      await db.schema
        .alterTable("recovery_requests")
        .alterColumn(column, (c) => c.dropNotNull())
        .execute();
    await db.schema.alterTable("recovery_requests").dropConstraint(USER_REFERENCE).execute();
    for (const column of NEW_COLUMNS) await db.schema.alterTable("recovery_requests").addColumn(column, "text").execute();
    await sql`UPDATE recovery_requests SET address_key = 'user:' || user_id, client_key = ''`.execute(db);
    for (const column of ["address_key", "client_key"])
      await db.schema
        .alterTable("recovery_requests")
        .alterColumn(column, (c) => c.setNotNull())
        .execute();
  } else {
    // SQLite changes no column's NOT NULL in place: the table is made again, its approvals (whose
    // foreign key names it) set aside first, so that dropping it cascades to nothing.
    await createRequests(db, "recovery_requests_next", false);
    await sql`INSERT INTO recovery_requests_next (request_id, user_id, org_id, enrolment_id, address_key, client_key, binding_hash,
        public_key, token_hash, status, created_at, expires_at, ended_at, session_id, opened_at)
      SELECT request_id, user_id, org_id, enrolment_id, 'user:' || user_id, '', NULL,
        public_key, token_hash, status, created_at, expires_at, ended_at, session_id, opened_at FROM recovery_requests`.execute(db);
    await rebuildApprovals(db, "recovery_requests_next");
    await sql`DROP TABLE recovery_requests`.execute(db);
    // Renaming updates the approvals' foreign key to the new name.
    await sql`ALTER TABLE recovery_requests_next RENAME TO recovery_requests`.execute(db);
  }
  await db.schema.createIndex("recovery_requests_by_address").on("recovery_requests").columns(["address_key", "status"]).execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) await requestIndexes(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("recovery_requests_by_address").execute();
  // Decoys have no account to go back to.
  await sql`DELETE FROM recovery_requests WHERE user_id IS NULL`.execute(db);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const column of NEW_COLUMNS) await db.schema.alterTable("recovery_requests").dropColumn(column).execute();
    for (const column of ["user_id", "org_id", "enrolment_id"])
      await db.schema
        .alterTable("recovery_requests")
        .alterColumn(column, (c) => c.setNotNull())
        .execute();
    await db.schema
      .alterTable("recovery_requests")
      .addForeignKeyConstraint(USER_REFERENCE, ["user_id"], "users", ["user_id"], (c) => c.onDelete("cascade"))
      .execute();
    return;
  }
  await createRequests(db, "recovery_requests_next", true);
  await sql`INSERT INTO recovery_requests_next (request_id, user_id, org_id, enrolment_id, public_key, token_hash, status,
      created_at, expires_at, ended_at, session_id, opened_at)
    SELECT request_id, user_id, org_id, enrolment_id, public_key, token_hash, status, created_at, expires_at, ended_at, session_id, opened_at
    FROM recovery_requests`.execute(db);
  await rebuildApprovals(db, "recovery_requests_next");
  await sql`DROP TABLE recovery_requests`.execute(db);
  await sql`ALTER TABLE recovery_requests_next RENAME TO recovery_requests`.execute(db);
  await requestIndexes(db);
}

/** The requests table: with the account's columns required (`before`, as migration 015 made it), or with decoys' columns. */
async function createRequests(db: Kysely<unknown>, name: string, before: boolean): Promise<void> {
  let table = db.schema
    .createTable(name)
    .addColumn("request_id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => (before ? c.notNull().references("users.user_id").onDelete("cascade") : c))
    .addColumn("org_id", "text", (c) => (before ? c.notNull() : c))
    .addColumn("enrolment_id", "text", (c) => (before ? c.notNull() : c));
  if (!before) {
    table = table
      .addColumn("address_key", "text", (c) => c.notNull())
      .addColumn("client_key", "text", (c) => c.notNull())
      .addColumn("binding_hash", "text");
  }
  await table
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("ended_at", "text")
    .addColumn("session_id", "text")
    .addColumn("opened_at", "text")
    .execute();
}

/** The approvals, copied to a table whose foreign key names `requests` (SQLite), in place of the old one. */
async function rebuildApprovals(db: Kysely<unknown>, requests: string): Promise<void> {
  await db.schema
    .createTable("recovery_approvals_next")
    .addColumn("request_id", "text", (c) => c.notNull().references(`${requests}.request_id`).onDelete("cascade"))
    .addColumn("trustee_id", "text", (c) => c.notNull())
    .addColumn("encrypted_share", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("approved_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("recovery_approvals_pk", ["request_id", "trustee_id"])
    .execute();
  await sql`INSERT INTO recovery_approvals_next SELECT request_id, trustee_id, encrypted_share, signature, approved_at FROM recovery_approvals`.execute(
    db,
  );
  await sql`DROP TABLE recovery_approvals`.execute(db);
  await sql`ALTER TABLE recovery_approvals_next RENAME TO recovery_approvals`.execute(db);
}

/** The indexes migration 015 made, on the table made again (SQLite drops a table's indexes with it). */
async function requestIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("recovery_requests_by_user").on("recovery_requests").columns(["user_id", "status"]).execute();
  await db.schema.createIndex("recovery_requests_by_enrolment").on("recovery_requests").columns(["enrolment_id", "status"]).execute();
}
