/**
 * The built server loads Kysely, jose and moleculer-web from one bundled file each
 * (dist/vendor/, bin/bundle-vendor.mjs, lib/vendor.ts): about 350 ms less of every start than
 * their hundreds of modules (BENCHMARKS.md, issue 31). Every end-to-end suite runs the built
 * server, so the bundles' behaviour is tested there; this checks that the server really loads
 * them, and that each offers what its package does.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";

const DIST = path.resolve(__dirname, "../dist");
const PACKAGES = /node_modules\/(kysely|jose|moleculer-web)\//;

/** Runs `code` in a child Node on the built files; answers what it printed as JSON. */
function inChild(code: string): unknown {
  const run = spawnSync(process.execPath, ["-e", code], { cwd: path.resolve(__dirname, ".."), encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

test("what the runner loads at start (the config and every service file) takes the bundles, and none of the three packages' own files", () => {
  const loaded = inChild(`
    const fs = require("node:fs");
    require(${JSON.stringify(path.join(DIST, "moleculer.config.js"))});
    const services = ${JSON.stringify(path.join(DIST, "services"))};
    for (const f of fs.readdirSync(services).filter((f) => f.endsWith(".service.js"))) require(services + "/" + f);
    console.log(JSON.stringify(Object.keys(require.cache)));
  `) as string[];
  expect(loaded.filter((f) => PACKAGES.test(f))).toEqual([]);
  for (const name of ["kysely", "jose", "moleculer-web"]) expect(loaded).toContain(path.join(DIST, "vendor", `${name}.js`));
  // The check sees a package's files when they are loaded (so an empty list above means something).
  const direct = inChild(`require("kysely"); console.log(JSON.stringify(Object.keys(require.cache)))`) as string[];
  expect(direct.some((f) => PACKAGES.test(f))).toBe(true);
});

test("each bundle offers every export of its package, as the same kind of value, classes and functions under their own names", () => {
  // Names matter: errors are told apart by them (lib/errors.ts reads moleculer-web's NotFoundError by name).
  const compare = inChild(`
    const shape = (m) => Object.fromEntries(Object.keys(m).sort().map((k) => [k, typeof m[k] === "function" ? "function " + m[k].name : typeof m[k]]));
    const vendor = (n) => require(${JSON.stringify(path.join(DIST, "vendor"))} + "/" + n + ".js");
    console.log(JSON.stringify({
      kysely: [shape(vendor("kysely")), shape({ ...require("kysely"), Migrator: require("kysely/migration").Migrator })],
      jose: [shape(vendor("jose")), shape(require("jose"))],
      web: [shape(vendor("moleculer-web")), shape(require("moleculer-web"))],
      webErrors: [shape(vendor("moleculer-web").Errors), shape(require("moleculer-web").Errors)],
      joseErrors: [shape(vendor("jose").errors), shape(require("jose").errors)],
      errorNames: [
        [new (vendor("moleculer-web").Errors.NotFoundError)().name, new (vendor("jose").errors.JWTExpired)("x", {}).name],
        [new (require("moleculer-web").Errors.NotFoundError)().name, new (require("jose").errors.JWTExpired)("x", {}).name],
      ],
    }));
  `) as Record<string, [Record<string, string>, Record<string, string>]>;
  for (const [bundle, pkg] of Object.values(compare)) {
    expect(Object.keys(pkg).length).toBeGreaterThan(1);
    expect(bundle).toEqual(pkg);
  }
  expect(compare.errorNames![0]).toEqual(["NotFoundError", "JWTExpired"]);
});

test("the packages moleculer-web's bundle leaves outside it resolve, from dist/vendor, to the very files its own code would use", () => {
  const from = (dir: string, name: string) => require.resolve(name, { paths: [dir] });
  const web = path.dirname(require.resolve("moleculer-web/package.json"));
  const pkg = (name: string) => path.dirname(from(web, `${name}/package.json`));
  const vendor = path.join(DIST, "vendor");
  // Who requires each one inside the bundle: a copy nested under them would not be the one found from dist/vendor.
  const users: Record<string, string[]> = { moleculer: [web], lodash: [web], "iconv-lite": [pkg("raw-body"), pkg("body-parser")] };
  for (const [name, dirs] of Object.entries(users))
    for (const dir of dirs) expect([name, from(vendor, name)]).toEqual([name, from(dir, name)]);
});
