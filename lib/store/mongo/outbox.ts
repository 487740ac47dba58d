/** The outbox on MongoDB (the port: ../port/outbox.ts; SQL: ../sql/outbox.ts). */
import type { ClientSession } from "mongodb";
import type { DomainEvent } from "../../domain/audit/events";
import { outboxOrder, readOutboxRows } from "../port/outbox";
import type { OutboxStore } from "../port";
import type { MongoContext } from "./context";

export interface OutboxDoc {
  _id: string;
  ord: string;
  event: DomainEvent;
}

/** Writes `events` in the session's transaction, with the change they record. */
export async function writeOutbox(c: MongoContext, session: ClientSession, events: readonly DomainEvent[] | undefined): Promise<void> {
  if (!events || events.length === 0) return;
  await c.outbox.insertMany(
    events.map((e, i) => ({ _id: e.eventId, ord: outboxOrder(e, i), event: e })),
    { session },
  );
}

export class MongoOutbox implements OutboxStore {
  constructor(private readonly c: MongoContext) {}

  async pending(limit: number): Promise<DomainEvent[]> {
    const docs = await this.c.outbox.find({}).sort({ ord: 1, _id: 1 }).limit(limit).toArray();
    const { events, junk } = readOutboxRows(docs.map((d) => ({ id: d._id, event: d.event })));
    if (junk.length > 0) await this.markSent(junk);
    return events;
  }

  async markSent(eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.c.outbox.deleteMany({ _id: { $in: [...eventIds] } });
  }
}
