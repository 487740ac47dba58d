import type { ServiceSchema } from "moleculer";
import type { Runtime } from "../lib/runtime";

/** A service is built over the node's runtime (store, queue, limits, metrics): nothing global. */
export type ServiceFactory = (rt: Runtime) => ServiceSchema;

/**
 * Every service, loaded only by the nodes that run it: a node of the split deployment restarts
 * faster without the modules of the others (the gateway's HTTP stack, above all).
 */
export const SERVICES: Record<string, () => Promise<ServiceFactory>> = {
  api: async () => (await import("./api.service.js")).apiService,
  auth: async () => (await import("./auth.service.js")).authService,
  users: async () => (await import("./users.service.js")).usersService,
  orgs: async () => (await import("./orgs.service.js")).orgsService,
  vaults: async () => (await import("./vaults.service.js")).vaultsService,
  members: async () => (await import("./members.service.js")).membersService,
  rekey: async () => (await import("./rekey.service.js")).rekeyService,
  items: async () => (await import("./items.service.js")).itemsService,
  attachments: async () => (await import("./attachments.service.js")).attachmentsService,
  sends: async () => (await import("./sends.service.js")).sendsService,
  invites: async () => (await import("./invites.service.js")).invitesService,
  audit: async () => (await import("./audit.service.js")).auditService,
  "audit-worker": async () => (await import("./audit-worker.service.js")).auditWorkerService,
  factors: async () => (await import("./factors.service.js")).factorsService,
  recovery: async () => (await import("./recovery.service.js")).recoveryService,
  sweeper: async () => (await import("./sweeper.service.js")).sweeperService,
};
