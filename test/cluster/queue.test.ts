/**
 * The event queue's delivery guarantees, on the real NATS JetStream of the machine and on the
 * in-process queue of the embedded default: held until a worker takes them, retried after a short
 * delay, dead-lettered when they cannot be handled, and, on JetStream, stored once per event id.
 */
import { newId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import { randomBytes } from "node:crypto";
import type { DomainEvent } from "../../lib/domain/audit/events";
import { JetStreamQueue } from "../../lib/queue/jetstream-queue";
import { MemoryQueue } from "../../lib/queue/memory-queue";
import type { DeliveryPolicy, EventQueue } from "../../lib/queue/port";
import { throwawayNats } from "../helpers/throwaway";
import { deleteStreams, NATS_URL, publishRaw, storedEvents } from "../helpers/nats";
import { eventually } from "../helpers/wait";
import { sleep } from "../helpers/wait";

jest.setTimeout(30_000);

const policy: DeliveryPolicy = { maxDeliveries: 3, retryDelayMs: 300, batchSize: 50, lingerMs: 10 };
const log = { warn: () => undefined, info: () => undefined };
const ORG = newId<OrgId>();

const event = (type: DomainEvent["type"] = "item.created"): DomainEvent => ({
  eventId: newId(),
  type,
  at: new Date().toISOString(),
  actorId: newId<UserId>(),
  orgId: ORG,
  vaultId: newId<VaultId>(),
});

const until = (check: () => boolean | Promise<boolean>, timeoutMs = 15_000) =>
  eventually("the queue to deliver", check, { timeoutMs, everyMs: 25 });

interface Subject {
  queue: EventQueue;
  namespace: string;
  close(): Promise<void>;
}

const queues: Array<[string, () => Promise<Subject>]> = [
  [
    "NATS JetStream",
    async () => {
      const namespace = `test-${randomBytes(4).toString("hex")}`;
      const queue = await JetStreamQueue.open({ url: NATS_URL, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log });
      return {
        queue,
        namespace,
        close: async () => {
          await queue.close();
          await deleteStreams(namespace);
        },
      };
    },
  ],
  [
    "in-process",
    async () => {
      const queue = new MemoryQueue(policy, log);
      return { queue, namespace: "", close: () => queue.close() };
    },
  ],
];

describe.each(queues)("event queue: %s", (_name, open) => {
  let subject: Subject;
  beforeEach(async () => {
    subject = await open();
  });
  afterEach(() => subject.close());

  test("events published while no worker runs wait for it, and reach it once each, in order", async () => {
    const sent = Array.from({ length: 120 }, () => event());
    for (const e of sent) await subject.queue.publish(e);
    const seen: DomainEvent[] = [];
    const batches: number[] = [];
    const sub = await subject.queue.consume("audit", async (events) => {
      batches.push(events.length);
      seen.push(...events);
    });
    await until(() => seen.length >= sent.length);
    await sleep(300);
    await sub.stop();
    expect(seen.map((e) => e.eventId)).toEqual(sent.map((e) => e.eventId));
    expect(seen[0]).toEqual(sent[0]);
    // Handed over in batches, not one by one.
    expect(batches.length).toBeLessThan(sent.length);
    expect(Math.max(...batches)).toBeLessThanOrEqual(policy.batchSize);
  });

  test("a handler that fails gets the event again after the retry delay, and the others go on", async () => {
    const flaky = event();
    const steady = event();
    const deliveries: number[] = [];
    const handled = new Set<string>();
    const sub = await subject.queue.consume("audit", async (events) => {
      if (events.some((e) => e.eventId === flaky.eventId)) {
        deliveries.push(Date.now());
        if (deliveries.length < 3) throw new Error("not yet");
      }
      for (const e of events) handled.add(e.eventId);
    });
    // Alone in its batches, so that each handler call is one delivery (a failed batch is retried event by event).
    await subject.queue.publish(steady);
    await until(() => handled.has(steady.eventId));
    await subject.queue.publish(flaky);
    await until(() => deliveries.length === 1);
    // Published while the failed one waits for its retry: it does not wait behind it.
    const other = event();
    await subject.queue.publish(other);
    await until(() => handled.has(other.eventId));
    expect(handled.has(flaky.eventId)).toBe(false);
    await until(() => handled.has(flaky.eventId));
    await sub.stop();
    expect(deliveries).toHaveLength(3);
    // 300 ms, then 600 ms (doubling); not the hour some adapters wait.
    expect(deliveries[1]! - deliveries[0]!).toBeGreaterThanOrEqual(250);
    expect(deliveries[2]! - deliveries[1]!).toBeGreaterThanOrEqual(550);
    expect(deliveries[2]! - deliveries[0]!).toBeLessThan(5_000);
    expect(await subject.queue.deadLetters("audit", 10)).toEqual([]);
  });

  test("an event its handler always refuses is dead-lettered after the last delivery, and never delivered again", async () => {
    const poison = event("vault.renamed");
    const after = event();
    let poisonDeliveries = 0;
    const handled = new Set<string>();
    const sub = await subject.queue.consume("audit", async (events) => {
      if (events.some((e) => e.eventId === poison.eventId)) {
        poisonDeliveries++;
        throw new TypeError("cannot handle");
      }
      for (const e of events) handled.add(e.eventId);
    });
    await subject.queue.publish(after);
    await until(() => handled.has(after.eventId));
    await subject.queue.publish(poison);
    await until(async () => (await subject.queue.deadLetters("audit", 10)).length === 1);
    await sleep(1_500);
    await sub.stop();
    expect(poisonDeliveries).toBe(policy.maxDeliveries);
    expect(handled.has(after.eventId)).toBe(true);
    const [dead] = await subject.queue.deadLetters("audit", 10);
    expect(JSON.parse(dead!.payload)).toEqual(poison);
    expect(dead).toMatchObject({ reason: "failed 3 times: TypeError", deliveries: 3 });
  });
});

describe("event queue: NATS JetStream only", () => {
  test("a message that is not an event is dead-lettered at once, unhandled; a publish repeated under one id is stored once", async () => {
    const namespace = `test-${randomBytes(4).toString("hex")}`;
    const queue = await JetStreamQueue.open({ url: NATS_URL, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log });
    try {
      const e = event();
      await queue.publish(e);
      await queue.publish(e);
      await publishRaw(namespace, "item.created", '{"eventId": "forged", "token": "s3cret"}');
      expect(await storedEvents(namespace)).toBe(2);
      const handled: DomainEvent[] = [];
      const sub = await queue.consume("audit", async (events) => void handled.push(...events));
      await until(async () => handled.length === 1 && (await queue.deadLetters("audit", 10)).length === 1);
      await sub.stop();
      expect(handled).toEqual([e]);
      const [dead] = await queue.deadLetters("audit", 10);
      expect(dead).toMatchObject({ reason: "not a domain event", deliveries: 1, payload: '{"eventId": "forged", "token": "s3cret"}' });
    } finally {
      await queue.close();
      await deleteStreams(namespace);
    }
  });

  test("a second worker process's start finds the topology in place and takes its share: nothing twice", async () => {
    const namespace = `test-${randomBytes(4).toString("hex")}`;
    const a = await JetStreamQueue.open({ url: NATS_URL, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log });
    const b = await JetStreamQueue.open({ url: NATS_URL, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log });
    try {
      const seen: string[] = [];
      const subs = await Promise.all(
        [a, b].map((q) => q.consume("audit", async (events) => void seen.push(...events.map((e) => e.eventId)))),
      );
      const sent = Array.from({ length: 200 }, () => event());
      await Promise.all(sent.map((e) => (sent.indexOf(e) % 2 ? a : b).publish(e)));
      await until(() => seen.length >= 200);
      await sleep(500);
      await Promise.all(subs.map((s) => s.stop()));
      expect(seen).toHaveLength(200);
      expect(new Set(seen)).toEqual(new Set(sent.map((e) => e.eventId)));
    } finally {
      await a.close();
      await b.close();
      await deleteStreams(namespace);
    }
  });

  test("NATS restarted: the worker resumes by itself and handles every event published after, once each", async () => {
    const namespace = `test-${randomBytes(4).toString("hex")}`;
    const warnings: string[] = [];
    const watched = { warn: (m: string) => void warnings.push(m), info: () => undefined };
    // A NATS of the test's own: the one it stops and restarts.
    const nats = await throwawayNats();
    const url = nats.url;
    const publisher = await JetStreamQueue.open({ url, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log });
    const worker = await JetStreamQueue.open({ url, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log: watched });
    try {
      const seen: string[] = [];
      const sub = await worker.consume("audit", async (events) => void seen.push(...events.map((e) => e.eventId)));
      const first = event();
      await publisher.publish(first);
      await until(() => seen.length === 1);
      try {
        await nats.stop();
        await sleep(1_000);
      } finally {
        await nats.start();
      }
      const upAt = Date.now();
      const later = Array.from({ length: 3 }, () => event());
      for (const e of later) {
        for (;;) {
          try {
            await publisher.publish(e);
            break;
          } catch {
            await sleep(100); // JetStream not ready yet
          }
        }
      }
      await until(() => seen.length >= 4, 10_000);
      const caughtUp = Date.now() - upAt;
      await sleep(300);
      await sub.stop();
      expect(seen).toEqual([first, ...later].map((e) => e.eventId));
      expect(caughtUp).toBeLessThan(10_000);
      expect(warnings.join("\n")).toMatch(/a pull got no answer/);
    } finally {
      await worker.close();
      await publisher.close();
      await nats.destroy();
    }
  });

  test("an idle worker's pulls leave no subscription behind on its connection", async () => {
    const namespace = `test-${randomBytes(4).toString("hex")}`;
    const queue = await JetStreamQueue.open({ url: NATS_URL, namespace, policy, retentionMs: 3_600_000, ackWaitMs: 5_000, log });
    try {
      // The client's connection internals: the one place that counts its subscriptions.
      const subscriptions = () =>
        (queue as unknown as { nc: { protocol: { subscriptions: { size(): number } } } }).nc.protocol.subscriptions.size();
      const before = subscriptions();
      const sub = await queue.consume("audit", async () => undefined);
      await queue.publish(event());
      await sleep(1_000); // about 60 pulls at a 10 ms linger, most of them empty
      expect(subscriptions() - before).toBeLessThanOrEqual(1);
      await sub.stop();
      expect(subscriptions()).toBe(before);
    } finally {
      await queue.close();
      await deleteStreams(namespace);
    }
  });
});
