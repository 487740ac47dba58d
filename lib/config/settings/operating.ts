/** Operating it: logs, probes and metrics, traces, stopping. */
import type { LogFormat } from "../../ops/request-scope";
import { duration, httpUrl, int, onOff, oneOf, setting } from "../parse";

export const OPERATING_SETTINGS = {
  logFormat: setting({
    env: "LOG_FORMAT",
    default: "text",
    group: "operating",
    meaning: "`text`: one readable line (`[time] LEVEL MODULE trace=<id>: message`); `json`: one JSON object a line",
    parse: (raw): LogFormat => oneOf("LOG_FORMAT", raw, ["text", "json"] as const),
  }),
  opsPort: setting({
    env: "OPS_PORT",
    shown: "unset",
    example: "9100",
    group: "operating",
    meaning: 'this node\'s operations port: `/livez`, `/readyz`, `/metrics` (see "Operating it"); unset: none',
    parse: (raw) => (raw ? int("OPS_PORT", raw, 0, 65535) : undefined),
  }),
  metrics: setting({
    env: "METRICS",
    default: "on",
    group: "operating",
    meaning: "`off`: no metrics collected or served (only with `OPS_PORT`)",
    parse: (raw) => onOff("METRICS", raw),
  }),
  tracingZipkinUrl: setting({
    env: "TRACING_ZIPKIN_URL",
    shown: "unset",
    example: "http://127.0.0.1:9411",
    group: "operating",
    meaning:
      "a Zipkin v2 collector (`http://host:9411`; Jaeger and the OpenTelemetry Collector take Zipkin too) the node sends its spans to; unset: no tracing",
    parse: (raw) => httpUrl("TRACING_ZIPKIN_URL", raw),
  }),
  drainDelayMs: setting({
    env: "DRAIN_DELAY",
    default: "0",
    group: "operating",
    meaning: "on SIGTERM, how long the node answers not-ready while still serving, before it stops (`5s` behind a load balancer)",
    parse: (raw) => (raw === "0" ? 0 : duration("DRAIN_DELAY", raw)),
  }),
  scryptCost: setting({
    env: "SCRYPT_COST",
    default: "16384",
    group: "operating",
    meaning: "scrypt N for stored auth hashes (a power of two, at least 16384)",
    parse: (raw) => {
      const n = int("SCRYPT_COST", raw, 16384);
      if ((n & (n - 1)) !== 0) throw new Error("Setting SCRYPT_COST must be a power of two");
      return n;
    },
  }),
};
