/** The outbox on SQL (the port: ../port/outbox.ts; MongoDB: ../mongo/outbox.ts). */
import { parseDomainEvent, type DomainEvent } from "../../domain/events";
import { outboxOrder } from "../port/outbox";
import type { OutboxStore } from "../port";
import type { Db, SqlContext } from "./context";

/** Writes `events` in the transaction `trx`, with the change they record. */
export async function writeOutbox(trx: Db, events: readonly DomainEvent[] | undefined): Promise<void> {
  if (!events || events.length === 0) return;
  await trx
    .insertInto("outbox")
    .values(events.map((e, i) => ({ event_id: e.eventId, ord: outboxOrder(e, i), event: JSON.stringify(e) })))
    .execute();
}

export class SqlOutbox implements OutboxStore {
  constructor(private readonly c: SqlContext) {}

  async pending(limit: number): Promise<DomainEvent[]> {
    const rows = await this.c.db.selectFrom("outbox").select("event").orderBy("ord").orderBy("event_id").limit(limit).execute();
    // A row that is not an event (it cannot be: the store wrote it) is skipped rather than stop the relay.
    return rows.map((r) => parseDomainEvent(JSON.parse(r.event))).filter((e): e is DomainEvent => e !== null);
  }

  async markSent(eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.c.db
      .deleteFrom("outbox")
      .where("event_id", "in", [...eventIds])
      .execute();
  }
}
