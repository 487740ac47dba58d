/**
 * The service's own metrics, beside Moleculer's (calls, latency histograms per action, process
 * and event-loop figures). Registered on the broker's metric registry, so the same Prometheus
 * output carries both. With metrics off (no OPS_PORT, or METRICS=off) every method does nothing.
 *
 * Names as Prometheus shows them (Moleculer turns dots into underscores):
 * - `vault_http_requests_total{route,method,status}`, `vault_http_request_duration{route}` (ms)
 * - `vault_rekeys_total`, `vault_rekey_items`, `vault_rekey_duration` (ms)
 * - `vault_invites_created_total`, `vault_invites_redeemed_total` (consumed by a registration)
 * - `vault_login_failures_total`, `vault_rate_limited_total{limit}`
 * - `vault_audit_events_pending`, `vault_audit_lag` (s, from an event to its audit record)
 * - `vault_store_pool_connections{state}` (PostgreSQL: total, idle, waiting)
 */
import type { ServiceBroker } from "moleculer";
import type { PoolUsage } from "../store/port";

type Registry = ServiceBroker["metrics"];

const COLLECT_TIMEOUT_MS = 1_000;
const LATENCY_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

export class ServiceMetrics {
  private readonly collectors: Array<() => Promise<void> | void> = [];

  private constructor(private readonly registry: Registry | undefined) {}

  /** A no-op instance: for tests and tools that run services without a broker's metrics. */
  static off(): ServiceMetrics {
    return new ServiceMetrics(undefined);
  }

  /** Registers the service's metrics on the broker (when its metrics are on). */
  static of(broker: ServiceBroker): ServiceMetrics {
    if (!broker.isMetricsEnabled()) return ServiceMetrics.off();
    const r = broker.metrics;
    r.register({ type: "counter", name: "vault.http.requests.total", labelNames: ["route", "method", "status"], description: "HTTP requests by route and status", rate: true });
    r.register({ type: "histogram", name: "vault.http.request.duration", labelNames: ["route"], unit: "millisecond", buckets: LATENCY_BUCKETS_MS, description: "HTTP request duration" });
    r.register({ type: "counter", name: "vault.rekeys.total", description: "Rekeys committed" });
    r.register({ type: "histogram", name: "vault.rekey.items", buckets: [0, 10, 100, 1000, 10000, 100000], description: "Items re-encrypted per rekey" });
    r.register({ type: "histogram", name: "vault.rekey.duration", unit: "millisecond", buckets: LATENCY_BUCKETS_MS, description: "Rekey duration, body read to commit" });
    r.register({ type: "counter", name: "vault.invites.created.total", description: "Invites created" });
    r.register({ type: "counter", name: "vault.invites.redeemed.total", description: "Invites consumed by a registration" });
    r.register({ type: "counter", name: "vault.login.failures.total", description: "Failed logins (wrong credentials)" });
    r.register({ type: "counter", name: "vault.rate.limited.total", labelNames: ["limit"], description: "Requests refused by a rate limit (429)" });
    r.register({ type: "gauge", name: "vault.audit.events.pending", description: "Domain events not yet recorded by the audit worker" });
    r.register({ type: "gauge", name: "vault.audit.lag", unit: "second", description: "Age of the newest batch's oldest event when the audit worker recorded it" });
    r.register({ type: "gauge", name: "vault.store.pool.connections", labelNames: ["state"], description: "PostgreSQL pool connections: total, idle, and requests waiting for one" });
    return new ServiceMetrics(r);
  }

  get enabled(): boolean {
    return this.registry !== undefined;
  }

  httpRequest(route: string, method: string, status: number, ms: number): void {
    if (!this.registry) return;
    this.registry.increment("vault.http.requests.total", { route, method, status });
    this.registry.observe("vault.http.request.duration", ms, { route });
  }

  rekey(items: number, ms: number): void {
    if (!this.registry) return;
    this.registry.increment("vault.rekeys.total");
    this.registry.observe("vault.rekey.items", items);
    this.registry.observe("vault.rekey.duration", ms);
  }

  inviteCreated(): void {
    this.registry?.increment("vault.invites.created.total");
  }

  inviteRedeemed(): void {
    this.registry?.increment("vault.invites.redeemed.total");
  }

  loginFailed(): void {
    this.registry?.increment("vault.login.failures.total");
  }

  rateLimited(limit: "login" | "redeem" | "rekey"): void {
    this.registry?.increment("vault.rate.limited.total", { limit });
  }

  auditRecorded(oldestEventAt: string): void {
    const lagSec = (Date.now() - Date.parse(oldestEventAt)) / 1000;
    if (Number.isFinite(lagSec)) this.registry?.set("vault.audit.lag", Math.max(0, lagSec));
  }

  auditPending(count: number): void {
    this.registry?.set("vault.audit.events.pending", count);
  }

  storePool(usage: PoolUsage): void {
    if (!this.registry) return;
    for (const state of ["total", "idle", "waiting"] as const) this.registry.set("vault.store.pool.connections", usage[state], { state });
  }

  /** `fn` runs before each scrape: for figures read on demand (pool usage, pending events). */
  onScrape(fn: () => Promise<void> | void): void {
    if (this.registry) this.collectors.push(fn);
  }

  /** Brings the on-demand figures up to date; a collector that fails or takes over a second leaves its last value. */
  async collect(): Promise<void> {
    await Promise.all(this.collectors.map(async (fn) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([fn(), new Promise((resolve) => (timer = setTimeout(resolve, COLLECT_TIMEOUT_MS)))]);
      } catch {
        // NATS or the store away: the figure keeps its last value; readiness says why.
      } finally {
        clearTimeout(timer);
      }
    }));
  }
}
