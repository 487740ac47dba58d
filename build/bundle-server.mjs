// `npm run build`'s step after tsc and build/bundle-vendor.mjs: the server's own compiled modules
// (dist/moleculer.config.js, every dist/services/*.service.js, dist/bin/server-main.js and all
// they load) in one file, dist/server-pack.js, which the entry point (bin/server.ts) puts in their
// files' places. Packages stay outside it, loaded from node_modules or dist/vendor as before.
// Plain JavaScript, run after tsc.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { keepStrict } from "./keep-strict.mjs";
import { checkKeptCalls } from "./kept-calls.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const out = path.join(dist, "server-pack.js");
const ENTRY = "\0server-pack";

const services = fs
  .readdirSync(path.join(dist, "services"))
  .filter((f) => f.endsWith(".service.js"))
  .map((f) => `services/${f}`);
const roots = ["moleculer.config.js", ...services, "bin/server-main.js"];

/** Loaded by the entry point (bin/server.ts) before the pack, from their files: the pack requires those. */
const BEFORE = ["bin/compile-cache.js"];

/** dist/<relative>, as the pack's map names it, of a module rolldown bundled; undefined for anything else. */
function own(id) {
  if (!path.isAbsolute(id) || !id.startsWith(dist + path.sep)) return undefined;
  const relative = path.relative(dist, id).split(path.sep).join("/");
  return relative.startsWith("vendor/") ? undefined : relative;
}

/** The entry's source: each of `modules` (paths under dist/) by its loader. */
const entrySource = (modules) =>
  `exports.modules = {\n${modules.map((m) => `  ${JSON.stringify(m)}: () => require(${JSON.stringify(`./${m}`)}),`).join("\n")}\n};\n`;

async function pack(modules, write) {
  const found = new Set();
  await build({
    cwd: root,
    input: ENTRY,
    platform: "node",
    logLevel: "warn",
    write,
    // Packages and Node's own modules: everything not a file of dist/ (dist/vendor's bundles are
    // required by computed paths, lib/vendor.ts).
    external: (id, importer) => {
      if (id === ENTRY || importer === undefined || importer === ENTRY) return false;
      if (id.startsWith(".")) return own(path.resolve(path.dirname(importer), id)) === undefined;
      return !path.isAbsolute(id) || own(id) === undefined;
    },
    plugins: [
      {
        name: "server-pack",
        resolveId(id, importer) {
          if (id === ENTRY) return id;
          if (importer === ENTRY) return path.join(dist, id);
          if (!id.startsWith(".") || importer === undefined || own(importer) === undefined) return null;
          const target = own(path.resolve(path.dirname(importer), id.endsWith(".js") ? id : `${id}.js`));
          return target !== undefined && BEFORE.includes(target) ? { id: `./${target}`, external: true } : null;
        },
        load: (id) => (id === ENTRY ? entrySource(modules) : null),
        // Each module sees its own file's folder and name, as when Node loads it from there
        // (lib/config/ finds the project from its __dirname, lib/vendor.ts the bundles).
        transform(code, id) {
          const relative = own(id);
          if (relative === undefined) return null;
          found.add(relative);
          if (!/\b__(dirname|filename)\b/.test(code)) return null;
          const dir = path.posix.dirname(relative);
          return {
            code: code
              .replace(/\b__dirname\b/g, `require("node:path").join(__dirname, ${JSON.stringify(dir)})`)
              .replace(/\b__filename\b/g, `require("node:path").join(__dirname, ${JSON.stringify(relative)})`),
            map: null,
          };
        },
      },
      keepStrict(),
    ],
    // As dist/vendor's bundles (build/bundle-vendor.mjs): minified, functions and classes keeping
    // their names (errors, stack traces), ASCII only.
    output: { format: "cjs", file: out, sourcemap: false, codeSplitting: false, minify: true, keepNames: true, charset: "ascii" },
  });
  return found;
}

// First the modules the roots reach, then the pack with a loader for each: whatever requires one
// by its path (the runner: the config and the service files) gets the pack's.
const found = await pack(roots, false);
for (const r of roots) if (!found.has(r)) throw new Error(`server pack: ${r} is not among the modules found`);
const modules = [...found].sort();
await pack(modules, true);
const text = fs.readFileSync(out, "utf8");
for (const m of modules) if (!text.includes(JSON.stringify(m))) throw new Error(`server pack: no loader for ${m}`);
// The minifier drops a call it takes for free of effects when its result is unused: none that can
// throw may go (build/kept-calls.mjs), or a check that relies on what it throws is lost in the pack.
checkKeptCalls(
  modules.map((m) => [m, fs.readFileSync(path.join(dist, m), "utf8")]),
  text,
  "dist/server-pack.js",
);
