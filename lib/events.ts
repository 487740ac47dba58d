/**
 * Emitting domain events: services call `events.emit(type, subjects)` once a change of state is
 * committed. The event (ids and types only: lib/domain/events.ts) gets its id and time here and
 * goes to the event queue.
 *
 * `emit` resolves once the queue holds the event (JetStream: acknowledged by the server), so a
 * 2xx response means the event is durable. When the queue cannot take it (NATS unreachable), the
 * change is not undone and the request does not fail: the event waits here and is published again
 * every second, under the same id (JetStream stores it once), until the queue takes it. Only a
 * process that dies before the queue is back loses such events; it says how many when it stops.
 */
import { newId } from "./domain/ids";
import { timestamp } from "./domain/encoding";
import type { DomainEvent, DomainEventType, EventSubjects } from "./domain/events";
import type { EventQueue } from "./queue/port";

const RETRY_EVERY_MS = 1_000;
const MAX_WAITING = 100_000;

export interface EventLog {
  warn(message: string): void;
  info(message: string): void;
}

export class DomainEvents {
  private readonly waiting: DomainEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private retrying = false;
  private dropped = 0;

  constructor(
    private readonly queue: EventQueue,
    private readonly log: EventLog,
  ) {}

  async emit(type: DomainEventType, subjects: EventSubjects): Promise<void> {
    const event: DomainEvent = { eventId: newId(), type, at: timestamp(), ...subjects };
    if (this.waiting.length > 0) return this.hold(event); // keep the order
    try {
      await this.queue.publish(event);
    } catch {
      this.hold(event);
    }
  }

  private hold(event: DomainEvent): void {
    if (this.waiting.length === 0) this.log.warn("the event queue is unreachable; holding events until it is back");
    if (this.waiting.length >= MAX_WAITING) {
      this.waiting.shift();
      if (this.dropped++ === 0) this.log.warn(`more than ${MAX_WAITING} events waiting for the queue: dropping the oldest`);
    }
    this.waiting.push(event);
    this.timer ??= setInterval(() => void this.retry(), RETRY_EVERY_MS);
  }

  private async retry(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    try {
      while (this.waiting.length > 0) {
        await this.queue.publish(this.waiting[0]!);
        this.waiting.shift();
      }
      clearInterval(this.timer);
      this.timer = undefined;
      this.log.info(`the event queue is back; every held event is published${this.dropped ? ` (${this.dropped} were dropped)` : ""}`);
      this.dropped = 0;
    } catch {
      // Still unreachable: the next tick tries again.
    } finally {
      this.retrying = false;
    }
  }

  /** Publishes what is held, waiting at most `deadlineMs`; says how many events could not be. */
  async close(deadlineMs = 5_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    while (this.waiting.length > 0 && Date.now() < until) {
      await this.retry();
      if (this.waiting.length > 0) await new Promise((r) => setTimeout(r, 200));
    }
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.waiting.length > 0) this.log.warn(`${this.waiting.length} events were never published: the event queue stayed unreachable`);
  }
}
