// A node's metrics: Moleculer's own and lean counters for every action call and the service's figures.
// Design: docs/design/metrics.md
import type { BrokerOptions, Context, Middleware, ServiceBroker } from "moleculer";
import type { PoolUsage } from "../store/port";
import { answersWithin } from "./answers-within";
import { Counter, Families, Gauge, Histogram, type HistogramCell } from "./metric-families";
import { PrometheusText } from "./prometheus-text";

const COLLECT_TIMEOUT_MS = 1_000;
const LATENCY_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

class Figures {
  /** Moleculer's own figures, through its registry. */
  readonly moleculer = new PrometheusText();
  readonly families = new Families();
  readonly requests = this.families.add(new Counter("moleculer_request_total", "Action calls", ["service", "action", "type"]));
  readonly active = this.families.add(new Gauge("moleculer_request_active", "Action calls in progress", ["service", "action", "type"]));
  readonly time = this.families.add(
    new Histogram("moleculer_request_time", "Action call time in milliseconds", ["service", "action", "type"], LATENCY_BUCKETS_MS),
  );
  readonly errors = this.families.add(
    new Counter("moleculer_request_error_total", "Action calls that failed", ["service", "action", "type", "errorName", "errorCode"]),
  );
  readonly http = this.families.add(
    new Counter("vault_http_requests_total", "HTTP requests by route and status", ["route", "method", "status"]),
  );
  readonly httpTime = this.families.add(
    new Histogram("vault_http_request_duration", "HTTP request duration in milliseconds", ["route"], LATENCY_BUCKETS_MS),
  );
  readonly rekeys = this.families.add(new Counter("vault_rekeys_total", "Rekeys committed", []));
  readonly rekeyItems = this.families.add(
    new Histogram("vault_rekey_items", "Items re-encrypted per rekey", [], [0, 10, 100, 1000, 10000, 100000]),
  );
  readonly rekeyTime = this.families.add(
    new Histogram("vault_rekey_duration", "Rekey duration in milliseconds, body read to commit", [], LATENCY_BUCKETS_MS),
  );
  readonly invitesCreated = this.families.add(new Counter("vault_invites_created_total", "Invites created", []));
  readonly invitesRedeemed = this.families.add(new Counter("vault_invites_redeemed_total", "Invites consumed by a registration", []));
  readonly loginFailures = this.families.add(new Counter("vault_login_failures_total", "Failed logins (wrong credentials)", []));
  readonly rateLimited = this.families.add(new Counter("vault_rate_limited_total", "Requests refused by a rate limit (429)", ["limit"]));
  readonly auditPending = this.families.add(
    new Gauge("vault_audit_events_pending", "Domain events not yet recorded by the audit worker", []),
  );
  readonly auditLag = this.families.add(
    new Gauge("vault_audit_lag", "Seconds from the oldest event of the audit worker's last batch to its record", []),
  );
  readonly pool = this.families.add(
    new Gauge("vault_store_pool_connections", "PostgreSQL pool connections: total, idle, and requests waiting for one", ["state"]),
  );
}

export class ServiceMetrics {
  private readonly collectors: Array<() => Promise<void> | void> = [];

  private constructor(private readonly figures: Figures | undefined) {}

  /** Metrics off: every method does nothing. */
  static off(): ServiceMetrics {
    return new ServiceMetrics(undefined);
  }

  static on(): ServiceMetrics {
    return new ServiceMetrics(new Figures());
  }

  get enabled(): boolean {
    return this.figures !== undefined;
  }

  /** The broker's metrics options: its registry on, reporting to this, exactly when this is on. */
  brokerOptions(): BrokerOptions["metrics"] {
    // Process figures whatever NODE_ENV says (Moleculer skips them under "test").
    return this.figures ? { enabled: true, collectProcessMetrics: true, reporter: [this.figures.moleculer as never] } : { enabled: false };
  }

  /**
   * Counts every action call (the broker's middleware): takes each action's series once, when the
   * action is registered, and replaces Moleculer's own metrics middleware, which keeps the same
   * series at several times the cost.
   */
  actionMetrics(): Middleware {
    const f = this.figures;
    const wrap =
      (type: "local" | "remote") =>
      (next: (ctx: Context) => Promise<unknown>, action: { name: string; service?: { fullName?: string } }) => {
        if (!f) return next;
        const labels = { service: action.service?.fullName ?? action.name.split(".")[0]!, action: action.name, type };
        const total = f.requests.cell(labels);
        const active = f.active.cell(labels);
        const time = f.time.cell(labels);
        return (ctx: Context) => {
          total.value++;
          active.value++;
          const started = performance.now();
          return next(ctx).then(
            (res) => {
              active.value--;
              f.time.record(time, performance.now() - started);
              return res;
            },
            (err: { name?: string; code?: unknown } | undefined) => {
              active.value--;
              f.time.record(time, performance.now() - started);
              f.errors.inc({ ...labels, errorName: err?.name ?? "", errorCode: String(err?.code ?? "") });
              throw err;
            },
          );
        };
      };
    return {
      name: "ActionMetrics",
      created(broker: ServiceBroker) {
        // Out of the list and out of every hook it registered (Moleculer wraps handlers from the hooks).
        const handler = broker.middlewares as unknown as {
          list: Array<Record<string, unknown>>;
          registeredHooks: Record<string, unknown[]>;
        };
        const stock = handler.list.find((m) => m.name === "Metrics");
        if (!stock) return;
        handler.list.splice(handler.list.indexOf(stock), 1);
        for (const [hook, fns] of Object.entries(handler.registeredHooks))
          handler.registeredHooks[hook] = fns.filter((fn) => fn !== stock[hook]);
      },
      localAction: wrap("local"),
      remoteAction: wrap("remote"),
    } as unknown as Middleware;
  }

  /**
   * Everything in Prometheus's text format, `common` labels on this service's own series
   * (Moleculer's reporter adds the same ones to its): the on-demand figures are collected first.
   * Undefined when metrics are off.
   */
  async text(common: Record<string, string>): Promise<string | undefined> {
    if (!this.figures) return undefined;
    await this.collect();
    return `${this.figures.moleculer.text()}${this.figures.families.text(common)}\n`;
  }

  /** The cells of each route, method and status, found by one string. */
  private readonly httpCells = new Map<string, { count: { value: number }; time: HistogramCell }>();

  httpRequest(route: string, method: string, status: number, ms: number): void {
    const f = this.figures;
    if (!f) return;
    const key = `${route} ${method} ${status}`;
    let cells = this.httpCells.get(key);
    if (!cells) {
      cells = { count: f.http.cell({ route, method, status }), time: f.httpTime.cell({ route }) };
      this.httpCells.set(key, cells);
    }
    cells.count.value++;
    f.httpTime.record(cells.time, ms);
  }

  rekey(items: number, ms: number): void {
    if (!this.figures) return;
    this.figures.rekeys.inc();
    this.figures.rekeyItems.observe(items);
    this.figures.rekeyTime.observe(ms);
  }

  inviteCreated(): void {
    this.figures?.invitesCreated.inc();
  }

  inviteRedeemed(): void {
    this.figures?.invitesRedeemed.inc();
  }

  loginFailed(): void {
    this.figures?.loginFailures.inc();
  }

  rateLimited(limit: "login" | "redeem" | "prelogin" | "register" | "send-password" | "send-open"): void {
    this.figures?.rateLimited.inc({ limit });
  }

  auditRecorded(oldestEventAt: string): void {
    const lagSec = (Date.now() - Date.parse(oldestEventAt)) / 1000;
    if (Number.isFinite(lagSec)) this.figures?.auditLag.set(Math.max(0, lagSec));
  }

  auditPending(count: number): void {
    this.figures?.auditPending.set(count);
  }

  storePool(usage: PoolUsage): void {
    if (!this.figures) return;
    for (const state of ["total", "idle", "waiting"] as const) this.figures.pool.set(usage[state], { state });
  }

  /** `fn` runs before each scrape: for figures read on demand (pool usage, pending events). */
  onScrape(fn: () => Promise<void> | void): void {
    if (this.figures) this.collectors.push(fn);
  }

  /** Brings the on-demand figures up to date; a collector that fails or takes over a second leaves its last value. */
  private async collect(): Promise<void> {
    // NATS or the store away: the figure keeps its last value; readiness says why.
    await Promise.all(this.collectors.map((fn) => answersWithin(Promise.resolve().then(fn), COLLECT_TIMEOUT_MS)));
  }
}
