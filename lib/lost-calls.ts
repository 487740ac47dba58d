/**
 * Calls between nodes that will never be answered, answered 503 within about 1.5 s instead of at
 * the request timeout (split deployment only). Two causes, both seen as 30 s hangs before:
 *
 * 1. The node's process died. Moleculer learns that a node vanished without saying goodbye
 *    (SIGKILL, a crash, OOM) from missing heartbeats, in whole seconds and after
 *    `heartbeatTimeout`; a node restarted under the same id takes its place without the calls in
 *    flight to the old process ever being answered. NATS knows sooner: when a process dies, the
 *    kernel closes its sockets and the NATS server drops its subscriptions at once, and a request
 *    to a subject nobody subscribes to is answered "no responders" at once. So every node's
 *    process subscribes to a subject of its own (node id and instance id), and a caller whose call
 *    has been in flight for PROBE_AFTER_MS asks that subject. "No responders": the process is
 *    gone, its calls are answered 503, and the node leaves the registry until it announces itself
 *    again. A probe that times out (a host cut off) proves nothing: the heartbeats and the request
 *    timeout decide, as before.
 * 2. NATS went away while the call was in flight, or before it was sent: the request or its reply
 *    may be lost with the server. Such a call is answered 503 once it has been in flight for
 *    GRACE_MS and NATS has been back for GRACE_MS (or is still away), so a short blip costs nothing.
 *
 * 3. The request or its answer was lost although both processes live and NATS never went away for
 *    the caller: a request published while the callee's transporter was still
 *    re-subscribing after a NATS restart, an answer sent while the caller's was. So the probe of a
 *    slow call names it (its request id), and the callee's process says whether it is handling
 *    it, has answered it, or never saw it. Seen as answered or unknown twice, LOST_AFTER_MS apart,
 *    within NEAR_RECONNECT_MS of a reconnect of either process, the call is answered 503: the
 *    request or its answer is gone. (Away from a reconnect, a slow answer may be queued behind
 *    other traffic on the transporter's connection, which the probe's own connection does not see.)
 *
 * A live process whose own NATS connection alone drops for a moment looks gone too: its calls in
 * flight are answered 503 and it is back in the registry at its next heartbeat (5 s).
 *
 * Never retried: a mutation may have been committed before its answer was lost, as with any 503.
 * Cost: nothing while calls are answered within PROBE_AFTER_MS; otherwise one small request per
 * slow call (it names the call) every CHECK_EVERY_MS, answered by the callee's process: an
 * overloaded cluster whose calls all run past PROBE_AFTER_MS probes each of them four times a second.
 */
import { createHash } from "node:crypto";
import type { NatsConnection, NatsError } from "nats";
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

export function answerLostCalls(opts: LostCallsOptions): Middleware {
  let broker: ServiceBroker;
  let nc: NatsConnection | undefined;
  let timer: NodeJS.Timeout | undefined;
  let connected = true;
  let backSince = 0;
  const inFlight = new Set<InFlight>();
  const probing = new Set<string>();
  // The callee's side: the requests this process is handling, and those it answered (id -> when).
  const handling = new Set<string>();
  const answered = new Map<string, number>();
  const stateOf = (requestId: string): RequestState =>
    handling.has(requestId) ? "working" : answered.has(requestId) ? "answered" : "unknown";
  const forgetOld = (now: number) => {
    for (const [id, at] of answered) {
      if (now - at < REMEMBER_ANSWERED_MS) break; // in insertion order: the rest are newer
      answered.delete(id);
    }
  };

  const rejectAll = (calls: InFlight[]) => {
    for (const call of calls) call.reject(new Errors.RequestRejectedError({ action: call.action, nodeID: call.nodeID }));
  };

  const processGone = (nodeID: string, instanceID: string, subject: string) => {
    const calls = [...inFlight].filter((c) => c.subject === subject);
    broker.logger.warn(
      `node '${nodeID}' (instance ${instanceID.slice(0, 8)}) is gone: its process no longer listens on NATS; answering its ${calls.length} calls in flight with 503`,
    );
    rejectAll(calls);
    // Out of the registry until it announces itself again, unless it already came back as a new process.
    const node = broker.registry.nodes.get(nodeID);
    if (node?.available && node.instanceID === instanceID) broker.registry.nodes.disconnected(nodeID, true);
  };

  const check = () => {
    const now = Date.now();
    const settled = connected && now - backSince >= GRACE_MS;
    const lost = [...inFlight].filter((c) => c.crossedOutage && now - c.since >= GRACE_MS && (!connected || settled));
    if (lost.length > 0) {
      broker.logger.warn(`answering ${lost.length} calls in flight across a NATS outage with 503: their requests or replies may be lost`);
      rejectAll(lost);
    }
    // Probes wait until NATS has been back a while: just after an outage, a live process whose
    // own connection is not back yet would look gone.
    if (!settled || !nc) return;
    forgetOld(now);
    for (const call of inFlight) {
      if (now - call.since < PROBE_AFTER_MS || call.probing || probing.has(call.subject)) continue;
      call.probing = true;
      const codec = JSON.stringify({ id: call.requestId });
      nc.request(call.subject, codec, { timeout: PROBE_TIMEOUT_MS }).then(
        (msg) => {
          call.probing = false;
          if (!inFlight.has(call)) return;
          const { state, reconnectedAgoMs } = parseState(msg.string());
          // Only around a reconnect (of this process or the callee's) can a request or its answer
          // be lost while both live: at other times a slow answer may be queued behind other
          // traffic on the transporter's connection, which the probe's connection does not see.
          const nearReconnect =
            (backSince > 0 && Date.now() - backSince < NEAR_RECONNECT_MS) ||
            (reconnectedAgoMs !== undefined && reconnectedAgoMs < NEAR_RECONNECT_MS);
          if (state === "working" || state === undefined || !nearReconnect) {
            call.lostSince = undefined;
            return;
          }
          const at = Date.now();
          call.lostSince ??= at;
          if (at - call.lostSince >= LOST_AFTER_MS) {
            broker.logger.warn(
              `a call to '${call.action}' on node '${call.nodeID}' was ${state === "answered" ? "answered, but the answer never arrived" : "never received"}: answering it with 503`,
            );
            rejectAll([call]);
          }
        },
        (err: NatsError) => {
          call.probing = false;
          if (err?.code !== noResponders || probing.has(call.subject)) return;
          probing.add(call.subject);
          processGone(call.nodeID, call.instanceID, call.subject);
          probing.delete(call.subject);
        },
      );
    }
  };

  /** nats's code for "no responders" (set when the driver is loaded). */
  let noResponders: string = "503";

  const watchConnection = async (conn: NatsConnection) => {
    for await (const status of conn.status()) {
      if (status.type === "disconnect") {
        connected = false;
        for (const call of inFlight) call.crossedOutage = true;
      } else if (status.type === "reconnect") {
        connected = true;
        backSince = Date.now();
      }
    }
  };

  return {
    name: "AnswerLostCalls",
    created(b: ServiceBroker) {
      broker = b;
    },
    // Before the transporter connects: no other node can know this process before it answers probes.
    async starting() {
      // The driver is loaded here, by a node of a split deployment only: the embedded default never pays for it.
      const nats = await import("nats");
      noResponders = nats.ErrorCode.NoResponders;
      nc = await nats.connect({
        servers: opts.url,
        name: `${opts.namespace}-process`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        waitOnFirstConnect: true,
        // A probe's failure is read by its code alone: no stack trace is built for each probe.
        noAsyncTraces: true,
      });
      // A probe: empty (is this process alive?) or naming a request (what of it?).
      nc.subscribe(processSubject(opts.namespace, broker.nodeID, broker.instanceID), {
        callback: (_err, msg) => {
          const id = requestIdOf(msg.data);
          const reconnectedAgoMs = backSince > 0 ? Date.now() - backSince : undefined;
          msg.respond(id === undefined ? undefined : JSON.stringify({ state: stateOf(id), reconnectedAgoMs }));
        },
      });
      await nc.flush();
      void watchConnection(nc).catch(() => undefined);
      timer = setInterval(check, CHECK_EVERY_MS);
      timer.unref();
    },
    // The callee's side: which requests from other nodes this process is handling, and has answered.
    localAction(next: (ctx: Context) => Promise<unknown>) {
      return function remembered(ctx: Context): Promise<unknown> {
        if (!ctx.nodeID || ctx.nodeID === broker.nodeID) return next(ctx);
        const id = ctx.id;
        handling.add(id);
        const done = () => {
          handling.delete(id);
          answered.set(id, Date.now());
        };
        return next(ctx).then(
          (value) => {
            done();
            return value;
          },
          (err: unknown) => {
            done();
            throw err;
          },
        );
      };
    },
    remoteAction(next: (ctx: Context) => Promise<unknown>) {
      return function callWatchedForLoss(ctx: Context): Promise<unknown> {
        const nodeID = ctx.nodeID;
        const instanceID = nodeID ? broker.registry.nodes.get(nodeID)?.instanceID : undefined;
        if (!nodeID || !instanceID) return next(ctx);
        return new Promise((resolve, reject) => {
          const call: InFlight = {
            subject: processSubject(opts.namespace, nodeID, instanceID),
            nodeID,
            instanceID,
            action: ctx.action?.name ?? "",
            since: Date.now(),
            crossedOutage: !connected,
            requestId: ctx.id,
            reject: (err) => {
              inFlight.delete(call);
              broker.transit?.removePendingRequest(ctx.id); // its late reply, if any, is dropped
              reject(err);
            },
          };
          inFlight.add(call);
          next(ctx).then(
            (value) => {
              inFlight.delete(call);
              resolve(value);
            },
            (err: unknown) => {
              inFlight.delete(call);
              reject(err);
            },
          );
        });
      };
    },
    // After the services drained and the transporter said goodbye: probes are answered to the end.
    async stopped() {
      clearInterval(timer);
      await nc?.drain().catch(() => nc?.close());
    },
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
