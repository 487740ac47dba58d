// Packages the built server loads from one bundled file each (dist/vendor/): Kysely, jose, moleculer-web.
// Design: docs/design/vendor-bundles.md
import Module from "node:module";
import path from "node:path";

export type Vendored = "kysely" | "jose" | "moleculer-web" | "moleculer";

/** Which copy this process runs: the build's bundles, or the packages (from the sources only). */
export const vendorSource: "bundle" | "package" = path.extname(__filename) === ".ts" ? "package" : "bundle";

/** Where the build puts a bundle, from this file's place in dist/lib. */
export function vendorBundle(name: Vendored): string {
  return path.join(__dirname, "..", "vendor", `${name}.js`);
}

/** The bundle of `name` when built, else what `fromPackage` requires (the call names the package, for jest). */
export function vendored<T>(name: Vendored, fromPackage: () => T): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return vendorSource === "bundle" ? (require(vendorBundle(name)) as T) : fromPackage();
}

/** What Node's module loader offers beyond its typings, for `moleculerFromBundle`. */
type Loader = typeof Module & { _nodeModulePaths(from: string): string[] };

/**
 * The built server's entry point only (bin/server-main.ts, before anything requires moleculer): the
 * bundle of moleculer takes the package's place in the module cache, so every
 * `require("moleculer")` of this process (its runner, the services, moleculer-web's bundle) gets
 * that one copy; its classes and errors are checked with `instanceof` across them. moleculer-runner
 * started from the package loads the package, and so does everything in its process.
 */
export function moleculerFromBundle(): void {
  if (vendorSource !== "bundle") return;
  const id = require.resolve("moleculer");
  if (require.cache[id]) throw new Error("moleculer was loaded before its bundle could take its place");
  const stand = new Module(id, module);
  stand.filename = id;
  stand.paths = (Module as Loader)._nodeModulePaths(path.dirname(id));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  stand.exports = require(vendorBundle("moleculer"));
  stand.loaded = true;
  require.cache[id] = stand;
}
