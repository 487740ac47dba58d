// The service as the built server's entry point runs it: moleculer-runner's steps, from the server pack.
// Design: docs/design/server-start.md
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
