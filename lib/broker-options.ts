/**
 * Broker options for every node of the service, from its settings: `app/node.ts` adds the node's
 * runtime and lifecycle to them, and `moleculer.config.ts` hands the whole to moleculer-runner. One
 * process runs every service on the embedded store by default; connection settings split them
 * across processes.
 */
import os from "node:os";
import type { BrokerOptions } from "moleculer";
import type { Config } from "./config";
import { SafeValidator } from "./http/validator";
import { largeResultsAsStreams } from "./http/large-results";
import { answerLostCalls } from "./lost-calls";
import { INFO_COALESCE_MS, restartedNodesKept } from "./restarted-nodes";
import { NatsTransporter } from "./nats-transporter";
import { logFormatter, requestScopes } from "./ops/request-scope";
import { ServiceMetrics } from "./ops/metrics";

/** Moleculer reads this option; its types do not declare it. */
const infoAtOnce: BrokerOptions["transit"] & { serviceChangedDebounceTime: number } = { serviceChangedDebounceTime: INFO_COALESCE_MS };

export function brokerOptions(config: Config, overrides: Partial<BrokerOptions> = {}, metrics = ServiceMetrics.off()): BrokerOptions {
  return {
    namespace: config.namespace,
    nodeID: config.nodeId ?? `${os.hostname()}-${process.pid}`,
    // Each line carries the id of the request it was written for (lib/ops/request-scope.ts).
    logger: {
      type: "Console",
      options: { level: config.logLevel, formatter: logFormatter(config.logFormat), colors: false, moduleColors: false },
    },
    logLevel: config.logLevel,
    // One process by default; with TRANSPORTER each node talks to the others over NATS. NATS
    // reconnects forever: while it is away calls fail (503) and succeed again once it is back.
    transporter: config.transporter
      ? new NatsTransporter({ url: config.transporter, maxReconnectAttempts: -1, reconnectTimeWait: 500 })
      : null,
    // A node that vanished without saying goodbye (a lost host) is dropped after 15 s; a process
    // that died on a live host is noticed within about 1.5 s by its calls in flight (lib/lost-calls.ts).
    heartbeatInterval: 5,
    heartbeatTimeout: 15,
    // A node tells the others its services once they have started (its INFO packet): at once, not
    // after Moleculer's default second of quiet, so a restarted node serves again that much sooner.
    // Services that start in the same moment still go out in one packet.
    transit: infoAtOnce,
    // Every call has a deadline; none is retried, so a mutation never runs twice.
    requestTimeout: config.requestTimeoutMs,
    retryPolicy: { enabled: false },
    // Stopping lets in-flight requests finish first.
    tracking: { enabled: true, shutdownTimeout: 10_000 },
    validator: new SafeValidator(),
    // Only between nodes: NATS's 1 MB message cap does not apply to calls inside one process, and
    // a process cannot die under a call to itself.
    middlewares: [
      requestScopes(),
      ...(metrics.enabled ? [metrics.actionMetrics()] : []),
      ...(config.transporter
        ? [largeResultsAsStreams(), answerLostCalls({ url: config.transporter, namespace: config.namespace }), restartedNodesKept()]
        : []),
    ],
    metrics: metrics.brokerOptions(),
    // Spans name the service, action and timing only: no params, meta or response (they hold
    // tokens, keys and ciphertext) reaches a collector.
    tracing: config.tracingZipkinUrl
      ? {
          enabled: true,
          exporter: [{ type: "Zipkin", options: { baseURL: config.tracingZipkinUrl, interval: 1 } }],
          tags: { action: { params: false, meta: false, response: false }, event: { params: false, meta: false } },
        }
      : { enabled: false },
    ...overrides,
  };
}
