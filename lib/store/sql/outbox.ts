/** The outbox on SQL (the port: ../port/outbox.ts; MongoDB: ../mongo/outbox.ts). */
import type { DomainEvent } from "../../domain/audit/events";
import { outboxOrder, readOutboxRows } from "../port/outbox";
import type { OutboxStore } from "../port";
import type { Db, SqlContext } from "./context";
import type { OutboxTable } from "./schema";
import { param, prepared } from "./prepared";

/** The outbox row of a change's `i`th event. */
export const outboxRow = (e: DomainEvent, i: number): OutboxTable => ({
  event_id: e.eventId,
  ord: outboxOrder(e, i),
  event: JSON.stringify(e),
});

/** One event's row: what nearly every write records (prepared.ts). */
const ONE_EVENT = prepared("outbox_one", (db) =>
  db.insertInto("outbox").values({ event_id: param("event_id"), ord: param("ord"), event: param("event") }),
);

/** Writes `events` in the transaction `trx`, with the change they record. */
export async function writeOutbox(trx: Db, events: readonly DomainEvent[] | undefined): Promise<void> {
  if (!events || events.length === 0) return;
  if (events.length === 1) {
    await ONE_EVENT.run(trx, { ...outboxRow(events[0]!, 0) });
    return;
  }
  await trx.insertInto("outbox").values(events.map(outboxRow)).execute();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null; // not an event either
  }
}

export class SqlOutbox implements OutboxStore {
  constructor(private readonly c: SqlContext) {}

  async pending(limit: number): Promise<DomainEvent[]> {
    const rows = await this.c.db
      .selectFrom("outbox")
      .select(["event_id", "event"])
      .orderBy("ord")
      .orderBy("event_id")
      .limit(limit)
      .execute();
    const { events, junk } = readOutboxRows(rows.map((r) => ({ id: r.event_id, event: parseJson(r.event) })));
    if (junk.length > 0) await this.markSent(junk);
    return events;
  }

  async markSent(eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.c.db
      .deleteFrom("outbox")
      .where("event_id", "in", [...eventIds])
      .execute();
  }
}
