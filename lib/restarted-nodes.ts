// A node restarted under the same id (a crash and its supervisor's restart): the others take its
// new process at once and keep it. Design: docs/design/lost-calls.md, "A node's new process"
import type { Middleware, ServiceBroker } from "moleculer";

/**
 * How long a node waits after one of its services has started before telling the others (its
 * INFO packet): services that start in the same moment go out in one packet. Moleculer's default
 * is a second, which a restarted node's routes used to wait for.
 */
export const INFO_COALESCE_MS = 10;

interface RemoteNode {
  lastHeartbeatTime?: number;
}

/**
 * An INFO packet from a node is as good a sign of life as its heartbeat. Moleculer counts only
 * heartbeats, and a new process of a node sends its first about 5 s after it connects: a node
 * whose processes were restarted in turn for 15 s (each died before its first heartbeat) would be
 * dropped by the others as silent while its newest process serves, and its routes would answer
 * 503 until that process's next heartbeat.
 */
export function restartedNodesKept(): Middleware {
  return {
    name: "RestartedNodesKept",
    created(broker: ServiceBroker) {
      broker.localBus.on("$node.updated", ({ node }: { node: RemoteNode }) => {
        // Moleculer's own clock for heartbeats: whole seconds of the process's uptime.
        node.lastHeartbeatTime = Math.round(process.uptime());
      });
    },
  } as unknown as Middleware;
}
