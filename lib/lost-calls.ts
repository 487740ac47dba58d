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
 * A live process whose own NATS connection alone drops for a moment looks gone too: its calls in
 * flight are answered 503 and it is back in the registry at its next heartbeat (5 s).
 *
 * Never retried: a mutation may have been committed before its answer was lost, as with any 503.
 * Cost: nothing while calls are answered within PROBE_AFTER_MS; one small request per slow process
 * every CHECK_EVERY_MS otherwise.
 */
import { createHash } from "node:crypto";
import { connect, ErrorCode, type NatsConnection, type NatsError } from "nats";
import { Errors, type Context, type Middleware, type ServiceBroker } from "moleculer";

export const PROBE_AFTER_MS = 1_000;
const GRACE_MS = 1_000;
const CHECK_EVERY_MS = 250;
const PROBE_TIMEOUT_MS = 1_000;

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
    const slow = new Map<string, InFlight>();
    for (const call of inFlight) if (now - call.since >= PROBE_AFTER_MS) slow.set(call.subject, call);
    for (const [subject, call] of slow) {
      if (probing.has(subject)) continue;
      probing.add(subject);
      nc.request(subject, undefined, { timeout: PROBE_TIMEOUT_MS }).then(
        () => probing.delete(subject),
        (err: NatsError) => {
          probing.delete(subject);
          if (err?.code === ErrorCode.NoResponders) processGone(call.nodeID, call.instanceID, subject);
        },
      );
    }
  };

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
      nc = await connect({
        servers: opts.url,
        name: `${opts.namespace}-process`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        waitOnFirstConnect: true,
      });
      nc.subscribe(processSubject(opts.namespace, broker.nodeID, broker.instanceID), { callback: (_err, msg) => msg.respond() });
      await nc.flush();
      void watchConnection(nc).catch(() => undefined);
      timer = setInterval(check, CHECK_EVERY_MS);
      timer.unref();
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
