/**
 * Moleculer's metric registry (process, event loop, transit figures) written out in Prometheus's
 * text format, for the operations port (lib/ops/ops-server.ts).
 */
import { MetricReporters, type MetricRegistry } from "moleculer";

/**
 * Moleculer's Prometheus reporter without its own HTTP server: the node's metrics ask it for the
 * text. (Its stock `init` opens a second port.)
 */
export class PrometheusText extends MetricReporters.Prometheus {
  override init(registry: MetricRegistry): void {
    (MetricReporters.Base.prototype as unknown as { init(r: MetricRegistry): void }).init.call(this, registry);
    const self = this as unknown as { opts: { defaultLabels: unknown }; defaultLabels: unknown };
    self.defaultLabels =
      typeof self.opts.defaultLabels === "function" ? self.opts.defaultLabels.call(this, registry) : self.opts.defaultLabels;
  }

  override stop(): Promise<void> {
    return Promise.resolve();
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
          for (const [le, count] of Object.entries(item.buckets ?? {}))
            lines.push(`${name}_bucket${self.labelsToStr(item.labels, { le })} ${count}`);
          lines.push(`${name}_bucket${self.labelsToStr(item.labels, { le: "+Inf" })} ${item.count}`);
          lines.push(
            `${name}_sum${self.labelsToStr(item.labels)} ${item.sum}`,
            `${name}_count${self.labelsToStr(item.labels)} ${item.count}`,
          );
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

/** What this uses of Moleculer's reporter and registry (typed loosely there). */
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
