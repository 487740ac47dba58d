// Domain events through the transactional outbox: recorded with the change, published to the queue after.
// Design: docs/design/outbox.md
import { newId } from "./domain/ids";
import { timestamp } from "./domain/encoding";
import type { DomainEvent, DomainEventType, EventSubjects } from "./domain/audit/events";
import type { EventQueue } from "./queue/port";
import type { OutboxStore } from "./store/port";
import { failpoint } from "./failpoints";

/** How often each process looks for events another one left behind. */
export const OUTBOX_POLL_MS = 1_000;
const BATCH = 200;
/** How long an event published to the in-process queue may go unrecorded before it is published again. */
const IN_FLIGHT_MS = 60_000;

export interface EventLog {
  warn(message: string): void;
  info(message: string): void;
}

export class DomainEvents {
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private unreachable = false;
  private closed = false;
  /**
   * Published to a queue that is not durable, and not yet handled (id -> when): not published
   * again meanwhile, unless IN_FLIGHT_MS pass (the queue dropped it, or dead-lettered it), so that
   * no event stays in the outbox, and holds back those after it, until a restart.
   */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly outbox: OutboxStore,
    private readonly queue: EventQueue,
    private readonly log: EventLog,
    private readonly pollMs = OUTBOX_POLL_MS,
  ) {}

  /** A new event of a change, for the store method that makes the change to write with it. */
  record(type: DomainEventType, subjects: EventSubjects): DomainEvent {
    return { eventId: newId(), type, at: timestamp(), ...subjects };
  }

  /** Starts the relay: a drain now (what an earlier run left), then one every poll. */
  start(): void {
    this.kick();
    this.timer ??= setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
  }

  /** A change was committed: publish what waits, now (or right after the drain in progress). */
  kick(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves once every event committed before the call has been published, or a publish failed. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
    this.kick();
    await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const waiting = await this.outbox.pending(BATCH);
        const now = Date.now();
        const batch = waiting.filter((e) => now - (this.inFlight.get(e.eventId) ?? -Infinity) >= IN_FLIGHT_MS);
        if (batch.length === 0) break;
        failpoint("outbox-before-publish");
        if (!this.queue.durable) for (const e of batch) this.inFlight.set(e.eventId, now);
        await Promise.all(batch.map((e) => this.queue.publish(e)));
        if (this.queue.durable) await this.outbox.markSent(batch.map((e) => e.eventId));
        failpoint("outbox-after-publish");
        if (this.unreachable) {
          this.unreachable = false;
          this.log.info("the event queue is back; the events that waited in the outbox are published");
        }
        if (waiting.length < BATCH) break;
      }
    } catch {
      // The queue (or the store) is away: the events stay in the outbox for the next drain.
      if (!this.unreachable) this.log.warn("the event queue or the store is unreachable; events wait in the outbox until it is back");
      this.unreachable = true;
    }
  }

  /**
   * The audit worker recorded these events: on a queue that is not durable, they leave the outbox
   * now (on JetStream they left it when the server stored them).
   */
  async handled(eventIds: readonly string[]): Promise<void> {
    if (this.queue.durable) return;
    await this.outbox.markSent(eventIds);
    for (const id of eventIds) this.inFlight.delete(id);
  }

  /** Stops the relay after a last drain, waiting at most `deadlineMs`; what is left waits in the outbox. */
  async close(deadlineMs = 5_000): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, deadlineMs).unref())]);
    this.closed = true;
  }
}
