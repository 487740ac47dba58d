// The event queue on NATS JetStream: the events stream, a durable consumer per worker, dead letters.
// Design: docs/design/event-queue.md
import {
  AckPolicy,
  connect,
  createInbox,
  JSONCodec,
  DeliverPolicy,
  DiscardPolicy,
  headers,
  nanos,
  RetentionPolicy,
  StorageType,
  StringCodec,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type StreamConfig,
} from "nats";
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
// The client's own `fetch` has no deadline with `no_wait` (a lost pull waits forever) and keeps
// one subscription per pull that got fewer than a batch (a leak of ten a second when idle): the
// pull below is written on the documented pull protocol, with the client's message wrapper.
import { toJsMsg } from "nats/lib/jetstream/jsmsg";

export interface JetStreamOptions {
  url: string;
  namespace: string;
  policy: DeliveryPolicy;
  /** How long an event stays in the stream. */
  retentionMs: number;
  /** A delivery not acknowledged within this time goes to the next worker. */
  ackWaitMs: number;
  /** How long a publish waits for the server's acknowledgement (default PUBLISH_TIMEOUT_MS). */
  publishTimeoutMs?: number;
  log: SettleLog & { info(message: string): void };
}

const sc = StringCodec();
const DUPLICATE_WINDOW_MS = 120_000;
const RESTART_DELAY_MS = 1_000;
const PUBLISH_TIMEOUT_MS = 2_000;
/** A `no_wait` pull is answered in milliseconds; one without an answer by then was lost. */
const PULL_DEADLINE_MS = 2_000;

/** Creates the stream or consumer, or updates it when it exists with an older configuration. */
async function upsert(exists: () => Promise<unknown>, create: () => Promise<unknown>, update: () => Promise<unknown>): Promise<void> {
  const found = await exists().then(
    () => true,
    () => false,
  );
  if (!found) {
    try {
      await create();
      return;
    } catch {
      // Another node created it meanwhile: bring it up to date below.
    }
  }
  await update();
}

export class JetStreamQueue implements EventQueue {
  readonly kind = "jetstream" as const;
  readonly durable = true;
  private readonly subscriptions = new Set<Subscription>();
  private readonly onConnectionChange = new Set<() => void>();
  /** Between a disconnect and the reconnect, false. */
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    private readonly opts: JetStreamOptions,
  ) {}

  private get publishTimeoutMs(): number {
    return this.opts.publishTimeoutMs ?? PUBLISH_TIMEOUT_MS;
  }

  get eventsStream(): string {
    return `${this.opts.namespace}-events`;
  }

  get deadLetterStream(): string {
    return `${this.opts.namespace}-dead-letters`;
  }

  static async open(opts: JetStreamOptions): Promise<JetStreamQueue> {
    const nc = await connect({
      servers: opts.url,
      name: `${opts.namespace}-events`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      waitOnFirstConnect: true,
      // Every publish and pull is a request: without this, each builds two errors with stack
      // traces in case it fails (16 µs of an item create's CPU in a profile of the items node);
      // a failure still carries its code and message.
      noAsyncTraces: true,
    });
    try {
      const jsm = await nc.jetstreamManager();
      const queue = new JetStreamQueue(nc, jsm, nc.jetstream(), opts);
      await queue.ensureTopology();
      queue.watchConnection();
      return queue;
    } catch (err) {
      await nc.close();
      throw new Error(`NATS JetStream is not usable (${(err as Error).message}); the NATS server needs JetStream on (nats-server -js)`);
    }
  }

  private async ensureTopology(): Promise<void> {
    const ns = this.opts.namespace;
    const streams: StreamConfig[] = [
      this.streamConfig(this.eventsStream, `${ns}.events.>`),
      this.streamConfig(this.deadLetterStream, `${ns}.dead.>`),
    ];
    for (const cfg of streams) {
      await upsert(
        () => this.jsm.streams.info(cfg.name),
        () => this.jsm.streams.add(cfg),
        () => this.jsm.streams.update(cfg.name, cfg),
      );
    }
    for (const name of CONSUMERS) {
      const cfg: Partial<ConsumerConfig> = {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(this.opts.ackWaitMs),
        // Redelivery limits are the worker's (lib/queue/settle.ts): the server never drops an event.
        max_deliver: -1,
        max_ack_pending: 10 * this.opts.policy.batchSize,
      };
      await upsert(
        () => this.jsm.consumers.info(this.eventsStream, name),
        () => this.jsm.consumers.add(this.eventsStream, cfg),
        () => this.jsm.consumers.update(this.eventsStream, name, cfg),
      );
    }
  }

  private streamConfig(name: string, subject: string): StreamConfig {
    return {
      name,
      subjects: [subject],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.opts.retentionMs),
      duplicate_window: nanos(Math.min(DUPLICATE_WINDOW_MS, this.opts.retentionMs)),
      num_replicas: 1,
    } as StreamConfig;
  }

  async publish(event: DomainEvent): Promise<void> {
    await this.js.publish(`${this.opts.namespace}.events.${event.type}`, sc.encode(JSON.stringify(event)), {
      msgID: event.eventId,
      timeout: this.publishTimeoutMs,
    });
  }

  /**
   * Pulls what is waiting, up to a batch, without waiting on the server (`no_wait`); settles it;
   * pulls again at once after a full batch, else after the linger. Under load, events arrive in
   * bursts of a batch rather than one wake-up and one transaction each; idle, it asks
   * 1000 / lingerMs times a second.
   *
   * A pull that is never answered (sent as NATS went down, or before JetStream was back after a
   * restart: the server drops it silently) ends at PULL_DEADLINE_MS, and at once when the
   * connection drops or comes back; after such a pull the consumer is checked and created again if
   * the server lost it. So the worker resumes by itself after any NATS outage.
   */
  async consume(consumer: ConsumerName, handler: BatchHandler): Promise<Subscription> {
    const { policy, log } = this.opts;
    await this.jsm.consumers.info(this.eventsStream, consumer); // fails now, not in the loop, when it is missing
    let stopped = false;
    let current: Pull | undefined;
    const { pause, wake } = wakeablePause();
    const interrupt = () => {
      current?.interrupt();
      wake();
    };
    let unanswered = 0;
    const loop = async (): Promise<void> => {
      while (!stopped) {
        current = pullWaiting(this.nc, this.eventsStream, consumer, policy.batchSize, PULL_DEADLINE_MS);
        const { messages, end } = await current.result;
        current = undefined;
        if (messages.length > 0)
          await settleBatch(
            messages.map((m) => this.delivery(consumer, m)),
            handler,
            policy,
            log,
          );
        if (stopped) break;
        if (end === "deadline" || end === "interrupted") {
          // Not (wholly) answered: what arrived was settled above; anything the server sent after
          // the pull ended reaches no one and is delivered again after the ack wait.
          if (unanswered++ === 0)
            log.warn(
              `event consumer ${consumer}: a pull got no answer (${end === "deadline" ? `${PULL_DEADLINE_MS} ms` : "the NATS connection changed"}); pulling again until NATS answers`,
            );
          if (end === "deadline") await this.recreateIfLost(consumer);
          await pause(end === "deadline" ? RESTART_DELAY_MS : 0);
          continue;
        }
        if (unanswered > 0) {
          log.info(`event consumer ${consumer}: NATS answers again after ${unanswered} unanswered pulls; delivering`);
          unanswered = 0;
        }
        if (messages.length < policy.batchSize) await pause(policy.lingerMs);
      }
    };
    this.onConnectionChange.add(interrupt);
    const running = loop();
    const subscription: Subscription = {
      stop: async () => {
        if (stopped) return;
        stopped = true;
        this.subscriptions.delete(subscription);
        this.onConnectionChange.delete(interrupt);
        interrupt();
        await running;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** A consumer (or the whole stream) the server no longer has, after it lost its storage: created again. */
  private async recreateIfLost(consumer: ConsumerName): Promise<void> {
    try {
      await this.jsm.consumers.info(this.eventsStream, consumer);
    } catch (err) {
      if (!isNotFound(err)) return; // NATS not reachable, or not ready: the next pull tells
      this.opts.log.warn(`event consumer ${consumer} is missing on the NATS server; creating the streams and consumers again`);
      await this.ensureTopology().catch(() => undefined);
    }
  }

  /** Interrupts every pull when the connection drops or comes back, for as long as it is open. */
  private watchConnection(): void {
    void (async () => {
      for await (const status of this.nc.status()) {
        if (status.type === "disconnect" || status.type === "reconnect") {
          this.connected = status.type === "reconnect";
          for (const interrupt of this.onConnectionChange) interrupt();
        }
      }
    })().catch(() => undefined);
  }

  private delivery(consumer: ConsumerName, m: JsMsg): Delivery {
    return {
      payload: sc.decode(m.data),
      deliveryCount: m.info.deliveryCount,
      ack: () => m.ack(),
      retry: (delayMs) => m.nak(delayMs),
      deadLetter: async (reason) => {
        const h = headers();
        h.set("Dead-Reason", reason.replace(/[\r\n]/g, " "));
        h.set("Dead-Deliveries", String(m.info.deliveryCount));
        h.set("Dead-Stream-Seq", String(m.info.streamSequence));
        await this.js.publish(`${this.opts.namespace}.dead.${consumer}`, m.data, {
          headers: h,
          msgID: `${consumer}-${m.info.streamSequence}`,
          timeout: this.publishTimeoutMs,
        });
        m.term();
      },
    };
  }

  async deadLetters(consumer: ConsumerName, limit: number): Promise<DeadLetter[]> {
    const subject = `${this.opts.namespace}.dead.${consumer}`;
    const { state } = await this.jsm.streams.info(this.deadLetterStream);
    const out: DeadLetter[] = [];
    for (let seq = state.last_seq; seq >= state.first_seq && seq > 0 && out.length < limit; seq--) {
      const msg = await this.jsm.streams.getMessage(this.deadLetterStream, { seq }).catch(() => null);
      if (!msg || msg.subject !== subject) continue;
      out.push({
        payload: sc.decode(msg.data),
        reason: msg.header.get("Dead-Reason"),
        deliveries: Number(msg.header.get("Dead-Deliveries")),
        at: msg.time.toISOString(),
      });
    }
    return out;
  }

  async pending(consumer: ConsumerName): Promise<number> {
    const info = await this.jsm.consumers.info(this.eventsStream, consumer);
    return info.num_pending + info.num_ack_pending;
  }

  reachable(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.nc.drain().catch(() => this.nc.close());
  }
}

/** How a pull ended: the server's end-of-batch status, a full batch, no answer in time, or a connection change. */
type PullEnd = "answered" | "full" | "deadline" | "interrupted";

interface Pull {
  result: Promise<{ messages: JsMsg[]; end: PullEnd }>;
  interrupt(): void;
}

const jc = JSONCodec();

/**
 * One pull request (`$JS.API.CONSUMER.MSG.NEXT`) for up to `batch` messages that are waiting
 * (`no_wait`): the server sends them, then a status (404 none, 408 fewer than asked). Ends at the
 * status, at `batch` messages, at the deadline or when interrupted, and always unsubscribes.
 */
function pullWaiting(nc: NatsConnection, stream: string, consumer: string, batch: number, deadlineMs: number): Pull {
  const messages: JsMsg[] = [];
  let finish: (end: PullEnd) => void = () => undefined;
  const result = new Promise<{ messages: JsMsg[]; end: PullEnd }>((resolve) => {
    const inbox = createInbox();
    const timer = setTimeout(() => finish("deadline"), deadlineMs);
    let done = false;
    const sub = nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (done) return;
        if (err) return finish("interrupted");
        // A status (no data, a code in the headers) ends the pull; anything else is a message.
        if (msg.headers && msg.headers.code > 0 && msg.data.length === 0) return finish("answered");
        messages.push(toJsMsg(msg));
        if (messages.length >= batch) finish("full");
      },
    });
    finish = (end) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sub.unsubscribe();
      resolve({ messages, end });
    };
    try {
      nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`, jc.encode({ batch, no_wait: true }), { reply: inbox });
    } catch {
      finish("interrupted"); // the connection is closed
    }
  });
  return { result, interrupt: () => finish("interrupted") };
}

/** The JetStream API's "stream not found" (10059) and "consumer not found" (10014). */
function isNotFound(err: unknown): boolean {
  const api = (err as { api_error?: { err_code?: number } })?.api_error;
  return api?.err_code === 10014 || api?.err_code === 10059 || /not found/i.test(String((err as Error)?.message));
}

/** A pause between pulls that `wake` cuts short (the connection changed, or the consumer stops). */
function wakeablePause(): { pause(ms: number): Promise<void>; wake(): void } {
  let wake: (() => void) | undefined;
  return {
    pause: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    wake: () => wake?.(),
  };
}
