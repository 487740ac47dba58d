/**
 * The composition root: one node of the service, a broker with the chosen services (services/index.ts)
 * over one shared runtime (lib/runtime.ts), built once per broker.
 *
 * Two ways in, one composition: `prepareNode` makes the broker's options (the runtime, the
 * operations port and the node's lifecycle hooks inside them). `moleculer.config.ts` hands those
 * options to `moleculer-runner`, which loads the service files (each one's default export builds
 * it over the runtime, app/node-runtime.ts); `startNode` creates the broker and the named services
 * itself, for `bin/server.ts`, the tests and the benchmark.
 */
import { ServiceBroker, type BrokerOptions, type Middleware } from "moleculer";
import fs from "node:fs";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { brokerOptions } from "../lib/broker-options";
import { SERVICES } from "../services";
import { registerRuntime, RUNTIME_OPTION } from "./node-runtime";
import { checkSplitDeployment, type Config } from "../lib/config";
import { createRuntime, type Runtime } from "../lib/runtime";
import type { Clock } from "../lib/clock";
import { ServiceMetrics } from "../lib/ops/metrics";
import { OpsServer } from "../lib/ops/ops-server";
import { answersWithin } from "../lib/ops/answers-within";
import { listenAdminSocket } from "../lib/ops/backup";
import { sealKeyInUse } from "../lib/ops/backup-secrets";
import { replCommands } from "../lib/repl";
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

export interface NodeOptions {
  /** Extra broker options (tests: a node id, a logger). */
  broker?: Partial<BrokerOptions>;
  clock?: Clock;
  /** SIGTERM and SIGINT drain the node, then end the process (the processes of `npm start` and moleculer-runner). */
  ownSignals?: boolean;
  /** Writes where to find the gateway, the web vault and the operations port once serving. */
  announce?: boolean;
}

export interface PreparedNode {
  /** The broker's options: a broker made from them runs its services over `runtime`. */
  options: BrokerOptions;
  runtime: Runtime;
  /** The node, once a broker made from `options` has started. */
  running: Promise<RunningNode>;
}

/** How long a readiness probe waits for the store's answer. */
const STORE_PING_TIMEOUT_MS = 2_000;

type Phase = "starting" | "serving" | "draining";
type Log = { warn(m: string): void; info(m: string): void };

/** One node's life: its operations port, its runtime, and the broker's hooks that take it from starting to serving to draining. */
class NodeLife {
  private runtime: Runtime | undefined;
  private ops: OpsServer | undefined;
  private adminSocket: NetServer | undefined;
  private phase: Phase = "starting";
  private closing: Promise<void> | undefined;
  private brokerLog: Log | undefined;
  private brokerRef: ServiceBroker | undefined;
  private serving!: (node: RunningNode) => void;
  private failed!: (err: unknown) => void;
  /** Set once the runtime is registered for moleculer-runner's service files. */
  forgetRuntime = () => undefined as void;
  readonly metrics: ServiceMetrics;
  readonly running: Promise<RunningNode>;
  /** The broker's logger once there is a broker; the console before. */
  private readonly log: Log = {
    warn: (m: string) => (this.brokerLog ? this.brokerLog.warn(m) : console.warn(m)),
    info: (m: string) => (this.brokerLog ? this.brokerLog.info(m) : console.info(m)),
  };

  constructor(
    private readonly config: Config,
    private readonly opts: NodeOptions,
  ) {
    // Collected only where something reads them: the operations port, with METRICS on.
    this.metrics = config.opsPort !== undefined && config.metrics ? ServiceMetrics.on() : ServiceMetrics.off();
    this.running = new Promise<RunningNode>((resolve, reject) => {
      this.serving = resolve;
      this.failed = reject;
    });
    this.running.catch(() => undefined);
  }

  /** Once, whether the broker stops or the start fails: the ops port last, so probes answer to the end. */
  readonly closeAll = (): Promise<void> =>
    (this.closing ??= (async () => {
      this.forgetRuntime();
      this.adminSocket?.close();
      await this.runtime?.close();
      await this.ops?.close();
    })());

  /** Probes answer from the very start: "starting" while the store migrates and services load. */
  async openOpsPort(): Promise<void> {
    const { config } = this;
    if (config.opsPort === undefined) return;
    this.ops = await OpsServer.start(config.opsPort, config.host, {
      notReadyBecause: () => this.notReadyBecause(),
      metrics: () => this.metrics.text({ namespace: config.namespace, nodeID: this.brokerRef?.nodeID ?? "" }),
    });
  }

  private async notReadyBecause(): Promise<string[]> {
    const runtime = this.runtime;
    if (this.phase !== "serving" || !runtime) return [this.phase];
    const reasons: string[] = [];
    if (!runtime.queue.reachable()) reasons.push("NATS unreachable");
    if (!(await answersWithin(runtime.store.housekeeping.ping(), STORE_PING_TIMEOUT_MS))) reasons.push("store unreachable");
    return reasons;
  }

  async startRuntime(): Promise<Runtime> {
    try {
      this.runtime = await createRuntime(this.config, this.log, this.metrics, this.opts.clock);
    } catch (err) {
      await this.closeAll().catch(() => undefined);
      throw err;
    }
    const rt = this.runtime;
    this.metrics.onScrape(() => {
      const usage = rt.store.housekeeping.poolUsage();
      if (usage) this.metrics.storePool(usage);
    });
    return rt;
  }

  brokerOptions(rt: Runtime): BrokerOptions {
    const base = brokerOptions(this.config, {}, this.metrics);
    const extra = this.opts.broker;
    return {
      ...base,
      ...extra,
      middlewares: [this.nodeStart(), ...(base.middlewares ?? []), ...(extra?.middlewares ?? [])],
      // Signals are the node's, not Moleculer's: SIGTERM drains first (readiness 503 for DRAIN_DELAY), then stops.
      skipProcessEventRegistration: true,
      replOptions: { customCommands: replCommands(rt.store) as never },
      started: (broker: ServiceBroker) => this.started(broker, rt),
      stopped: this.closeAll,
    };
  }

  /** Before any service starts: the node's broker, and a gateway that cannot listen (a HOST not on this machine, a port in use) fails here, in one line. */
  private nodeStart(): Middleware {
    const { config } = this;
    return {
      name: "VaultNode",
      created: (broker: ServiceBroker) => {
        this.brokerRef = broker;
        this.brokerLog = broker.getLogger("runtime");
      },
      async starting(broker: ServiceBroker) {
        if (broker.getLocalService("api")) await checkCanListen(config.host, config.port);
      },
    };
  }

  private async started(broker: ServiceBroker, rt: Runtime): Promise<void> {
    try {
      await this.openAdminSocket(broker, rt);
    } catch (err) {
      this.failed(err);
      throw err;
    }
    this.phase = "serving";
    const node = this.runningNode(broker, rt);
    if (this.opts.announce) announce(this.config, node);
    if (this.opts.ownSignals) stopOnSignals(node);
    this.serving(node);
  }

  /** The embedded store's owner takes online backups (lib/ops/backup.ts). */
  private async openAdminSocket(broker: ServiceBroker, rt: Runtime): Promise<void> {
    const { config } = this;
    if (config.databaseUrl || config.mongoUrl) return;
    this.adminSocket = await listenAdminSocket(config.dataDir, rt.store, sealKeyInUse(config));
    if (!this.adminSocket)
      broker.logger.warn("DATA_DIR's path is too long for the admin socket: online backups are off (stop the server to back up)");
  }

  private runningNode(broker: ServiceBroker, rt: Runtime): RunningNode {
    const { config } = this;
    const api = broker.getLocalService("api") as unknown as { server?: Server } | undefined;
    return {
      broker,
      runtime: rt,
      port: (api?.server?.address() as AddressInfo | null)?.port,
      opsPort: this.ops?.port,
      stop: () => broker.stop(),
      drain: async () => {
        this.phase = "draining";
        if (config.drainDelayMs > 0) {
          broker.logger.info(`Draining: not ready, stopping in ${config.drainDelayMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
        }
        await broker.stop();
      },
    };
  }
}

/**
 * Makes the node's runtime and the options of the broker that will run its services. The
 * operations port answers from here on ("starting" while the store migrates and the services load).
 */
export async function prepareNode(config: Config, opts: NodeOptions = {}): Promise<PreparedNode> {
  checkSplitDeployment(config);
  const life = new NodeLife(config, opts);
  await life.openOpsPort();
  const rt = await life.startRuntime();
  const options = life.brokerOptions(rt);
  // Kept out of reach of option merging: moleculer-runner's environment overrides (TRANSPORTER,
  // METRICS, ... would mean Moleculer's own settings there) leave what this node set alone; the
  // node's settings are lib/config/'s.
  // (The node id stays open: moleculer-runner's `--instances` numbers its workers' ids.)
  for (const key of Object.keys(options)) if (key !== "nodeID") pin(options as Record<string, unknown>, key);
  const registered = registerRuntime(rt);
  Object.defineProperty(options, RUNTIME_OPTION, { value: registered.id, enumerable: true });
  life.forgetRuntime = registered.forget;
  return { options, runtime: rt, running: life.running };
}

/** Every service named (all by default) in one broker over one runtime, started. */
export async function startNode(config: Config, opts: NodeOptions & { services?: string[] } = {}): Promise<RunningNode> {
  const names = opts.services ?? Object.keys(SERVICES);
  checkServiceNames(names);
  const prepared = await prepareNode(config, opts);
  const broker = new ServiceBroker(prepared.options);
  try {
    const factories = await Promise.all(names.map((name) => SERVICES[name]!()));
    for (const factory of factories) broker.createService(factory(prepared.runtime));
    await broker.start();
  } catch (err) {
    await broker.stop().catch(() => undefined);
    // Once, whether or not the broker's stop reached its `stopped` hook.
    await (prepared.options.stopped as (b: ServiceBroker) => Promise<void>)(broker).catch(() => undefined);
    throw err;
  }
  return prepared.running;
}

export function checkServiceNames(names: string[]): void {
  const unknown = names.filter((n) => !(n in SERVICES));
  if (unknown.length) throw new Error(`Unknown service(s): ${unknown.join(", ")}; known: ${Object.keys(SERVICES).join(", ")}`);
}

/** A property whose value stays as set: a later assignment is ignored, not thrown (moleculer-runner runs in strict mode). */
function pin(target: Record<string, unknown>, key: string): void {
  const value = target[key];
  Object.defineProperty(target, key, { get: () => value, set: () => undefined, enumerable: true, configurable: false });
}

function stopOnSignals(node: RunningNode): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.broker.logger.info(`${signal}: stopping`);
    node.drain().then(
      () => process.exit(0),
      (err: Error) => {
        console.error(`Stop failed: ${err.message}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

function announce(config: Config, node: RunningNode): void {
  const log = node.broker.logger;
  if (node.port !== undefined) {
    const base = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${node.port}`;
    log.info(`Listening on ${base}/api/v1 (data in ${config.dataDir})`);
    log.info(
      fs.existsSync(path.join(config.webDir, "index.html"))
        ? `Web vault: open ${webVaultAddress(config, node.port, base)} in a browser`
        : `No web vault in ${config.webDir} (npm run build makes it): serving the API alone`,
    );
  }
  if (node.opsPort !== undefined)
    log.info(`Operations on http://${config.host}:${node.opsPort} (/livez, /readyz${config.metrics ? ", /metrics" : ""})`);
}

/** HOST values a browser on this machine reaches as `localhost`: loopback, or every interface. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "::1", "0.0.0.0", "::"]);

/**
 * The web vault's address as a user should open it: where security keys work. Browsers refuse
 * WebAuthn on a page opened at an IP address ("127.0.0.1 is an invalid domain"), and a key is bound
 * to the relying party's host name (WEBAUTHN_RP_ID, `localhost` by default): so a server on a local
 * address is announced as http://localhost:PORT/, one behind a configured origin (WEBAUTHN_ORIGINS)
 * as that origin, and any other as where it listens.
 */
function webVaultAddress(config: Pick<Config, "host" | "webauthnRpId" | "webauthnOrigins">, port: number, base: string): string {
  if (config.webauthnOrigins?.length) return `${config.webauthnOrigins[0]!.replace(/\/+$/, "")}/`;
  if (config.webauthnRpId === "localhost" && LOCAL_HOSTS.has(config.host)) return `http://localhost:${port}/`;
  return `${base}/`;
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
