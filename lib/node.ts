/**
 * Starts one node of the service: a broker with the chosen services over one shared runtime.
 * `bin/server.ts` uses it with the settings; tests use it with their own.
 */
import { ServiceBroker, type BrokerOptions, type ServiceSchema } from "moleculer";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { brokerOptions } from "../moleculer.config";
import { checkSplitDeployment, type Config } from "./config";
import { createRuntime, type Runtime } from "./runtime";
type ServiceFactory = (rt: Runtime) => ServiceSchema;

/**
 * Every service, loaded only by the nodes that run it: a node of the split deployment restarts
 * faster without the modules of the others (the gateway's HTTP stack, above all).
 */
export const SERVICES: Record<string, () => Promise<ServiceFactory>> = {
  api: async () => (await import("../services/api.service.js")).apiService,
  auth: async () => (await import("../services/auth.service.js")).authService,
  users: async () => (await import("../services/users.service.js")).usersService,
  orgs: async () => (await import("../services/orgs.service.js")).orgsService,
  vaults: async () => (await import("../services/vaults.service.js")).vaultsService,
  members: async () => (await import("../services/members.service.js")).membersService,
  rekey: async () => (await import("../services/rekey.service.js")).rekeyService,
  items: async () => (await import("../services/items.service.js")).itemsService,
  invites: async () => (await import("../services/invites.service.js")).invitesService,
  audit: async () => (await import("../services/audit.service.js")).auditService,
  "audit-worker": async () => (await import("../services/audit-worker.service.js")).auditWorkerService,
  sweeper: async () => (await import("../services/sweeper.service.js")).sweeperService,
};

export interface RunningNode {
  broker: ServiceBroker;
  runtime: Runtime;
  /** The gateway's port, when this node runs the `api` service. */
  port: number | undefined;
  stop(): Promise<void>;
}

export async function startNode(config: Config, opts: { services?: string[]; broker?: Partial<BrokerOptions> } = {}): Promise<RunningNode> {
  const names = opts.services ?? Object.keys(SERVICES);
  const unknown = names.filter((n) => !(n in SERVICES));
  if (unknown.length) throw new Error(`Unknown service(s): ${unknown.join(", ")}; known: ${Object.keys(SERVICES).join(", ")}`);

  checkSplitDeployment(config);
  let runtime: Runtime | undefined;
  const broker = new ServiceBroker(brokerOptions(config, {
    ...opts.broker,
    stopped: async () => runtime?.close(),
  }));
  const log = broker.getLogger("runtime");
  runtime = await createRuntime(config, { warn: (m) => log.warn(m), info: (m) => log.info(m) });
  const factories = await Promise.all(names.map((name) => SERVICES[name]!()));
  for (const factory of factories) broker.createService(factory(runtime));
  try {
    await broker.start();
  } catch (err) {
    await broker.stop().catch(() => undefined);
    throw err;
  }
  const api = broker.getLocalService("api") as unknown as { server?: Server } | undefined;
  const port = (api?.server?.address() as AddressInfo | null)?.port;
  return { broker, runtime, port, stop: () => broker.stop() };
}
