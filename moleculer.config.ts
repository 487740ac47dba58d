/**
 * The broker's configuration for moleculer-runner, the Moleculer way to run the service:
 *
 *   npx moleculer-runner --config dist/moleculer.config.js dist/services          every service
 *   SERVICES=vaults,rekey npx moleculer-runner --config dist/moleculer.config.js  a subset
 *   ... --repl                                                                     with the REPL
 *
 * Settings come from the environment as lib/config/ reads them (none: the embedded default,
 * SQLite under DATA_DIR; TRANSPORTER, DATABASE_URL, REDIS_URL: the split deployment). Each call
 * builds one node: its runtime (store, event queue, tokens, locks, limits), the operations port,
 * and the lifecycle that closes them when the broker stops (app/node.ts). Every service file's
 * default export builds its service over that runtime.
 */
import path from "node:path";
import type { BrokerOptions } from "moleculer";
import { checkServiceNames, prepareNode } from "./app/node";
import { loadConfig } from "./lib/config";

export default async function moleculerConfig(): Promise<BrokerOptions> {
  const config = loadConfig();
  if (process.env.SERVICES) {
    checkServiceNames(config.services ?? []);
    // SERVICES names files of this build's services folder unless SERVICEDIR says another.
    process.env.SERVICEDIR ??= path.join(__dirname, "services");
  }
  const node = await prepareNode(config, { ownSignals: true, announce: true });
  return node.options;
}
