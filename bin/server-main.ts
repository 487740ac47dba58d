/**
 * The service, as its entry point (bin/server.ts, `npm start`) runs it from the server's pack:
 * moleculer-runner's own steps, with the project's broker
 * options (moleculer.config.ts) and every service file of dist/services, as
 * `npx moleculer-runner --config dist/moleculer.config.js dist/services` runs them. With no
 * settings, every service runs in one process on the embedded store under DATA_DIR;
 * `SERVICES=api,vaults` runs a subset; `--repl` opens moleculer-repl.
 *
 * Differences: a failed start prints one line, its reason (no stack, no settings), where the
 * runner prints the error whole; moleculer loads from its bundle (dist/vendor/moleculer.js, one
 * file where the package and its dependencies are about 200), not from the package; and, run by
 * bin/server.ts, this and every module of the server come from its pack (dist/server-pack.js).
 */
import "./moleculer-bundle";
import { keepCompiledCode } from "./compile-cache";
import path from "node:path";
import { Runner } from "moleculer";
import type { BrokerOptions } from "moleculer";

const dist = path.resolve(__dirname, "..");
const runner = new Runner();
runner.processFlags([
  ...process.argv.slice(0, 2),
  "--config",
  path.join(dist, "moleculer.config.js"),
  ...process.argv.slice(2).filter((a) => a === "--repl"),
  path.join(dist, "services"),
]);
// (loadConfigFile's typing says void; it resolves to the options moleculer.config.ts made.)
(runner.loadConfigFile() as unknown as Promise<Partial<BrokerOptions>>)
  .then((options) => runner.mergeOptions(options))
  .then(() => runner.startBroker())
  // What the start compiled is on disk from now on, whether this process ends cleanly or not.
  .then(() => keepCompiledCode())
  .catch((err: Error) => {
    console.error(`Failed to start: ${err.message}`);
    process.exit(1);
  });
