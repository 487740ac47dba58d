/**
 * How a worker settles what the queue delivered, the same on every queue: one place for the
 * retry, the delay and the dead-letter rules (see lib/queue/port.ts).
 */
import { AppError } from "../errors";
import { parseDomainEvent, type DomainEvent } from "../domain/audit/events";
import type { BatchHandler, DeliveryPolicy } from "./port";

export const MAX_RETRY_DELAY_MS = 30_000;

/** One delivery of one message, as a queue hands it over. */
export interface Delivery {
  /** The message body as published. */
  payload: string;
  /** 1 on the first delivery. */
  deliveryCount: number;
  ack(): void;
  /** Deliver again after `delayMs`. */
  retry(delayMs: number): void;
  /** Set it aside for an operator and never deliver it again. */
  deadLetter(reason: string): Promise<void>;
}

export interface SettleLog {
  warn(message: string): void;
}

/** Delay before delivery number `deliveryCount + 1`. */
export function retryDelay(policy: DeliveryPolicy, deliveryCount: number): number {
  return Math.min(policy.retryDelayMs * 2 ** Math.max(0, deliveryCount - 1), MAX_RETRY_DELAY_MS);
}

/** Failures that say "not now" rather than "never": they are retried without limit. */
export function isTransient(err: unknown): boolean {
  return err instanceof AppError && err.type === "UNAVAILABLE";
}

function decode(payload: string): DomainEvent | null {
  try {
    return parseDomainEvent(JSON.parse(payload));
  } catch {
    return null;
  }
}

/**
 * Handles a batch in one call; when that fails for a reason other than an unavailable store, each
 * event again on its own, so one poison message cannot hold back the others.
 */
export async function settleBatch(deliveries: Delivery[], handler: BatchHandler, policy: DeliveryPolicy, log: SettleLog): Promise<void> {
  const good: Array<{ delivery: Delivery; event: DomainEvent }> = [];
  for (const delivery of deliveries) {
    const event = decode(delivery.payload);
    if (event) good.push({ delivery, event });
    else await deadLetter(delivery, "not a domain event", log);
  }
  if (good.length === 0) return;
  try {
    await handler(good.map((g) => g.event));
    for (const g of good) g.delivery.ack();
    return;
  } catch (err) {
    if (good.length === 1 || isTransient(err)) {
      for (const g of good) await fail(g.delivery, g.event, err, policy, log);
      return;
    }
  }
  for (const g of good) {
    try {
      await handler([g.event]);
      g.delivery.ack();
    } catch (err) {
      await fail(g.delivery, g.event, err, policy, log);
    }
  }
}

async function fail(delivery: Delivery, event: DomainEvent, err: unknown, policy: DeliveryPolicy, log: SettleLog): Promise<void> {
  if (!isTransient(err) && delivery.deliveryCount >= policy.maxDeliveries) {
    await deadLetter(delivery, `failed ${delivery.deliveryCount} times: ${describe(err)}`, log);
    return;
  }
  const delayMs = retryDelay(policy, delivery.deliveryCount);
  // Ids and types only: the event carries nothing secret, the error message may quote a driver.
  log.warn(
    `event ${event.eventId} (${event.type}) failed on delivery ${delivery.deliveryCount} (${describe(err)}); retry in ${delayMs} ms`,
  );
  delivery.retry(delayMs);
}

async function deadLetter(delivery: Delivery, reason: string, log: SettleLog): Promise<void> {
  try {
    await delivery.deadLetter(reason);
    log.warn(`a message was dead-lettered after ${delivery.deliveryCount} deliveries: ${reason}`);
  } catch (err) {
    // Not set aside: deliver it again rather than lose it.
    log.warn(`a message could not be dead-lettered (${describe(err)}); retrying it`);
    delivery.retry(MAX_RETRY_DELAY_MS);
  }
}

/** The error's class and code, never its message (a driver may quote values in it). */
function describe(err: unknown): string {
  if (err instanceof AppError) return String(err.type);
  const e = err as { name?: unknown; code?: unknown };
  return [typeof e?.name === "string" ? e.name : "Error", typeof e?.code === "string" || typeof e?.code === "number" ? String(e.code) : ""]
    .filter(Boolean)
    .join(" ");
}
