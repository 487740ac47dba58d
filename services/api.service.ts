/** The HTTP gateway under /api/v1: the routes of lib/http/routes/ and nothing else. */
import type { Context, ServiceSchema, ServiceBroker } from "moleculer";
import { SESSION_CHANGED, SESSION_ENDED, type SessionChanged, type SessionEnded } from "../lib/auth/session-check";
import { decideReady } from "../lib/domain/readiness";
import { SESSION_END_REASONS } from "../lib/domain/accounts/sessions";
import { openApiDocument } from "../lib/http/openapi";
import { ROUTES } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { gatewayMixin } from "../mixins/gateway.mixin";
import { runnerService } from "../app/node-runtime";

/** Every action a route calls, but this gateway's own. */
const ROUTED_ACTIONS = [...new Set(ROUTES.map((r) => r.action).filter((a) => !a.startsWith("api.")))];

/** The routed actions no node serves yet (in a split deployment, some may not yet). */
function unreachable(broker: ServiceBroker): string[] {
  const actions = (broker.registry as unknown as { actions: { isAvailable(name: string): boolean } }).actions;
  return ROUTED_ACTIONS.filter((name) => !actions.isAvailable(name));
}

export function apiService({ config, accessTokens, metrics, sessions }: Runtime): ServiceSchema {
  // Made at its first request, not at every start (about 16 ms).
  let document: ReturnType<typeof openApiDocument> | undefined;
  return {
    name: "api",
    mixins: [gatewayMixin(config, accessTokens, ROUTES, metrics, sessions)],
    events: {
      // Sessions ended on any node: their access tokens are refused here from now on.
      [SESSION_ENDED]: {
        params: {
          sessionIds: { type: "array", items: "string", max: 1_000_000 },
          why: { type: "enum", values: [...SESSION_END_REASONS], optional: true },
        },
        handler(ctx: Context<SessionEnded>) {
          sessions.forget(ctx.params.sessionIds, ctx.params.why);
        },
      },
      // Sessions whose scope changed on any node (a policy narrowed them, an enrolment widened one): read again here.
      [SESSION_CHANGED]: {
        params: { sessionIds: { type: "array", items: "string", max: 1_000_000 } },
        handler(ctx: Context<SessionChanged>) {
          sessions.recheck(ctx.params.sessionIds);
        },
      },
    },
    actions: {
      health: {
        handler(this: { broker: ServiceBroker }) {
          return decideReady(unreachable(this.broker));
        },
      },
      openapi: {
        handler: () => (document ??= openApiDocument()),
      },
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(apiService);
