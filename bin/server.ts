/**
 * The service's entry point. With no settings: every service in one process on the embedded
 * store under DATA_DIR. `SERVICES=api,vaults` runs a subset; `--repl` opens moleculer-repl.
 */
import "./compile-cache";
import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../lib/config";
import { startNode } from "../app/node";
import { replCommands } from "../lib/repl";

async function main(): Promise<void> {
  const config = loadConfig();
  // Signals are ours, not Moleculer's: SIGTERM drains first (readiness 503 for DRAIN_DELAY), then stops.
  const node = await startNode(config, { services: config.services, broker: { skipProcessEventRegistration: true } });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.broker.logger.info(`${signal}: stopping`);
    node.drain().then(
      () => process.exit(0),
      (err: Error) => {
        console.error(`Stop failed: ${err.message}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  if (node.port !== undefined) {
    const base = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${node.port}`;
    node.broker.logger.info(`Listening on ${base}/api/v1 (data in ${config.dataDir})`);
    node.broker.logger.info(
      fs.existsSync(path.join(config.webDir, "index.html"))
        ? `Web vault: open ${base}/ in a browser`
        : `No web vault in ${config.webDir} (npm run build makes it): serving the API alone`,
    );
  }
  if (node.opsPort !== undefined)
    node.broker.logger.info(`Operations on http://${config.host}:${node.opsPort} (/livez, /readyz${config.metrics ? ", /metrics" : ""})`);
  if (process.argv.includes("--repl")) {
    // Moleculer's typings say a command gets string[]; moleculer-repl hands it the parsed arguments.
    node.broker.options.replOptions = { customCommands: replCommands(node.runtime.store) as never };
    await node.broker.repl();
  }
}

main().catch((err: Error) => {
  // The message only: a failed start must not print settings or secrets.
  console.error(`Failed to start: ${err.message}`);
  process.exit(1);
});
