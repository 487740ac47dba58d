/**
 * Counters, gauges and histograms for the hot path, written out in Prometheus's text format.
 *
 * Why not Moleculer's registry for these: its per-call metrics hash every label set on every
 * update (five updates a call), keep a rate and a quantile reservoir per series, and cost GET
 * /vaults about 30% of its throughput (BENCHMARKS.md). Here a series is a cell taken once (per
 * action, or per route and status from a map) and updated with plain arithmetic.
 */
type LabelValues = Record<string, string | number>;

const escape = (v: string | number): string => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

function labelText(labels: LabelValues): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

abstract class Family<C> {
  private readonly cells = new Map<string, { labels: LabelValues; cell: C }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The series of these label values: take it once and keep it where the labels are fixed. */
  cell(labels: LabelValues = {}): C {
    let key = "";
    for (const n of this.labelNames) key += `${labels[n]}\u0000`;
    let entry = this.cells.get(key);
    if (!entry) {
      entry = { labels: Object.fromEntries(this.labelNames.map((n) => [n, labels[n] ?? ""])), cell: this.newCell() };
      this.cells.set(key, entry);
    }
    return entry.cell;
  }

  protected abstract newCell(): C;
  protected abstract sampleLines(name: string, labels: LabelValues, cell: C): string[];
  abstract readonly type: string;

  lines(common: LabelValues): string[] {
    if (this.cells.size === 0) return [];
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const { labels, cell } of this.cells.values()) out.push(...this.sampleLines(this.name, { ...common, ...labels }, cell));
    return out;
  }
}

export class Counter extends Family<{ value: number }> {
  readonly type: string = "counter";
  protected newCell() {
    return { value: 0 };
  }
  protected sampleLines(name: string, labels: LabelValues, cell: { value: number }) {
    return [`${name}${labelText(labels)} ${cell.value}`];
  }
  inc(labels?: LabelValues, by = 1): void {
    this.cell(labels).value += by;
  }
}

export class Gauge extends Counter {
  override readonly type: string = "gauge";
  set(value: number, labels?: LabelValues): void {
    this.cell(labels).value = value;
  }
}

export interface HistogramCell {
  buckets: number[];
  sum: number;
  count: number;
}

export class Histogram extends Family<HistogramCell> {
  readonly type: string = "histogram";
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  protected newCell(): HistogramCell {
    return { buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
  }
  /** Counts `value` in its cell (buckets hold their own counts; they are summed up when written). */
  record(cell: HistogramCell, value: number): void {
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) cell.buckets[i]!++;
    cell.sum += value;
    cell.count++;
  }
  observe(value: number, labels?: LabelValues): void {
    this.record(this.cell(labels), value);
  }
  protected sampleLines(name: string, labels: LabelValues, cell: HistogramCell) {
    const out: string[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += cell.buckets[i]!;
      out.push(`${name}_bucket${labelText({ ...labels, le })} ${cumulative}`);
    });
    out.push(`${name}_bucket${labelText({ ...labels, le: "+Inf" })} ${cell.count}`);
    out.push(`${name}_sum${labelText(labels)} ${cell.sum}`, `${name}_count${labelText(labels)} ${cell.count}`);
    return out;
  }
}

/** What a family gives to be written out. */
interface Writable {
  lines(common: LabelValues): string[];
}

/** The families of one node, written out together. */
export class Families {
  private readonly all: Writable[] = [];

  add<F extends Writable>(family: F): F {
    this.all.push(family);
    return family;
  }

  text(common: LabelValues): string {
    return this.all.flatMap((f) => f.lines(common)).join("\n");
  }
}
