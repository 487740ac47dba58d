/**
 * The built server loads Kysely, jose and moleculer-web from one bundled file each, and its entry
 * point (`npm start`) moleculer too (dist/vendor/, build/bundle-vendor.mjs, lib/vendor.ts): each
 * loads in a fraction of the time its hundreds of modules took (BENCHMARKS.md). The suites that
 * start the server as it ships (docs/developer/testing.md) test the bundles' behaviour; this checks
 * that the server really loads them, and that each offers what its package does.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const DIST = path.resolve(__dirname, "../../dist");
const PACKAGES = /node_modules\/(kysely|jose|moleculer-web)\//;

/** Runs `code` in a child Node on the built files; answers what it printed as JSON. */
function inChild(code: string): unknown {
  const run = spawnSync(process.execPath, ["-e", code], { cwd: path.resolve(__dirname, "../.."), encoding: "utf8" });
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

/**
 * Child-Node source that sets `pairs`: each bundle beside its package, [bundle, package], and
 * `beside(probe)`: `probe` of both in every pair, by name.
 */
const PAIRS = `
  const vendor = (n) => require(${JSON.stringify(path.join(DIST, "vendor"))} + "/" + n + ".js");
  const pairs = {
    kysely: [vendor("kysely"), { ...require("kysely"), Migrator: require("kysely/migration").Migrator }],
    jose: [vendor("jose"), require("jose")],
    web: [vendor("moleculer-web"), require("moleculer-web")],
    moleculer: [vendor("moleculer"), require("moleculer")],
  };
  const beside = (probe) => Object.fromEntries(Object.entries(pairs).map(([name, pair]) => [name, pair.map(probe)]));
`;

test("each bundle offers every export of its package, as the same kind of value, classes and functions under their own names", () => {
  // Names matter: errors are told apart by them (lib/errors.ts reads moleculer-web's NotFoundError by name).
  const compare = inChild(`
    const shape = (m) => Object.fromEntries(Object.keys(m).sort().map((k) => [k, typeof m[k] === "function" ? "function " + m[k].name : typeof m[k]]));
    ${PAIRS}
    const [web, moleculer, jose] = [pairs.web, pairs.moleculer, pairs.jose];
    console.log(JSON.stringify({
      ...beside(shape),
      moleculerErrors: moleculer.map((m) => shape(m.Errors)),
      webErrors: web.map((m) => shape(m.Errors)),
      joseErrors: jose.map((m) => shape(m.errors)),
      errorNames: [0, 1].map((i) => [new web[i].Errors.NotFoundError().name, new jose[i].errors.JWTExpired("x", {}).name]),
    }));
  `) as Record<string, [Record<string, string>, Record<string, string>]>;
  for (const [bundle, pkg] of Object.values(compare)) {
    expect(Object.keys(pkg).length).toBeGreaterThan(1);
    expect(bundle).toEqual(pkg);
  }
  expect(compare.errorNames![0]).toEqual(["NotFoundError", "JWTExpired"]);
});

test("every function each bundle exports runs in the mode its package wrote it in, strict or sloppy (rolldown drops a wrapped module's directive: build/keep-strict.mjs)", () => {
  // A strict function refuses to show its caller; a sloppy one shows null.
  const compare = inChild(`
    const mode = (f) => { try { void f.caller; return "sloppy"; } catch { return "strict"; } };
    const modes = (m, depth = 0, prefix = "") => Object.fromEntries(Object.keys(m).sort().flatMap((k) => {
      const v = m[k];
      if (typeof v === "function") return [[prefix + k, mode(v)]];
      if (v && typeof v === "object" && depth < 1) return Object.entries(modes(v, depth + 1, prefix + k + "."));
      return [];
    }));
    ${PAIRS}
    console.log(JSON.stringify(beside((m) => modes(m))));
  `) as Record<string, [Record<string, string>, Record<string, string>]>;
  for (const [bundle, pkg] of Object.values(compare)) {
    expect(Object.values(pkg)).toContain("strict");
    expect(bundle).toEqual(pkg);
  }
  // Plain functions, not only classes (always strict), are among them: moleculer's middlewares.
  expect(compare.moleculer![1]["Middlewares.Timeout"]).toBe("strict");
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
  // moleculer's bundle: lodash, and the drivers and the REPL a setting asks for.
  const moleculer = path.dirname(require.resolve("moleculer"));
  for (const name of ["lodash", "nats", "ioredis", "moleculer-repl"])
    expect([name, from(vendor, name)]).toEqual([name, from(moleculer, name)]);
  const bundle = fs.readFileSync(path.join(vendor, "moleculer.js"), "utf8");
  for (const name of ["nats", "ioredis", "moleculer-repl"]) expect(bundle).toContain(`require("${name}")`);
  // lodash: both bundles take the subset beside them, which loads the package (found as above) for the rest.
  for (const file of ["moleculer.js", "moleculer-web.js"]) {
    const text = fs.readFileSync(path.join(vendor, file), "utf8");
    expect([file, text.includes('require("./lodash.js")'), text.includes('require("lodash")')]).toEqual([file, true, false]);
  }
  expect(fs.readFileSync(path.join(vendor, "lodash.js"), "utf8")).toContain('require("lodash")');
});

test("moleculer's and moleculer-web's bundles load lodash's subset (build/lodash-subset.mjs): the functions they use, lodash's own, and the package only at the first use of another name", () => {
  const seen = inChild(`
    const whole = () => Object.keys(require.cache).some((f) => /node_modules[/]lodash[/]lodash[.]js$/.test(f));
    require(${JSON.stringify(path.join(DIST, "bin", "moleculer-bundle.js"))});
    require("moleculer");
    require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))});
    const subset = require(${JSON.stringify(path.join(DIST, "vendor", "lodash.js"))});
    const atLoad = whole();
    const own = Object.keys(subset).filter((k) => "value" in Object.getOwnPropertyDescriptor(subset, k));
    const merged = subset.defaultsDeep({ a: { b: 1 } }, { a: { b: 2, c: 3 }, d: [1] });
    const picked = subset.pick({ a: 1, b: 2 }, ["b"]);
    const beforeOther = whole();
    const chunk = subset.chunk([1, 2, 3], 2);
    const lodash = require(require.resolve("lodash", { paths: [${JSON.stringify(path.join(DIST, "vendor"))}] }));
    console.log(JSON.stringify({
      atLoad, beforeOther, afterOther: whole(), merged, picked, chunk,
      own, names: own.map((k) => [k, typeof subset[k], subset[k].name === lodash[k].name]),
      missing: Object.keys(lodash).filter((k) => !(k in subset)),
      sameOther: subset.chunk === lodash.chunk,
    }));
  `) as { own: string[]; names: [string, string, boolean][] } & Record<string, unknown>;
  // What moleculer's broker and moleculer-web use at every start, among them.
  expect(seen.own).toEqual(expect.arrayContaining(["defaultsDeep", "isFunction", "isString", "pick", "cloneDeep", "omit"]));
  expect(seen.own.length).toBeLessThan(60);
  expect(seen.names).toEqual(seen.own.map((k) => [k, "function", true]));
  expect(seen).toMatchObject({
    atLoad: false,
    beforeOther: false,
    afterOther: true,
    merged: { a: { b: 1, c: 3 }, d: [1] },
    picked: { b: 2 },
    chunk: [[1, 2], [3]],
    missing: [],
    sameOther: true,
  });
});

test("the subset's build reads which of lodash's names a module uses, and refuses a use it cannot read rather than miss one", () => {
  const read = (code: string) =>
    inChild(`import(${JSON.stringify(path.resolve(__dirname, "../../build/lodash-subset.mjs"))}).then(({ lodashNamesIn }) => {
      try { console.log(JSON.stringify([...lodashNamesIn(${JSON.stringify(code)})].sort())); }
      catch (err) { console.log(JSON.stringify(err.message)); }
    })`);
  expect(read('const _ = require("lodash");\nconst x = _.pick(a, b), y = _ .omit(c);\nfoo._.get(d);')).toEqual(["omit", "pick"]);
  expect(read('const { defaultsDeep, random: r } = require("lodash"); const g = require("lodash").get;')).toEqual([
    "defaultsDeep",
    "get",
    "random",
  ]);
  expect(read('const _ = require("lodash"); _(list).map(f).value();')).toMatch(/names no function/);
  expect(read('const _ = require("lodash"); const f = _[name];')).toMatch(/names no function/);
  expect(read('use(require("lodash"));')).toMatch(/in a form that names what it uses/);
});

test("the built server's entry point runs one moleculer, its bundle: the runner, every service file and moleculer-web's bundle get it, and no file of the package loads", () => {
  const seen = inChild(`
    require(${JSON.stringify(path.join(DIST, "bin", "moleculer-bundle.js"))});
    const fs = require("node:fs");
    require(${JSON.stringify(path.join(DIST, "moleculer.config.js"))});
    const services = ${JSON.stringify(path.join(DIST, "services"))};
    for (const f of fs.readdirSync(services).filter((f) => f.endsWith(".service.js"))) require(services + "/" + f);
    const moleculer = require("moleculer");
    const bundle = require(${JSON.stringify(path.join(DIST, "vendor", "moleculer.js"))});
    const web = require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))});
    console.log(JSON.stringify({
      same: moleculer === bundle,
      // moleculer-web's errors extend the broker's: the gateway's error handler tells them apart with instanceof.
      webErrorIsMoleculers: new web.Errors.NotFoundError() instanceof moleculer.Errors.MoleculerError,
      runner: typeof moleculer.Runner,
      // The package's main file is the cache's entry for the bundle; nothing of the package runs.
      packageFiles: Object.keys(require.cache).filter((f) => /node_modules[/]moleculer[/]/.test(f) && require.cache[f].exports !== bundle),
    }));
  `);
  expect(seen).toEqual({ same: true, webErrorIsMoleculers: true, runner: "function", packageFiles: [] });
  // Too late once moleculer is loaded: a second copy would not share its classes, so it refuses.
  expect(() =>
    inChild(`require("moleculer"); require(${JSON.stringify(path.join(DIST, "bin", "moleculer-bundle.js"))}); console.log("1")`),
  ).toThrow(/moleculer was loaded before its bundle could take its place/);
});

test("the built server itself (bin/server.js, as npm start runs it) serves with moleculer from its bundle and no file of the package, and its own modules from its pack", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vendor-server-"));
  // Looked at once the gateway listens, which is after the runner has loaded every service.
  const probe = path.join(dataDir, "probe.js");
  fs.writeFileSync(
    probe,
    `const http = require("node:http");
     const listen = http.Server.prototype.listen;
     http.Server.prototype.listen = function (...args) {
       this.once("listening", () => {
         const id = require.resolve("moleculer", { paths: [${JSON.stringify(path.resolve(__dirname, "../.."))}] });
         const bundle = require(${JSON.stringify(path.join(DIST, "vendor", "moleculer.js"))});
         const dist = ${JSON.stringify(DIST + path.sep)};
         const own = Object.keys(require.cache).filter((f) => f.startsWith(dist) && !f.startsWith(dist + "vendor"));
         const standIn = (f) => "get" in Object.getOwnPropertyDescriptor(require.cache[f], "exports");
         process.stdout.write(JSON.stringify({
           bundle: require.cache[id]?.exports === bundle,
           packageFiles: Object.keys(require.cache).filter((f) => /node_modules[/]moleculer[/]/.test(f) && f !== id).length,
           fromFiles: own.filter((f) => !standIn(f)).map((f) => f.slice(dist.length)).sort(),
           fromPack: own.filter(standIn).map((f) => f.slice(dist.length)),
           wholeLodash: Object.keys(require.cache).some((f) => /node_modules[/]lodash[/]lodash[.]js$/.test(f)),
         }) + "\\n");
         process.exit(0);
       });
       return listen.apply(this, args);
     };`,
  );
  try {
    const run = spawnSync(process.execPath, ["-r", probe, path.join(DIST, "bin", "server.js")], {
      cwd: path.resolve(__dirname, "../.."),
      env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.stderr).not.toMatch(/Failed to start/);
    const seen = JSON.parse(run.stdout.trim().split("\n").pop()!) as { fromPack: string[] } & Record<string, unknown>;
    // The server's own modules come from its pack (bin/server.ts, build/bundle-server.mjs): none from its compiled file, none twice.
    expect(seen).toMatchObject({
      bundle: true,
      packageFiles: 0,
      wholeLodash: false,
      fromFiles: ["bin/compile-cache.js", "bin/server.js", "server-pack.js"],
    });
    const services = fs.readdirSync(path.join(DIST, "services")).filter((f) => f.endsWith(".service.js"));
    expect(seen.fromPack).toEqual(
      expect.arrayContaining(["moleculer.config.js", "bin/server-main.js", "lib/config/index.js", ...services.map((f) => `services/${f}`)]),
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a package bundled lazily (build/lazy-modules.mjs: mime-types in moleculer-web's bundle) runs at its first use, not where it is required", () => {
  // A package with a side effect at load, bundled with the plugin, in a child Node (rolldown is an ES module).
  const fixture = fs.mkdtempSync(path.join(os.tmpdir(), "lazy-modules-"));
  try {
    const pkg = path.join(fixture, "node_modules", "counted");
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "counted", main: "index.js" }));
    fs.writeFileSync(
      path.join(pkg, "index.js"),
      "globalThis.loads = (globalThis.loads ?? 0) + 1; exports.answer = 42; exports.table = { a: 1 };",
    );
    fs.writeFileSync(
      path.join(fixture, "entry.js"),
      'const c = require("counted"); module.exports = { atRequire: globalThis.loads ?? 0, read: () => [c.answer, c.table.a, "answer" in c, Object.keys(c)] };',
    );
    const out = path.join(fixture, "out.cjs");
    const run = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { build } from "rolldown";
         import { lazyModules } from ${JSON.stringify(path.resolve(__dirname, "../../build/lazy-modules.mjs"))};
         await build({ cwd: ${JSON.stringify(fixture)}, input: "entry.js", platform: "node", logLevel: "warn", plugins: [lazyModules(["counted"])],
           output: { format: "cjs", file: ${JSON.stringify(out)} } });`,
      ],
      { cwd: path.resolve(__dirname, "../.."), encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    const result = inChild(`
      const m = require(${JSON.stringify(out)});
      const atRequire = m.atRequire;
      const read = m.read();
      console.log(JSON.stringify({ atRequire, read, after: globalThis.loads, again: (m.read(), globalThis.loads) }));
    `);
    expect(result).toEqual({ atRequire: 0, read: [42, 1, true, ["answer", "table"]], after: 1, again: 1 });
  } finally {
    fs.rmSync(fixture, { recursive: true, force: true });
  }
});

test("moleculer-web's bundle holds mime-types (its two copies), Node's http2 and https, and iconv-lite lazily: loading it builds no mime table and loads none of the others", () => {
  const bundle = fs.readFileSync(path.join(DIST, "vendor", "moleculer-web.js"), "utf8");
  expect(bundle.match(/new Proxy\(\{\},\{get:/g)).toHaveLength(5);
  const loaded = (code: string) =>
    inChild(`${code}; console.log(JSON.stringify(process.moduleLoadList.some((m) => /\\bhttp2\\b/.test(m))))`);
  expect(loaded(`require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))})`)).toBe(false);
  const others = (code: string) =>
    inChild(`${code}; console.log(JSON.stringify([
      process.moduleLoadList.some((m) => /\\b(https|tls)\\b/.test(m)),
      Object.keys(require.cache).some((f) => /node_modules\\/iconv-lite\\//.test(f)),
    ]))`);
  expect(others(`require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))})`)).toEqual([false, false]);
  // The check sees them when they load, and moleculer-web itself loads them.
  expect(others(`require("moleculer-web")`)).toEqual([true, true]);
  // mime-types builds its tables by walking mime-db's 2,000-odd types (Object.keys): loading the bundle walks none.
  const walks = (code: string) =>
    inChild(`const keys = Object.keys; let big = 0;
      Object.keys = (o) => { const k = keys(o); if (k.length > 2000) big++; return k; };
      ${code}; console.log(JSON.stringify(big))`);
  expect(walks(`require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))})`)).toBe(0);
  expect(walks(`require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))}); require("mime-types")`)).toBeGreaterThan(0);
  // The check sees http2 when it is loaded, and moleculer-web itself loads it.
  expect(loaded(`require("moleculer-web")`)).toBe(true);
  expect(loaded(`const w = require(${JSON.stringify(path.join(DIST, "vendor", "moleculer-web.js"))}); require("node:http2")`)).toBe(true);
});

test("a build without the server's pack refuses to start, naming the file, rather than start from somewhere else", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "no-pack-"));
  try {
    fs.mkdirSync(path.join(dir, "bin"));
    for (const f of ["server.js", "compile-cache.js"]) fs.copyFileSync(path.join(DIST, "bin", f), path.join(dir, "bin", f));
    const run = spawnSync(process.execPath, [path.join(dir, "bin", "server.js")], { encoding: "utf8", timeout: 30_000 });
    expect([run.status, run.stderr.trim()]).toEqual([
      1,
      `Failed to start: ${path.join(dir, "server-pack.js")} is missing (npm run build makes it)`,
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
