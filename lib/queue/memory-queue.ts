/**
 * The in-process queue of the embedded default: one lane per durable consumer, each holding what
 * was published until its worker settles it, with the same retry and dead-letter rules as
 * JetStream (lib/queue/settle.ts). It lives and dies with the process: events not yet handled when
 * the process stops are lost, which is why a deployment on NATS uses JetStream instead.
 */
import { timestamp } from "../domain/encoding";
import type { DomainEvent } from "../domain/audit/events";
import {
  CONSUMERS,
  type BatchHandler,
  type ConsumerName,
  type DeadLetter,
  type DeliveryPolicy,
  type EventQueue,
  type Subscription,
} from "./port";
import { settleBatch, type Delivery, type SettleLog } from "./settle";

/** Held per lane while no worker takes them; beyond, the oldest are dropped (and said so). */
const MAX_HELD = 100_000;
const MAX_DEAD_LETTERS = 1_000;

interface Held {
  payload: string;
  deliveryCount: number;
}

class Lane {
  private ready: Held[] = [];
  private readonly retries = new Set<NodeJS.Timeout>();
  readonly dead: DeadLetter[] = [];
  private handler: BatchHandler | undefined;
  private draining: Promise<void> | undefined;
  private dropped = 0;

  /** Events held and not yet settled: waiting, in the batch in hand, or waiting for a retry. */
  private inHand = 0;

  constructor(
    private readonly policy: DeliveryPolicy,
    private readonly log: SettleLog,
  ) {}

  get pending(): number {
    return this.ready.length + this.inHand + this.retries.size;
  }

  push(held: Held): void {
    if (this.ready.length >= MAX_HELD) {
      this.ready.shift();
      if (this.dropped++ === 0) this.log.warn(`in-process event queue full (${MAX_HELD} waiting): dropping the oldest`);
    }
    this.ready.push(held);
    this.kick();
  }

  attach(handler: BatchHandler): Subscription {
    if (this.handler) throw new Error("This consumer already has a worker in this process");
    this.handler = handler;
    this.kick();
    return {
      stop: async () => {
        this.handler = undefined;
        await this.draining;
      },
    };
  }

  private kick(): void {
    if (this.draining || !this.handler) return;
    // A full batch is handled at once; a partial one after the linger, so that more can join it.
    const full = this.ready.length >= this.policy.batchSize;
    const lingered = new Promise<void>((resolve) => (full ? setImmediate(resolve) : setTimeout(resolve, this.policy.lingerMs)));
    this.draining = lingered
      .then(() => this.drain())
      .finally(() => {
        this.draining = undefined;
        if (this.ready.length > 0) this.kick();
      });
  }

  private async drain(): Promise<void> {
    while (this.handler && this.ready.length > 0) {
      const batch = this.ready.splice(0, this.policy.batchSize);
      this.inHand = batch.length;
      try {
        await settleBatch(
          batch.map((held) => this.delivery(held)),
          this.handler,
          this.policy,
          this.log,
        );
      } finally {
        this.inHand = 0;
      }
    }
  }

  private delivery(held: Held): Delivery {
    held.deliveryCount++;
    return {
      payload: held.payload,
      deliveryCount: held.deliveryCount,
      ack: () => undefined,
      retry: (delayMs) => {
        const timer = setTimeout(() => {
          this.retries.delete(timer);
          this.push(held);
        }, delayMs);
        this.retries.add(timer);
      },
      deadLetter: async (reason) => {
        this.dead.unshift({ payload: held.payload, reason, deliveries: held.deliveryCount, at: timestamp() });
        this.dead.length = Math.min(this.dead.length, MAX_DEAD_LETTERS);
      },
    };
  }

  close(): void {
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
    this.handler = undefined;
    this.ready = [];
  }
}

export class MemoryQueue implements EventQueue {
  readonly kind = "memory" as const;
  readonly durable = false;
  private readonly lanes: Map<ConsumerName, Lane>;

  constructor(policy: DeliveryPolicy, log: SettleLog) {
    this.lanes = new Map(CONSUMERS.map((name) => [name, new Lane(policy, log)]));
  }

  async publish(event: DomainEvent): Promise<void> {
    const payload = JSON.stringify(event);
    for (const lane of this.lanes.values()) lane.push({ payload, deliveryCount: 0 });
  }

  async consume(consumer: ConsumerName, handler: BatchHandler): Promise<Subscription> {
    return this.lanes.get(consumer)!.attach(handler);
  }

  async deadLetters(consumer: ConsumerName, limit: number): Promise<DeadLetter[]> {
    return this.lanes.get(consumer)!.dead.slice(0, limit);
  }

  async pending(consumer: ConsumerName): Promise<number> {
    return this.lanes.get(consumer)!.pending;
  }

  reachable(): boolean {
    return true;
  }

  async close(): Promise<void> {
    for (const lane of this.lanes.values()) lane.close();
  }
}
