/** Whether a gateway answers its health check: only once every action its routes call has a node to serve it. */
import { notEveryServiceReachable } from "./refusals";

/** Ready when no routed action is unreachable; else `503` (a split deployment whose other nodes are not up yet). */
export function decideReady(unreachable: readonly string[]): { status: "ok" } {
  if (unreachable.length > 0) throw notEveryServiceReachable();
  return { status: "ok" };
}
