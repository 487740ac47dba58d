/**
 * Statements built and compiled once, then run with new values. Building and compiling
 * a Kysely query costs more than the database's answer for a handful of rows: a fifth of an item
 * create's CPU in the split deployment went to it. A statement is built with named stand-ins
 * (`param`) in place of its values, compiled at its first use on a database (once per dialect:
 * SQLite and PostgreSQL write different SQL), and each run binds the values by name, so the order
 * Kysely gives the placeholders does not matter.
 *
 * A stand-in is only ever read at compile time: the values of a run are bound as parameters, never
 * compared with the stand-ins, so no value sent by a client can take the place of another.
 */
import type { Compilable, CompiledQuery, DialectAdapter, Kysely, QueryResult, RawBuilder } from "kysely";
import type { EngineOps, Db } from "./context";
import type { Database } from "./schema";

/** No value a statement is built with starts with a NUL character. */
const STAND_IN = "\u0000prepared:";

/** The stand-in for the value named `name`, typed as the column it stands in for. */
export function param<T>(name: string): T {
  return `${STAND_IN}${name}` as T;
}

type Slot = { name: string } | { value: unknown };

interface Compiled<R> {
  query: CompiledQuery<R>;
  slots: Slot[];
}

export class Prepared<R> {
  /** Compiled once per dialect (its adapter: one per Kysely instance, shared by its transactions). */
  private readonly compiled = new WeakMap<DialectAdapter, Compiled<R>>();

  constructor(
    /** The statement's name, where the engine prepares it once per connection (PostgreSQL). */
    readonly name: string,
    private readonly build: (db: Db) => Compilable<R> | RawBuilder<R>,
  ) {}

  private of(db: Db): Compiled<R> {
    const adapter = db.getExecutor().adapter;
    let c = this.compiled.get(adapter);
    if (!c) {
      const built = this.build(db);
      // A raw statement (`sql```) compiles against a database; a query builder knows its own.
      const query = "isRawBuilder" in built ? built.compile(db) : built.compile();
      const slots = query.parameters.map((p): Slot => {
        if (typeof p === "string" && p.startsWith(STAND_IN)) return { name: p.slice(STAND_IN.length) };
        // A constant of the statement (`change_seq + 1`). A string here would be a value the build
        // captured, bound for ever at its first use: refused, it must be a `param`.
        if (typeof p === "number" || typeof p === "boolean" || p === null) return { value: p };
        throw new Error(`Prepared ${this.name}: a value that is neither a param nor a number (${typeof p})`);
      });
      this.compiled.set(adapter, (c = { query, slots }));
      nameText(query.sql, this.name);
    }
    return c;
  }

  private bind(c: Compiled<R>, values: Readonly<Record<string, unknown>>): unknown[] {
    return c.slots.map((s) => {
      if ("value" in s) return s.value;
      const v = values[s.name];
      if (v === undefined) throw new Error(`Prepared ${this.name}: no value for ${s.name}`);
      return v;
    });
  }

  /** Runs in `db`: a transaction's connection, or the pool. */
  async run(db: Db, values: Readonly<Record<string, unknown>>): Promise<QueryResult<R>> {
    const c = this.of(db);
    return db.executeQuery<R>({ ...c.query, parameters: this.bind(c, values) });
  }

  /** Its rows, read on the pool; PostgreSQL prepares it once per pooled connection (a named statement). */
  async rows(db: Kysely<Database>, engine: EngineOps, values: Readonly<Record<string, unknown>>): Promise<R[]> {
    const c = this.of(db);
    return engine.runPrepared<R>(db, c.query, this.bind(c, values));
  }
}

/**
 * Each compiled statement's text, and its name: the PostgreSQL engine runs these as named
 * statements wherever they run (the pool, or a transaction's connection through Kysely), so that
 * each connection parses and plans one once, then only binds values (postgres.ts). One name per
 * text, never two texts under one name (PostgreSQL refuses that on a connection): a statement's
 * second text (its other dialect's) takes its name with `#1`, and a text two statements share
 * keeps its first name.
 */
const PREPARED_TEXTS = new Map<string, string>();
const TEXTS_NAMED = new Map<string, number>();

function nameText(text: string, name: string): void {
  if (PREPARED_TEXTS.has(text)) return;
  const before = TEXTS_NAMED.get(name) ?? 0;
  TEXTS_NAMED.set(name, before + 1);
  PREPARED_TEXTS.set(text, before === 0 ? name : `${name}#${before}`);
}

/** The name a statement of this text is prepared under, if it is one of these statements. */
export function preparedName(text: string): string | undefined {
  return PREPARED_TEXTS.get(text);
}

/** The names taken: PostgreSQL refuses a second statement of the same name on a connection. */
const NAMES = new Set<string>();

/** A statement compiled once (see above); `build` makes it with `param` stand-ins for its values. */
export function prepared<R>(name: string, build: (db: Db) => Compilable<R> | RawBuilder<R>): Prepared<R> {
  if (NAMES.has(name)) throw new Error(`Prepared: a second statement named ${name}`);
  NAMES.add(name);
  return new Prepared(name, build);
}
