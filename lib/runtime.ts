/**
 * What the services of one process share: settings, the store, the event queue and the ports for
 * tokens, counters and locks. Built once per process from the settings and handed to every
 * service. Embedded by default; DATABASE_URL, REDIS_URL and TRANSPORTER switch on PostgreSQL,
 * Redis and NATS (JetStream for the events).
 */
import { createHmac } from "node:crypto";
import type { Config } from "./config";
import { AccessTokens } from "./auth/access-tokens";
import { sealKeys, signingKeys } from "./auth/secrets";
import { Sealer } from "./auth/sealed";
import { SessionCheck } from "./auth/session-check";
import { MemoryCounters, type Counters } from "./limits/counters";
import { RedisCounters } from "./limits/redis-counters";
import { DomainEvents } from "./events";
import { MemoryLocks, RedisLocks, type Locks } from "./locks";
import { MemoryQueue } from "./queue/memory-queue";
import type { DeliveryPolicy, EventQueue } from "./queue/port";
import type { RedisLog } from "./redis";
import { ServiceMetrics } from "./ops/metrics";
import { systemClock, type Clock } from "./clock";
import { openStore, type Store } from "./store";
import { MemoryInviteTokens, type InviteTokens } from "./tokens/invite-tokens";
import { RedisInviteTokens } from "./tokens/redis-invite-tokens";

export interface Runtime {
  config: Config;
  /** The time expiries are decided by (lib/clock.ts). */
  clock: Clock;
  store: Store;
  accessTokens: AccessTokens;
  /** The gateway's check that a token's session is live (lib/auth/session-check.ts). */
  sessions: SessionCheck;
  counters: Counters;
  inviteTokens: InviteTokens;
  /** Where domain events go to the workers. */
  queue: EventQueue;
  /** What services emit their domain events through. */
  events: DomainEvents;
  locks: Locks;
  /** The service's own metrics (lib/ops/metrics.ts); no-ops when metrics are off. */
  metrics: ServiceMetrics;
  /** Keyed HMAC for values that must be stable but unguessable (prelogin's fake salts). */
  serverHmac(purpose: string, value: string): Buffer;
  /** Seals values for the server alone: pending second steps, and second-factor secrets at rest (lib/auth/sealed.ts). */
  sealer: Sealer;
  close(): Promise<void>;
}

export async function createRuntime(
  config: Config,
  log: RedisLog,
  metrics = ServiceMetrics.off(),
  clock: Clock = systemClock,
): Promise<Runtime> {
  const keys = signingKeys(config);
  const store = await openStore(config, (m) => log.warn(m));
  // Drivers load only when their setting asks for them (ioredis, nats, pg): the embedded default starts without them.
  const redis = config.redisUrl ? await (await import("./redis.js")).connectRedis(config.redisUrl, log, `${config.namespace}:`) : undefined;
  const counters = redis ? new RedisCounters(redis, clock) : new MemoryCounters(clock);
  const inviteTokens = redis ? new RedisInviteTokens(store, redis, clock) : new MemoryInviteTokens(store, clock);
  const queue = await openQueue(config, log).catch(async (err: unknown) => {
    await redis?.close();
    await store.close();
    throw err;
  });
  const events = new DomainEvents(store.outbox, queue, log);
  events.start();
  const hmacKey = createHmac("sha256", keys.current).update("server-hmac-key").digest();
  return {
    config,
    clock,
    store,
    accessTokens: new AccessTokens(
      keys,
      config.accessTokenTtlSec,
      () => clock.nowMs(),
      (userId) => store.accounts.findUserById(userId),
    ),
    sessions: new SessionCheck(store.sessions, clock, config.sessionCheckIntervalMs),
    counters,
    inviteTokens,
    queue,
    events,
    locks: redis ? new RedisLocks(redis) : new MemoryLocks(clock),
    metrics,
    serverHmac: (purpose, value) => createHmac("sha256", hmacKey).update(`${purpose}\0${value}`).digest(),
    sealer: new Sealer(sealKeys(config), () => clock.nowMs()),
    async close() {
      await events.close();
      await queue.close();
      await inviteTokens.close();
      await counters.close();
      await redis?.close();
      await store.close();
    },
  };
}

/** Events per handler call of a worker, and how long it waits for a batch to fill. */
const EVENT_BATCH = 200;
const EVENT_LINGER_MS = 100;

/** JetStream on a deployment over NATS; in-process on the embedded default. */
async function openQueue(config: Config, log: RedisLog): Promise<EventQueue> {
  const policy: DeliveryPolicy = {
    maxDeliveries: config.eventMaxDeliveries,
    retryDelayMs: config.eventRetryDelayMs,
    batchSize: EVENT_BATCH,
    lingerMs: EVENT_LINGER_MS,
  };
  if (!config.transporter) return new MemoryQueue(policy, log);
  const { JetStreamQueue } = await import("./queue/jetstream-queue.js");
  return JetStreamQueue.open({
    url: config.transporter,
    namespace: config.namespace,
    policy,
    retentionMs: config.eventRetentionMs,
    ackWaitMs: config.eventAckWaitMs,
    log,
  });
}
