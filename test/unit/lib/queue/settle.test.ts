/** The queue's settle rules (lib/queue/settle.ts: settleBatch, retryDelay): each delivery acknowledged, retried or dead-lettered. */
import { AppError } from "../../../../lib/errors";
import type { DomainEvent } from "../../../../lib/domain/audit/events";
import { retryDelay, settleBatch, type Delivery } from "../../../../lib/queue/settle";
import type { DeliveryPolicy } from "../../../../lib/queue/port";
import { event } from "../../../helpers/domain-event";

describe("settling deliveries", () => {
  const policy: DeliveryPolicy = { maxDeliveries: 3, retryDelayMs: 1000, batchSize: 100, lingerMs: 10 };
  const log = { warn: () => undefined };

  interface Outcome {
    acked: boolean;
    retriedIn?: number;
    dead?: string;
  }
  function deliveries(payloads: string[], deliveryCount = 1): { list: Delivery[]; outcomes: Outcome[] } {
    const outcomes: Outcome[] = payloads.map(() => ({ acked: false }));
    const list = payloads.map((payload, i): Delivery => ({
      payload,
      deliveryCount,
      ack: () => void (outcomes[i]!.acked = true),
      retry: (ms) => void (outcomes[i]!.retriedIn = ms),
      deadLetter: async (reason) => void (outcomes[i]!.dead = reason),
    }));
    return { list, outcomes };
  }

  test("handled events are acknowledged in one batch; poison is dead-lettered at once and never handled", async () => {
    const good = [event(), event()];
    const { list, outcomes } = deliveries([JSON.stringify(good[0]), "{not json", JSON.stringify(good[1]), JSON.stringify({ type: "x" })]);
    const calls: DomainEvent[][] = [];
    await settleBatch(list, async (events) => void calls.push(events), policy, log);
    expect(calls).toEqual([good]);
    expect(outcomes.map((o) => o.acked)).toEqual([true, false, true, false]);
    expect(outcomes[1]!.dead).toBe("not a domain event");
    expect(outcomes[3]!.dead).toBe("not a domain event");
  });

  test("one failing event does not hold back its batch: it is retried after a growing delay, then dead-lettered", async () => {
    const bad = event();
    const ok = event();
    const handler = async (events: DomainEvent[]) => {
      if (events.some((e) => e.eventId === bad.eventId)) throw new Error("boom");
    };
    const first = deliveries([JSON.stringify(bad), JSON.stringify(ok)], 1);
    await settleBatch(first.list, handler, policy, log);
    expect(first.outcomes).toEqual([{ acked: false, retriedIn: 1000 }, { acked: true }]);
    const second = deliveries([JSON.stringify(bad)], 2);
    await settleBatch(second.list, handler, policy, log);
    expect(second.outcomes).toEqual([{ acked: false, retriedIn: 2000 }]);
    const last = deliveries([JSON.stringify(bad)], 3);
    await settleBatch(last.list, handler, policy, log);
    expect(last.outcomes[0]).toMatchObject({ acked: false, dead: expect.stringMatching(/^failed 3 times: Error/) });
    expect(retryDelay(policy, 10)).toBe(30_000);
  });

  test("an unavailable store is retried without limit, never dead-lettered", async () => {
    const { list, outcomes } = deliveries([JSON.stringify(event()), JSON.stringify(event())], 50);
    await settleBatch(
      list,
      async () => {
        throw new AppError("UNAVAILABLE", "db down");
      },
      policy,
      log,
    );
    expect(outcomes).toEqual([
      { acked: false, retriedIn: 30_000 },
      { acked: false, retriedIn: 30_000 },
    ]);
  });
});
