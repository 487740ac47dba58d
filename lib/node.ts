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
import { apiService } from "../services/api.service";
import { authService } from "../services/auth.service";
import { usersService } from "../services/users.service";
import { orgsService } from "../services/orgs.service";
import { vaultsService } from "../services/vaults.service";
import { membersService } from "../services/members.service";
import { rekeyService } from "../services/rekey.service";
import { itemsService } from "../services/items.service";
import { invitesService } from "../services/invites.service";
import { auditService } from "../services/audit.service";
import { auditWorkerService } from "../services/audit-worker.service";
import { sweeperService } from "../services/sweeper.service";

export const SERVICES: Record<string, (rt: Runtime) => ServiceSchema> = {
  api: apiService,
  auth: authService,
  users: usersService,
  orgs: orgsService,
  vaults: vaultsService,
  members: membersService,
  rekey: rekeyService,
  items: itemsService,
  invites: invitesService,
  audit: auditService,
  "audit-worker": auditWorkerService,
  sweeper: sweeperService,
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
  for (const name of names) broker.createService(SERVICES[name]!(runtime));
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
