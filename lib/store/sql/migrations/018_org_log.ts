import type { Kysely } from "kysely";

// Each organization's signed log (protocol/formats/org-log.ts, lib/domain/orgs/log.ts): its links in
// order from seq 0, each with its hash (the next link's prev). An organization made before the log
// has no rows until an owner's client adopts it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("org_log")
    .addColumn("org_id", "text", (c) => c.notNull().references("orgs.org_id"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("link", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("org_log_pk", ["org_id", "seq"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("org_log").execute();
}
