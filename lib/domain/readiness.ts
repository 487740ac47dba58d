/** Whether a gateway answers its health check: only once every action its routes call has a node to serve it. */
import { notEveryServiceReachable } from "./refusals";

/**
 * Ready when no routed action is unreachable; else `503` naming the services of those actions (a
 * split deployment whose other nodes are not up yet, or a node away until its replacement serves).
 */
export function decideReady(unreachableActions: readonly string[]): { status: "ok" } {
  if (unreachableActions.length > 0) throw notEveryServiceReachable(servicesOf(unreachableActions));
  return { status: "ok" };
}

/** `items.create`, `items.list`, `vaults.get` -> `items`, `vaults`: each service once, in order. */
function servicesOf(actions: readonly string[]): string[] {
  return [...new Set(actions.map((action) => action.split(".")[0]!))];
}
