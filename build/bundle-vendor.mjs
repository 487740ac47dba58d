// `npm run build`'s step after tsc: the packages the server loads at every start that ship as
// hundreds of small modules, each bundled into one CommonJS file under dist/vendor/, which the
// built server loads instead (lib/vendor.ts). Loading a package's files one by one costs the start
// far more than their code: Kysely's 300 ES modules took about 170 ms, the same code as one file
// about 10 ms (BENCHMARKS.md).
// Plain JavaScript, run before anything is compiled.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { keepStrict } from "./keep-strict.mjs";
import { lazyModules } from "./lazy-modules.mjs";
import { lodashSubsetSource, lodashUses } from "./lodash-subset.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** name: the file (dist/vendor/<name>.js), as lib/vendor.ts asks for it; source: the entry. */
const BUNDLES = [
  // Both of Kysely's entry points in one module graph: one copy of every class (migration 017
  // tests `instanceof PostgresAdapter`).
  { name: "kysely", source: 'export * from "kysely";\nexport { Migrator } from "kysely/migration";\n', esm: true },
  // About 30 ms as ES modules, 3 ms as one file.
  { name: "jose", source: 'export * from "jose";\n', esm: true },
  // moleculer-web and the body-parser, qs and serve-static it loads (about 70 small packages).
  // moleculer stays outside it, one copy per process (its errors are checked with instanceof): the
  // package under moleculer-runner, its own bundle (below) under the built server's entry point;
  // lodash the copy moleculer shares, iconv-lite its own package (`lazyExternal`: kept out of the
  // bundle, and loaded at its first use).
  // mime-types (two copies, type-is's and send's, each with its mime-db) builds its tables as it
  // loads, about 25 ms of every start, for lookups the gateway seldom or never makes: each copy
  // loads at its first use instead (`lazy`). So do Node's http2 (about 14 ms) and https (with tls,
  // about 6 ms), which moleculer-web requires at its top and uses only for an HTTP/2 or TLS server
  // (`settings.http2`, `settings.https`), and iconv-lite (about 5 ms), which raw-body requires at
  // its top and first asks at the first request body it reads.
  {
    name: "moleculer-web",
    source: 'module.exports = require("moleculer-web");\n',
    external: ["moleculer", "lodash"],
    lodash: true,
    lazy: ["mime-types", "http2", "https", "iconv-lite"],
    lazyExternal: ["iconv-lite"],
  },
  // moleculer (about 135 modules, and its own dependencies' 60-odd), for the built server's entry
  // point only: bin/server.ts puts it in the place of the package before anything requires
  // moleculer (lib/vendor.ts `moleculerFromBundle`), so that every `require("moleculer")` of that
  // process (its runner, the services, moleculer-web's bundle) gets this one copy. moleculer-runner
  // run from the package loads the package, and so does everything in that process.
  // Outside it: lodash, which moleculer-web's bundle shares with it, and whatever moleculer
  // requires only when a setting asks (transporters' and cachers' drivers, loggers, tracers,
  // serializers, moleculer-repl).
  {
    name: "moleculer",
    source: 'module.exports = require("moleculer");\n',
    external: moleculerExternal(),
    lodash: true,
  },
];

/** The lodash names the bundles marked `lodash` use (build/lodash-subset.mjs). */
const lodashUsed = new Set();

/** Bare ids moleculer requires from packages that are not its own dependencies (see above). */
function moleculerExternal() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "node_modules/moleculer/package.json"), "utf8"));
  const shared = ["lodash"];
  const held = Object.keys(pkg.dependencies).filter((name) => !shared.includes(name));
  // Real paths, as rolldown names importers: a node_modules reached through a link still matches.
  const own = fs.realpathSync(path.join(root, "node_modules/moleculer")) + path.sep;
  const nested = path.join(own, "node_modules") + path.sep;
  const packageOf = (id) =>
    id
      .split("/")
      .slice(0, id.startsWith("@") ? 2 : 1)
      .join("/");
  return (id, importer) => {
    if (id.startsWith(".") || path.isAbsolute(id) || id.startsWith("\0")) return false;
    if (shared.includes(packageOf(id))) return true;
    // A dependency's own requires are bundled with it; moleculer's, only those of its dependencies.
    const fromMoleculer = importer !== undefined && importer.startsWith(own) && !importer.startsWith(nested);
    return fromMoleculer && !held.includes(packageOf(id));
  };
}

/** Builds dist/vendor/<bundle.name>.js. */
async function bundleOne(bundle) {
  const entry = `\0vendor:${bundle.name}`;
  const file = path.join(root, "dist/vendor", `${bundle.name}.js`);
  await build({
    cwd: root,
    input: entry,
    platform: "node",
    logLevel: "warn",
    external: bundle.external ?? [],
    plugins: [
      {
        name: "vendor-entry",
        resolveId: (id) => (id === entry ? id : null),
        load: (id) => (id === entry ? bundle.source : null),
      },
      lazyModules(bundle.lazy ?? [], { external: bundle.lazyExternal ?? [] }),
      ...(bundle.lodash ? [lodashUses(lodashUsed)] : []),
      keepStrict(),
    ],
    // Minified (V8 keeps a script's source in memory for as long as the process runs), with
    // functions and classes keeping their names (error names, stack traces), and ASCII only: one
    // character above U+00FF would make V8 hold the whole source as two bytes a character.
    // Strict mode as the packages wrote it: ES modules (`esm`) always; CommonJS modules as their
    // directive says (keep-strict.mjs).
    output: {
      format: "cjs",
      file,
      sourcemap: false,
      minify: true,
      charset: "ascii",
      keepNames: true,
      strict: bundle.esm === true ? true : "auto",
    },
  });
  const stray = fs.readFileSync(file).findIndex((byte) => byte > 0x7f);
  if (stray !== -1) throw new Error(`${file}: a byte outside ASCII at ${stray}; V8 would hold the bundle as two bytes a character`);
}

for (const bundle of BUNDLES) await bundleOne(bundle);

// lodash: the functions moleculer's and moleculer-web's bundles use (collected as they were built),
// and the rest of its names loading the package at their first use. Both bundles require it in
// the package's place.
// The copy moleculer would load (test/build/vendor.test.ts: the one found from dist/vendor too).
const fromMoleculer = createRequire(path.join(root, "node_modules/moleculer/package.json"));
const lodashDir = path.dirname(fromMoleculer.resolve("lodash/package.json"));
const lodashKeys = Object.keys(fromMoleculer("lodash"));
if (lodashUsed.size === 0) throw new Error("found no use of lodash in moleculer's and moleculer-web's bundles");
await bundleOne({ name: "lodash", source: lodashSubsetSource(lodashUsed, lodashKeys, lodashDir), external: ["lodash"] });
for (const bundle of BUNDLES.filter((b) => b.lodash)) {
  const file = path.join(root, "dist/vendor", `${bundle.name}.js`);
  const code = fs.readFileSync(file, "utf8");
  const requires = code.split('require("lodash")').length - 1;
  if (requires === 0) throw new Error(`${file}: no require("lodash") to point at the subset`);
  fs.writeFileSync(file, code.replaceAll('require("lodash")', 'require("./lodash.js")'));
}
