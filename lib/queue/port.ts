// The event queue port: domain events delivered durably to worker services, at least once.
// Design: docs/design/event-queue.md
import type { DomainEvent } from "../domain/audit/events";

/** The durable consumers: created with the queue, before any worker first starts. */
export const CONSUMERS = ["audit"] as const;
export type ConsumerName = (typeof CONSUMERS)[number];

export type BatchHandler = (events: DomainEvent[]) => Promise<void>;

export interface DeliveryPolicy {
  /** Deliveries of one event before it is dead-lettered (failures of an unavailable store do not count). */
  maxDeliveries: number;
  /** Delay before the first retry; it doubles on each further one, up to MAX_RETRY_DELAY_MS. */
  retryDelayMs: number;
  /** At most this many events per handler call. */
  batchSize: number;
  /**
   * How long a worker waits after an event arrives for more to join its batch (unless the batch
   * is full): a few ms of audit latency buy one transaction per many events instead of one each.
   */
  lingerMs: number;
}

export interface DeadLetter {
  /** The message as it was published (text), so that nothing is lost when it is not an event. */
  payload: string;
  reason: string;
  deliveries: number;
  at: string;
}

export interface Subscription {
  /** Stops taking deliveries; resolves once the batch in hand is settled. */
  stop(): Promise<void>;
}

export interface EventQueue {
  readonly kind: "jetstream" | "memory";
  /**
   * Whether a published event outlives this process (JetStream: stored by the server once
   * acknowledged). An event published to a queue that is not (the in-process one) leaves the
   * outbox only once its consumer has handled it (DomainEvents.handled).
   */
  readonly durable: boolean;
  /** Resolves once the event is stored by the queue (JetStream: acknowledged by the server). */
  publish(event: DomainEvent): Promise<void>;
  consume(consumer: ConsumerName, handler: BatchHandler): Promise<Subscription>;
  /** The newest dead letters of a consumer, newest first. */
  deadLetters(consumer: ConsumerName, limit: number): Promise<DeadLetter[]>;
  /** Events published and not yet acknowledged by the consumer (waiting or in hand). */
  pending(consumer: ConsumerName): Promise<number>;
  /** False while the queue's connection is down (JetStream: NATS away); readiness reads it. */
  reachable(): boolean;
  close(): Promise<void>;
}
