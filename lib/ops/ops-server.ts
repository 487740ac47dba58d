/**
 * Every node's operations port (OPS_PORT), apart from the public API: probes and metrics.
 *
 * - `GET /livez`: 200 while the process answers at all.
 * - `GET /readyz`: 200 `{ status: "ready" }` when the node should get traffic; else 503
 *   `{ status: "not ready", reasons: [...] }`: while starting, while its store or NATS is
 *   unreachable, and while draining after SIGTERM.
 * - `GET /metrics`: Prometheus text (Moleculer's metrics and the service's own), when METRICS is on.
 *
 * It listens before the node starts (readiness says "starting" during migrations) and closes last.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { MetricReporters, type MetricRegistry } from "moleculer";

/**
 * Moleculer's Prometheus reporter without its own HTTP server: the ops server asks it for the
 * text. (Its stock `init` opens a second port.)
 */
export class PrometheusText extends MetricReporters.Prometheus {
  override init(registry: MetricRegistry): void {
    (MetricReporters.Base.prototype as unknown as { init(r: MetricRegistry): void }).init.call(this, registry);
    const self = this as unknown as { opts: { defaultLabels: unknown }; defaultLabels: unknown };
    self.defaultLabels = typeof self.opts.defaultLabels === "function" ? self.opts.defaultLabels.call(this, registry) : self.opts.defaultLabels;
  }

  override stop(): Promise<void> {
    return Promise.resolve();
  }

  /** The reporter a broker's metrics run, when they are on. */
  static of(registry: MetricRegistry): PrometheusText | undefined {
    const reporters = (registry as unknown as { reporter?: unknown[] }).reporter ?? [];
    return reporters.find((r): r is PrometheusText => r instanceof PrometheusText);
  }

  /**
   * The standard text exposition: counters and gauges as they are; histograms as cumulative
   * `_bucket` series with `_sum` and `_count`. (The stock reporter leaves `_sum`/`_count` out of
   * bucket-only histograms, and adds `_rate`, `_min`, `_mean`... series Prometheus does not expect.)
   */
  text(): string {
    const self = this as unknown as Reporter;
    const lines: string[] = [];
    for (const metric of self.registry.store.values()) {
      // Not the clock (a label per second), nor the process's command line (it is nobody's business).
      if (!self.matchMetricName(metric.name) || metric.name.startsWith("os.datetime") || metric.name === "process.arguments") continue;
      const snapshot = metric.snapshot();
      if (snapshot.length === 0) continue;
      const name = self.formatMetricName(metric.name).replace(/[.-]/g, "_");
      const type = metric.type === "info" ? "gauge" : metric.type;
      lines.push(`# HELP ${name} ${(metric.description ?? metric.name).replace(/\n/g, " ")}`, `# TYPE ${name} ${type}`);
      for (const item of snapshot) {
        if (metric.type === "histogram") {
          for (const [le, count] of Object.entries(item.buckets ?? {})) lines.push(`${name}_bucket${self.labelsToStr(item.labels, { le })} ${count}`);
          lines.push(`${name}_bucket${self.labelsToStr(item.labels, { le: "+Inf" })} ${item.count}`);
          lines.push(`${name}_sum${self.labelsToStr(item.labels)} ${item.sum}`, `${name}_count${self.labelsToStr(item.labels)} ${item.count}`);
        } else if (metric.type === "info") {
          lines.push(`${name}${self.labelsToStr(item.labels, { value: item.value })} 1`);
        } else {
          lines.push(`${name}${self.labelsToStr(item.labels)} ${item.value ?? "NaN"}`);
        }
      }
    }
    return `${lines.join("\n")}\n`;
  }
}

/** What the ops server uses of Moleculer's reporter and registry (typed loosely there). */
interface Reporter {
  registry: { store: Map<string, { name: string; type: string; description?: string; snapshot(): SnapshotItem[] }> };
  matchMetricName(name: string): boolean;
  formatMetricName(name: string): string;
  labelsToStr(labels: Record<string, unknown>, extra?: Record<string, unknown>): string;
}

interface SnapshotItem {
  labels: Record<string, unknown>;
  value?: unknown;
  buckets?: Record<string, number>;
  count?: number;
  sum?: number;
}

export interface OpsHandlers {
  /** Why the node should not get traffic now; empty when it is ready. */
  notReadyBecause(): Promise<string[]>;
  /** The metrics text, or undefined when metrics are off. */
  metrics(): Promise<string | undefined>;
}

export class OpsServer {
  private constructor(private readonly server: http.Server) {}

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  static async start(port: number, host: string, handlers: OpsHandlers): Promise<OpsServer> {
    const server = http.createServer((req, res) => {
      req.resume();
      void answer(req, handlers).then(({ status, type, body }) => {
        res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
        res.end(body);
      }, () => {
        res.writeHead(500, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ status: "error" }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new OpsServer(server);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

const JSON_TYPE = "application/json; charset=utf-8";

async function answer(req: http.IncomingMessage, handlers: OpsHandlers): Promise<{ status: number; type: string; body: string }> {
  const path = (req.url ?? "").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") return { status: 405, type: JSON_TYPE, body: JSON.stringify({ status: "method not allowed" }) };
  if (path === "/livez") return { status: 200, type: JSON_TYPE, body: JSON.stringify({ status: "alive" }) };
  if (path === "/readyz") {
    const reasons = await handlers.notReadyBecause();
    return reasons.length === 0
      ? { status: 200, type: JSON_TYPE, body: JSON.stringify({ status: "ready" }) }
      : { status: 503, type: JSON_TYPE, body: JSON.stringify({ status: "not ready", reasons }) };
  }
  if (path === "/metrics") {
    const text = await handlers.metrics();
    if (text !== undefined) return { status: 200, type: "text/plain; version=0.0.4; charset=utf-8", body: text };
  }
  return { status: 404, type: JSON_TYPE, body: JSON.stringify({ status: "not found" }) };
}
