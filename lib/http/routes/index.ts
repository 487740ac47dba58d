/**
 * The route table: every route the gateway serves, relative to /api/v1, exactly the routes of the
 * interface and the contract and nothing else. One declaration per route gives
 *   - the gateway's alias (mixins/gateway.mixin.ts),
 *   - the parameters the action validates (`paramsOf`, used by each service),
 *   - the OpenAPI 3.1 document served at /api/v1/openapi.json (lib/http/openapi.ts), with the
 *     success answer's status and body (`reply`); every error answers the `Error` body.
 *
 * Path parameters are the `:name`s of `path`; a GET's other parameters come in the query string,
 * any other method's in the JSON body. `public` routes need no access token.
 */
import type { ActionParams } from "moleculer";
import { ACCOUNT_ROUTES } from "./accounts";
import { REMEMBERED_DEVICE_ROUTES } from "./remembered-devices";
import { PASSKEY_ROUTES } from "./passkeys";
import { INVITE_ROUTES } from "./invites";
import { ITEM_ROUTES } from "./items";
import { ATTACHMENT_ROUTES } from "./attachments";
import { SEND_ROUTES } from "./sends";
import { EMERGENCY_ROUTES } from "./emergency";
import { ORG_ROUTES } from "./orgs";
import { API_PREFIX, type Method, type RouteDef } from "./route-def";
import { VAULT_ROUTES } from "./vaults";

export { API_PREFIX, type Method, type ParamSchema, type RouteDef } from "./route-def";

/** Every route, by area (each file of this folder), in the order the OpenAPI document lists them. */
const ROUTE_TABLE = [
  ...ACCOUNT_ROUTES,
  ...REMEMBERED_DEVICE_ROUTES,
  ...PASSKEY_ROUTES,
  ...ORG_ROUTES,
  ...VAULT_ROUTES,
  ...ITEM_ROUTES,
  ...ATTACHMENT_ROUTES,
  ...SEND_ROUTES,
  ...EMERGENCY_ROUTES,
  ...INVITE_ROUTES,
] as const;

/** Every action a route calls: a name that is not one of them (a typo) fails the type check. */
export type ActionName = (typeof ROUTE_TABLE)[number]["action"];

export const ROUTES: readonly RouteDef[] = ROUTE_TABLE;

/** The route of an action: the one place its parameters are declared. */
export function routeOf(action: ActionName): RouteDef {
  const route = ROUTES.find((r) => r.action === action);
  if (!route) throw new Error(`No route calls ${action}`);
  return route;
}

/** An action's parameter rules, from its route (for the service's `params`). */
export function paramsOf(action: ActionName): ActionParams {
  const params = routeOf(action).params;
  if (!params) throw new Error(`The route of ${action} declares no parameters`);
  return params as ActionParams;
}

/** A route's path parameters: `/vaults/:vaultId/items/:itemId` -> vaultId, itemId. */
export function pathParamsOf(route: Pick<RouteDef, "path">): string[] {
  return route.path
    .split("/")
    .filter((part) => part.startsWith(":"))
    .map((part) => part.slice(1));
}

/** The methods declared for a path under API_PREFIX (`/api/v1/vaults/abc` -> GET, PATCH, DELETE), none for an unknown one. */
export function methodsForPath(pathname: string): Method[] {
  return routesForPath(pathname).map((r) => r.method);
}

/** The routes declared for a path under API_PREFIX, whatever their method. */
export function routesForPath(pathname: string): RouteDef[] {
  if (!pathname.startsWith(`${API_PREFIX}/`)) return [];
  const path = pathname.slice(API_PREFIX.length).replace(/\/+$/, "");
  const parts = path.split("/");
  return ROUTES.filter((r) => {
    const pattern = r.path.split("/");
    return pattern.length === parts.length && pattern.every((part, i) => (part.startsWith(":") ? parts[i] !== "" : part === parts[i]));
  });
}
