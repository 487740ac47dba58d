/**
 * The built server's entry point (`npm start`, the cluster script, the benchmarks): the service as
 * bin/server-main.ts runs it (moleculer-runner's steps), loaded from one file. (The Dockerfile and
 * the Kubernetes manifests start moleculer-runner itself, which loads the compiled files.)
 *
 * `npm run build` bundles the server's own modules (the config, every service file and all they
 * load: about 170 compiled files) into dist/server-pack.js (bin/bundle-server.mjs). Loading them one
 * by one cost each start about a fifth of its time (resolving, reading, and compiling each file;
 * BENCHMARKS.md). Each module of the pack takes its compiled file's place in Node's
 * module cache, so what requires one by its path (the runner: the config and each service file)
 * gets the pack's, and no module runs twice. Packages (node_modules, dist/vendor) load as before.
 *
 * A build without its pack fails to start, naming the missing file, rather than start slower unseen.
 */
import "./compile-cache";
import Module from "node:module";
import path from "node:path";

/** What dist/server-pack.js exports: each module's loader, by its path under dist/. */
interface Pack {
  modules: Record<string, () => unknown>;
}

const dist = path.resolve(__dirname, "..");
const packFile = path.join(dist, "server-pack.js");
let pack: Pack;
try {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  pack = require(packFile) as Pack;
} catch (err) {
  if ((err as { code?: string }).code !== "MODULE_NOT_FOUND" || !(err as Error).message.includes(packFile)) throw err;
  console.error(`Failed to start: ${packFile} is missing (npm run build makes it)`);
  process.exit(1);
}
for (const [relative, load] of Object.entries(pack.modules)) {
  const filename = path.join(dist, relative);
  const stand = new Module(filename, module);
  stand.filename = filename;
  stand.loaded = true;
  // The module runs where it is first asked for, as when required from its file.
  Object.defineProperty(stand, "exports", { get: load, set: () => undefined, enumerable: true, configurable: true });
  require.cache[filename] = stand;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
require(path.join(dist, "bin", "server-main.js"));
