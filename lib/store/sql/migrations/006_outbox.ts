import type { Kysely } from "kysely";

// The transactional outbox (lib/store/port/outbox.ts): each change's domain events, written in
// its transaction, until a relay has published them. Read oldest first, by `ord`: the time, then
// the event's place among its change's events (outboxOrder, lib/store/port/outbox.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("outbox")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("ord", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("outbox_order_idx").on("outbox").columns(["ord", "event_id"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("outbox").execute();
}
