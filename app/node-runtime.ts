/**
 * How a service file finds its node's runtime under moleculer-runner: `prepareNode` (app/node.ts)
 * registers the runtime here and puts only its id in the broker's options (the runtime holds the
 * settings, secrets among them, and options can be read: `$node.options`, the REPL's `info`),
 * and each service file's default export builds its service over it when the runner loads it.
 */
import { randomUUID } from "node:crypto";
import type { ServiceBroker, ServiceSchema } from "moleculer";
import type { Runtime } from "../lib/runtime";
import type { ServiceFactory } from "../services";

/** The option that names a broker's runtime. */
export const RUNTIME_OPTION = "vaultNode";

const runtimes = new Map<string, Runtime>();

/** Registers a node's runtime; the id to put in its broker's options, and what removes it. */
export function registerRuntime(runtime: Runtime): { id: string; forget(): void } {
  const id = randomUUID();
  runtimes.set(id, runtime);
  return { id, forget: () => void runtimes.delete(id) };
}

/** The runtime of the node a broker was made for by `prepareNode`. */
export function runtimeOf(broker: ServiceBroker): Runtime {
  const id = (broker.options as Record<string, unknown>)[RUNTIME_OPTION];
  const runtime = typeof id === "string" ? runtimes.get(id) : undefined;
  if (!runtime) throw new Error("This broker was not made from the node's options (moleculer.config.ts)");
  return runtime;
}

/** A service file's default export: the service built over its broker's runtime. */
export function runnerService(factory: ServiceFactory): (broker: ServiceBroker) => ServiceSchema {
  return (broker) => factory(runtimeOf(broker));
}
