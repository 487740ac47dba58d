import { sql, type Kysely } from "../kysely";

// Item ids are unique per vault, not across the server: a client-chosen id taken in a vault the
// caller cannot see must not answer differently from a fresh one (it answered 409: a probe).
// The table is rebuilt under the new key: SQLite cannot change a primary key in place.

const COLUMNS = "item_id, vault_id, encrypted_data, encrypted_name, revision, key_version, created_at, updated_at";

/** Rebuilds `items` keyed by `key`, copying the rows `where` keeps. */
async function rebuildItems(db: Kysely<unknown>, key: "vault and item" | "item", where = sql``): Promise<void> {
  await db.schema
    .createTable("items_rebuilt")
    .addColumn("item_id", "text", (c) => (key === "item" ? c.primaryKey() : c.notNull()))
    .addColumn("vault_id", "text", (c) => c.notNull().references("vaults.vault_id").onDelete("cascade"))
    .addColumn("encrypted_data", "text", (c) => c.notNull())
    .addColumn("encrypted_name", "text", (c) => c.notNull())
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .$call((t) => (key === "vault and item" ? t.addPrimaryKeyConstraint("items_pk", ["vault_id", "item_id"]) : t))
    .execute();
  await sql`INSERT INTO items_rebuilt (${sql.raw(COLUMNS)}) SELECT ${sql.raw(COLUMNS)} FROM items ${where}`.execute(db);
  await db.schema.dropTable("items").execute();
  await db.schema.alterTable("items_rebuilt").renameTo("items").execute();
  await db.schema.createIndex("items_vault_idx").on("items").columns(["vault_id", "created_at", "item_id"]).execute();
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuildItems(db, "vault and item");
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Ids used in more than one vault cannot go back to one key: the first of each is kept.
  await rebuildItems(db, "item", sql`i WHERE NOT EXISTS (SELECT 1 FROM items o WHERE o.item_id = i.item_id AND o.vault_id < i.vault_id)`);
}
