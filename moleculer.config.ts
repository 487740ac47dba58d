/**
 * Broker options for every node of the service. One process runs every service on the embedded
 * store by default; connection settings (issue "Scale out for real") split them across processes.
 */
import os from "node:os";
import type { BrokerOptions } from "moleculer";
import type { Config } from "./lib/config";
import { SafeValidator } from "./lib/http/validator";
import { largeResultsAsStreams } from "./lib/http/large-results";
import { answerLostCalls } from "./lib/lost-calls";

export function brokerOptions(config: Config, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
  return {
    namespace: config.namespace,
    nodeID: config.nodeId ?? `${os.hostname()}-${process.pid}`,
    logger: { type: "Console", options: { level: config.logLevel, formatter: "short", colors: false, moduleColors: false } },
    logLevel: config.logLevel,
    // One process by default; with TRANSPORTER each node talks to the others over NATS. NATS
    // reconnects forever: while it is away calls fail (503) and succeed again once it is back.
    transporter: config.transporter
      ? { type: "NATS", options: { url: config.transporter, maxReconnectAttempts: -1, reconnectTimeWait: 500 } }
      : null,
    // A node that vanished without saying goodbye (a lost host) is dropped after 15 s; a process
    // that died on a live host is noticed within about 1.5 s by its calls in flight (lib/lost-calls.ts).
    heartbeatInterval: 5,
    heartbeatTimeout: 15,
    // Every call has a deadline; none is retried, so a mutation never runs twice.
    requestTimeout: config.requestTimeoutMs,
    retryPolicy: { enabled: false },
    // Stopping lets in-flight requests finish first.
    tracking: { enabled: true, shutdownTimeout: 10_000 },
    validator: new SafeValidator(),
    // Only between nodes: NATS's 1 MB message cap does not apply to calls inside one process, and
    // a process cannot die under a call to itself.
    middlewares: config.transporter ? [largeResultsAsStreams(), answerLostCalls({ url: config.transporter, namespace: config.namespace })] : [],
    metrics: { enabled: false },
    tracing: { enabled: false },
    ...overrides,
  };
}
