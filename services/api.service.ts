/** The HTTP gateway under /api/v1: the routes of lib/http/routes.ts and nothing else. */
import type { ServiceSchema } from "moleculer";
import { ROUTES } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { gatewayMixin } from "../mixins/gateway.mixin";

export function apiService({ config, accessTokens }: Runtime): ServiceSchema {
  return {
    name: "api",
    mixins: [gatewayMixin(config, accessTokens, ROUTES)],
    actions: {
      health: {
        handler() {
          return { status: "ok" };
        },
      },
    },
  };
}
