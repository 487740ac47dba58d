// Calls between nodes that will never be answered (a dead process, a NATS outage, a lost request
// or answer), answered 503 within about 1.5 s instead of at the request timeout.
// Design: docs/design/lost-calls.md
import { createHash } from "node:crypto";
import type { Msg, NatsConnection, NatsError } from "nats";
import { Errors, type Context, type Middleware, type ServiceBroker } from "moleculer";

export const PROBE_AFTER_MS = 1_000;
const GRACE_MS = 1_000;
const CHECK_EVERY_MS = 250;
const PROBE_TIMEOUT_MS = 1_000;
/** A call its callee says it answered, or never saw, for this long: lost. */
const LOST_AFTER_MS = 500;
/** How long a process remembers the requests it answered (only to name the loss in the log: a request forgotten reads as never seen, and is as lost). Short, so that the memory stays small under load. */
const REMEMBER_ANSWERED_MS = 5_000;
/** How long after a reconnect (of either side) a call the callee answered or never saw counts as lost. */
const NEAR_RECONNECT_MS = 15_000;

/** What a callee's process says of a request id: handling it, answered it, or never saw it. */
export type RequestState = "working" | "answered" | "unknown";

export interface LostCallsOptions {
  url: string;
  namespace: string;
}

interface InFlight {
  /** The subject the process the call went to answers on (its node id and instance id). */
  subject: string;
  nodeID: string;
  instanceID: string;
  action: string;
  since: number;
  /** NATS was away at some moment of the call's life. */
  crossedOutage: boolean;
  /** The request id, as the callee knows it. */
  requestId: string;
  /** Since when the callee says it answered the call or never saw it (undefined: handling it, or not asked yet). */
  lostSince?: number;
  probing?: boolean;
  reject(err: Error): void;
}

/** The subject a node's process answers on: hashed, so that any node id makes a valid subject. */
export function processSubject(namespace: string, nodeID: string, instanceID: string): string {
  return `${namespace}.alive.${createHash("sha256").update(`${nodeID}\0${instanceID}`).digest("hex").slice(0, 32)}`;
}

type Next = (ctx: Context) => Promise<unknown>;

/** The callee's side: the requests from other nodes this process is handling, and those it answered (id -> when). */
class CalleeLedger {
  private readonly handling = new Set<string>();
  private readonly answered = new Map<string, number>();

  stateOf(requestId: string): RequestState {
    return this.handling.has(requestId) ? "working" : this.answered.has(requestId) ? "answered" : "unknown";
  }

  forgetOld(now: number): void {
    for (const [id, at] of this.answered) {
      if (now - at < REMEMBER_ANSWERED_MS) break; // in insertion order: the rest are newer
      this.answered.delete(id);
    }
  }

  /** Runs a call from another node, remembered as handled until it settles, then as answered. */
  track(id: string, run: () => Promise<unknown>): Promise<unknown> {
    this.handling.add(id);
    const done = () => {
      this.handling.delete(id);
      this.answered.set(id, Date.now());
    };
    return run().then(
      (value) => {
        done();
        return value;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  }
}

/** One process's watch: its calls in flight to other nodes, its probes, and its answers to theirs. */
class LostCallWatch {
  private broker!: ServiceBroker;
  private nc: NatsConnection | undefined;
  private timer: NodeJS.Timeout | undefined;
  private connected = true;
  private backSince = 0;
  /** nats's code for "no responders" (set when the driver is loaded). */
  private noResponders: string = "503";
  private readonly inFlight = new Set<InFlight>();
  private readonly probing = new Set<string>();
  private readonly ledger = new CalleeLedger();

  constructor(private readonly opts: LostCallsOptions) {}

  created(broker: ServiceBroker): void {
    this.broker = broker;
  }

  async start(): Promise<void> {
    // The driver is loaded here, by a node of a split deployment only: the embedded default never pays for it.
    const nats = await import("nats");
    this.noResponders = nats.ErrorCode.NoResponders;
    const nc = await nats.connect({
      servers: this.opts.url,
      name: `${this.opts.namespace}-process`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      waitOnFirstConnect: true,
      // A probe's failure is read by its code alone: no stack trace is built for each probe.
      noAsyncTraces: true,
    });
    this.nc = nc;
    nc.subscribe(processSubject(this.opts.namespace, this.broker.nodeID, this.broker.instanceID), {
      callback: (_err, msg) => this.answerProbe(msg),
    });
    await nc.flush();
    void this.watchConnection(nc).catch(() => undefined);
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.nc?.drain().catch(() => this.nc?.close());
  }

  /** A probe: empty (is this process alive?) or naming a request (what of it?). */
  private answerProbe(msg: Msg): void {
    const id = requestIdOf(msg.data);
    const reconnectedAgoMs = this.backSince > 0 ? Date.now() - this.backSince : undefined;
    msg.respond(id === undefined ? undefined : JSON.stringify({ state: this.ledger.stateOf(id), reconnectedAgoMs }));
  }

  private async watchConnection(conn: NatsConnection): Promise<void> {
    for await (const status of conn.status()) {
      if (status.type === "disconnect") {
        this.connected = false;
        for (const call of this.inFlight) call.crossedOutage = true;
      } else if (status.type === "reconnect") {
        this.connected = true;
        this.backSince = Date.now();
      }
    }
  }

  /** The callee's side: which requests from other nodes this process is handling, and has answered. */
  watchLocal(ctx: Context, next: Next): Promise<unknown> {
    if (!ctx.nodeID || ctx.nodeID === this.broker.nodeID) return next(ctx);
    return this.ledger.track(ctx.id, () => next(ctx));
  }

  /** The caller's side: a call to another node, in flight until answered or found lost. */
  watchRemote(ctx: Context, next: Next): Promise<unknown> {
    const nodeID = ctx.nodeID;
    const instanceID = nodeID ? this.broker.registry.nodes.get(nodeID)?.instanceID : undefined;
    if (!nodeID || !instanceID) return next(ctx);
    return new Promise((resolve, reject) => {
      const call: InFlight = {
        subject: processSubject(this.opts.namespace, nodeID, instanceID),
        nodeID,
        instanceID,
        action: ctx.action?.name ?? "",
        since: Date.now(),
        crossedOutage: !this.connected,
        requestId: ctx.id,
        reject: (err) => {
          this.inFlight.delete(call);
          this.broker.transit?.removePendingRequest(ctx.id); // its late reply, if any, is dropped
          reject(err);
        },
      };
      this.inFlight.add(call);
      next(ctx).then(
        (value) => {
          this.inFlight.delete(call);
          resolve(value);
        },
        (err: unknown) => {
          this.inFlight.delete(call);
          reject(err);
        },
      );
    });
  }

  private check(): void {
    const now = Date.now();
    const settled = this.connected && now - this.backSince >= GRACE_MS;
    this.answerOutageCalls(now, settled);
    // Probes wait until NATS has been back a while: just after an outage, a live process whose
    // own connection is not back yet would look gone.
    if (!settled || !this.nc) return;
    this.ledger.forgetOld(now);
    for (const call of this.inFlight) {
      if (now - call.since < PROBE_AFTER_MS || call.probing || this.probing.has(call.subject)) continue;
      this.probe(this.nc, call);
    }
  }

  /** Calls in flight across a NATS outage, past the grace: their requests or replies may be lost. */
  private answerOutageCalls(now: number, settled: boolean): void {
    const lost = [...this.inFlight].filter((c) => c.crossedOutage && now - c.since >= GRACE_MS && (!this.connected || settled));
    if (lost.length === 0) return;
    this.broker.logger.warn(
      `answering ${lost.length} calls in flight across a NATS outage with 503: their requests or replies may be lost`,
    );
    this.rejectAll(lost);
  }

  private probe(nc: NatsConnection, call: InFlight): void {
    call.probing = true;
    const codec = JSON.stringify({ id: call.requestId });
    nc.request(call.subject, codec, { timeout: PROBE_TIMEOUT_MS }).then(
      (msg) => this.onProbeAnswer(call, msg.string()),
      (err: NatsError) => this.onProbeFailure(call, err),
    );
  }

  private onProbeAnswer(call: InFlight, text: string): void {
    call.probing = false;
    if (!this.inFlight.has(call)) return;
    const { state, reconnectedAgoMs } = parseState(text);
    // Only around a reconnect (of this process or the callee's) can a request or its answer
    // be lost while both live: at other times a slow answer may be queued behind other
    // traffic on the transporter's connection, which the probe's connection does not see.
    const nearReconnect =
      (this.backSince > 0 && Date.now() - this.backSince < NEAR_RECONNECT_MS) ||
      (reconnectedAgoMs !== undefined && reconnectedAgoMs < NEAR_RECONNECT_MS);
    if (state === "working" || state === undefined || !nearReconnect) {
      call.lostSince = undefined;
      return;
    }
    const at = Date.now();
    call.lostSince ??= at;
    if (at - call.lostSince >= LOST_AFTER_MS) {
      this.broker.logger.warn(
        `a call to '${call.action}' on node '${call.nodeID}' was ${state === "answered" ? "answered, but the answer never arrived" : "never received"}: answering it with 503`,
      );
      this.rejectAll([call]);
    }
  }

  private onProbeFailure(call: InFlight, err: NatsError): void {
    call.probing = false;
    if (err?.code !== this.noResponders || this.probing.has(call.subject)) return;
    this.probing.add(call.subject);
    this.processGone(call.nodeID, call.instanceID, call.subject);
    this.probing.delete(call.subject);
  }

  private processGone(nodeID: string, instanceID: string, subject: string): void {
    const calls = [...this.inFlight].filter((c) => c.subject === subject);
    this.broker.logger.warn(
      `node '${nodeID}' (instance ${instanceID.slice(0, 8)}) is gone: its process no longer listens on NATS; answering its ${calls.length} calls in flight with 503`,
    );
    this.rejectAll(calls);
    // Out of the registry until it announces itself again, unless it already came back as a new process.
    const node = this.broker.registry.nodes.get(nodeID);
    if (node?.available && node.instanceID === instanceID) this.broker.registry.nodes.disconnected(nodeID, true);
  }

  private rejectAll(calls: InFlight[]): void {
    for (const call of calls) call.reject(new Errors.RequestRejectedError({ action: call.action, nodeID: call.nodeID }));
  }
}

export function answerLostCalls(opts: LostCallsOptions): Middleware {
  const watch = new LostCallWatch(opts);
  return {
    name: "AnswerLostCalls",
    created(b: ServiceBroker) {
      watch.created(b);
    },
    // Before the transporter connects: no other node can know this process before it answers probes.
    starting: () => watch.start(),
    localAction(next: Next) {
      return function remembered(ctx: Context): Promise<unknown> {
        return watch.watchLocal(ctx, next);
      };
    },
    remoteAction(next: Next) {
      return function callWatchedForLoss(ctx: Context): Promise<unknown> {
        return watch.watchRemote(ctx, next);
      };
    },
    // After the services drained and the transporter said goodbye: probes are answered to the end.
    stopped: () => watch.stop(),
  } as unknown as Middleware;
}

function requestIdOf(data: Uint8Array): string | undefined {
  if (data.length === 0 || data.length > 256) return undefined;
  try {
    const id = (JSON.parse(Buffer.from(data).toString("utf8")) as { id?: unknown }).id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

function parseState(text: string): { state?: RequestState; reconnectedAgoMs?: number } {
  try {
    const { state, reconnectedAgoMs } = JSON.parse(text) as { state?: unknown; reconnectedAgoMs?: unknown };
    return {
      state: state === "working" || state === "answered" || state === "unknown" ? state : undefined,
      reconnectedAgoMs: typeof reconnectedAgoMs === "number" ? reconnectedAgoMs : undefined,
    };
  } catch {
    return {}; // a process of an earlier release answers a probe with nothing
  }
}
