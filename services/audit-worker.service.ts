/**
 * The audit worker: takes the domain events off the queue (durable consumer `audit`) and appends
 * them to their organizations' hash chains in the store. Idempotent by event id, so a redelivery
 * (after a crash, a timeout) records nothing twice.
 */
import type { Context, ServiceSchema } from "moleculer";
import type { DomainEvent } from "../lib/domain/audit/events";
import type { Subscription } from "../lib/queue/port";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

export function auditWorkerService(rt: Runtime): ServiceSchema {
  const { queue, metrics } = rt;
  let subscription: Subscription | undefined;
  return {
    name: "audit-worker",
    actions: {
      /** For operators (REPL: `call audit-worker.deadLetters --limit 20`): what the worker gave up on. */
      deadLetters: {
        params: { limit: { type: "number", integer: true, convert: true, min: 1, max: 1000, optional: true } },
        handler: (ctx: Context<{ limit?: number }>) => queue.deadLetters("audit", ctx.params.limit ?? 100),
      },
    },
    async started() {
      const log = this.logger;
      metrics.onScrape(async () => metrics.auditPending(await queue.pending("audit")));
      subscription = await queue.consume("audit", (events) => record(rt, log, events));
    },
    async stopped() {
      await subscription?.stop();
    },
  };
}

/** One batch off the queue, appended to the audit chains; the outbox told it is handled. */
async function record({ store, events: outbox, metrics }: Runtime, log: { info(message: string): void }, events: DomainEvent[]) {
  const { alreadyRecorded } = await store.audit.appendAuditEvents(events);
  await outbox.handled(events.map((e) => e.eventId));
  // How far behind the worker is: the batch's oldest event, from when it happened to now.
  if (events.length > 0) metrics.auditRecorded(events.reduce((oldest, e) => (e.at < oldest ? e.at : oldest), events[0]!.at));
  // Delivered again after a worker died or timed out before acknowledging: recognised, skipped.
  if (alreadyRecorded > 0) log.info(`${alreadyRecorded} of ${events.length} events delivered again were already recorded`);
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(auditWorkerService);
