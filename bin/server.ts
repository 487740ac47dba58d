// The built server's entry point (`npm start`): the server's modules loaded from dist/server-pack.js.
// Design: docs/design/server-start.md
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
