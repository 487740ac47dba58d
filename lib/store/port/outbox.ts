/**
 * The transactional outbox. Every change writes its domain events in its own
 * transaction (the `events` argument of each changing method); a relay in each process publishes
 * what is waiting to the event queue and then marks it sent. So no committed change can miss the
 * audit log, whatever process dies when: what was committed is in the outbox until it is published.
 * A publish may repeat (a relay that died after publishing, two relays at once): the queue stores an
 * event id once within its duplicate window, and the audit log records an event id once.
 */
import { parseDomainEvent, type DomainEvent } from "../../domain/audit/events";

export interface OutboxStore {
  /** The oldest events not yet marked sent, in the order they were written, at most `limit`. */
  pending(limit: number): Promise<DomainEvent[]>;
  /** Removes published events from the outbox (ids not there are ignored). */
  markSent(eventIds: readonly string[]): Promise<void>;
}

/** Where an event sorts in the outbox: by its time, then by its place among its change's events. */
export const outboxOrder = (event: DomainEvent, index: number): string => `${event.at}#${String(index).padStart(4, "0")}`;

/**
 * The rows an adapter read, as events and the ids of rows that are not events (a release that
 * wrote another form): those can never be published, and leave the outbox rather than hold back
 * every event after them.
 */
export function readOutboxRows(rows: ReadonlyArray<{ id: string; event: unknown }>): { events: DomainEvent[]; junk: string[] } {
  const events: DomainEvent[] = [];
  const junk: string[] = [];
  for (const r of rows) {
    const event = parseDomainEvent(r.event);
    if (event) events.push(event);
    else junk.push(r.id);
  }
  return { events, junk };
}

/** What a changing method takes to write with its change: the events it records. */
export interface WithEvents {
  events?: readonly DomainEvent[];
}
