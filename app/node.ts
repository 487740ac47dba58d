/**
 * The composition root: one node of the service, a broker with the chosen services (services/index.ts)
 * over one shared runtime (lib/runtime.ts). `bin/server.ts` starts it with the settings; `bin/cluster.ts`
 * starts one process of it per service group; tests start it with their own settings.
 */
import { ServiceBroker, type BrokerOptions } from "moleculer";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { brokerOptions } from "../lib/broker-options";
import { SERVICES } from "../services";
import { checkSplitDeployment, type Config } from "../lib/config";
import { createRuntime, type Runtime } from "../lib/runtime";
import type { Clock } from "../lib/clock";
import { ServiceMetrics } from "../lib/ops/metrics";
import { OpsServer } from "../lib/ops/ops-server";
import { answersWithin } from "../lib/ops/answers-within";
import { listenAdminSocket } from "../lib/ops/backup";
import net, { type Server as NetServer } from "node:net";

export interface RunningNode {
  broker: ServiceBroker;
  runtime: Runtime;
  /** The gateway's port, when this node runs the `api` service. */
  port: number | undefined;
  /** The operations port (probes, metrics), when OPS_PORT is set. */
  opsPort: number | undefined;
  /** Stops at once: in-flight requests finish (Moleculer's tracking), new ones go elsewhere. */
  stop(): Promise<void>;
  /** SIGTERM: not ready from now on, still serving for DRAIN_DELAY (load balancers move away), then stop. */
  drain(): Promise<void>;
}

/** How long a readiness probe waits for the store's answer. */
const STORE_PING_TIMEOUT_MS = 2_000;

export async function startNode(
  config: Config,
  opts: { services?: string[]; broker?: Partial<BrokerOptions>; clock?: Clock } = {},
): Promise<RunningNode> {
  const names = opts.services ?? Object.keys(SERVICES);
  const unknown = names.filter((n) => !(n in SERVICES));
  if (unknown.length) throw new Error(`Unknown service(s): ${unknown.join(", ")}; known: ${Object.keys(SERVICES).join(", ")}`);

  checkSplitDeployment(config);
  // A gateway that cannot listen (a HOST not on this machine, a port in use) fails here, in one line.
  if (names.includes("api")) await checkCanListen(config.host, config.port);
  let runtime: Runtime | undefined;
  let ops: OpsServer | undefined;
  let adminSocket: NetServer | undefined;
  let phase: "starting" | "serving" | "draining" = "starting";
  // Collected only where something reads them: the operations port, with METRICS on.
  const metrics = config.opsPort !== undefined && config.metrics ? ServiceMetrics.on() : ServiceMetrics.off();
  // Once, whether the broker stops or the start fails: the ops port last, so probes answer to the end.
  let closing: Promise<void> | undefined;
  const closeAll = () =>
    (closing ??= (async () => {
      adminSocket?.close();
      await runtime?.close();
      await ops?.close();
    })());
  const broker = new ServiceBroker(brokerOptions(config, { ...opts.broker, stopped: closeAll }, metrics));
  const log = broker.getLogger("runtime");

  // Probes answer from the very start: "starting" while the store migrates and services load.
  const notReadyBecause = async (): Promise<string[]> => {
    if (phase !== "serving" || !runtime) return [phase];
    const reasons: string[] = [];
    if (!runtime.queue.reachable()) reasons.push("NATS unreachable");
    if (!(await answersWithin(runtime.store.housekeeping.ping(), STORE_PING_TIMEOUT_MS))) reasons.push("store unreachable");
    return reasons;
  };
  if (config.opsPort !== undefined) {
    ops = await OpsServer.start(config.opsPort, config.host, {
      notReadyBecause,
      metrics: () => metrics.text({ namespace: broker.namespace, nodeID: broker.nodeID }),
    });
  }

  try {
    runtime = await createRuntime(config, { warn: (m) => log.warn(m), info: (m) => log.info(m) }, metrics, opts.clock);
    const rt = runtime;
    metrics.onScrape(() => {
      const usage = rt.store.housekeeping.poolUsage();
      if (usage) metrics.storePool(usage);
    });
    const factories = await Promise.all(names.map((name) => SERVICES[name]!()));
    for (const factory of factories) broker.createService(factory(runtime));
    await broker.start();
    // The embedded store's owner takes online backups (lib/ops/backup.ts).
    if (!config.databaseUrl && !config.mongoUrl) {
      adminSocket = await listenAdminSocket(config.dataDir, runtime.store);
      if (!adminSocket) log.warn("DATA_DIR's path is too long for the admin socket: online backups are off (stop the server to back up)");
    }
  } catch (err) {
    await broker.stop().catch(() => undefined);
    await closeAll().catch(() => undefined);
    throw err;
  }
  phase = "serving";
  const api = broker.getLocalService("api") as unknown as { server?: Server } | undefined;
  const port = (api?.server?.address() as AddressInfo | null)?.port;
  return {
    broker,
    runtime,
    port,
    opsPort: ops?.port,
    stop: () => broker.stop(),
    async drain() {
      phase = "draining";
      if (config.drainDelayMs > 0) {
        log.info(`Draining: not ready, stopping in ${config.drainDelayMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
      }
      await broker.stop();
    },
  };
}

/** Listens on host:port for a moment: an error names the address and the reason (EADDRNOTAVAIL, EADDRINUSE, EACCES). */
async function checkCanListen(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", (err: NodeJS.ErrnoException) =>
      reject(new Error(`Cannot listen on ${host}:${port} (HOST, PORT): ${err.code ?? err.message}${REASONS[err.code ?? ""] ?? ""}`)),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

const REASONS: Record<string, string> = {
  EADDRNOTAVAIL: ", no interface of this machine has that address",
  EADDRINUSE: ", another process listens there",
  EACCES: ", ports below 1024 need privileges",
  ENOTFOUND: ", the host name does not resolve",
};
