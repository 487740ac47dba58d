// For build/bundle-vendor.mjs (and its test, test/build/vendor.test.ts): moleculer and moleculer-web use
// two dozen of lodash's 300-odd functions, but `require("lodash")` loads and sets up all of them
// (about 25 ms of every start of the built server). Their bundles get dist/vendor/lodash.js
// instead: the functions they use, bundled from lodash's own one-function modules, and every
// other name of lodash's, which loads the whole package at its first use.
import fs from "node:fs";
import path from "node:path";

const NAME = /^[A-Za-z_$][\w$]*$/;
const REQUIRE = /require\(\s*["']lodash["']\s*\)/g;
// (Not followed by a property: `const get = require("lodash").get` is INLINE's.)
const BOUND = /(?:const|let|var)\s+(\{[^}]*\}|[A-Za-z_$][\w$]*)\s*=\s*require\(\s*["']lodash["']\s*\)(?!\s*\.)/g;
const INLINE = /require\(\s*["']lodash["']\s*\)\s*\.\s*([A-Za-z_$][\w$]*)/g;

/** The names of lodash that `code` (one module's source) uses; throws where it uses lodash in a way this cannot read. */
export function lodashNamesIn(code, id = "a module") {
  const names = new Set();
  let read = 0;
  for (const [, bound] of code.matchAll(BOUND)) {
    read++;
    if (bound.startsWith("{")) {
      // `{ a, b: c }`: the names before any colon.
      for (const part of bound.slice(1, -1).split(",")) {
        const key = part.split(":")[0].trim();
        if (key === "") continue;
        if (!NAME.test(key)) throw new Error(`${id}: cannot read lodash's names from ${bound}`);
        names.add(key);
      }
      continue;
    }
    const v = bound.replace(/\$/g, "\\$");
    for (const [, key] of code.matchAll(new RegExp(`(?<![\\w$.])${v}\\s*\\.\\s*([A-Za-z_$][\\w$]*)`, "g"))) names.add(key);
    // Called or indexed as a whole (a chain, a computed name): the names are not in the text.
    if (new RegExp(`(?<![\\w$.])${v}\\s*[([]`).test(code))
      throw new Error(`${id}: uses lodash as "${bound}(" or "${bound}[", which names no function`);
  }
  for (const [, key] of code.matchAll(INLINE)) {
    read++;
    names.add(key);
  }
  const all = [...code.matchAll(REQUIRE)].length;
  if (all !== read) throw new Error(`${id}: requires lodash ${all} times, ${read} of them in a form that names what it uses`);
  return names;
}

/** A rolldown plugin that adds to `names` the lodash names each module of the bundle uses. */
export function lodashUses(names) {
  return {
    name: "lodash-uses",
    transform(code, id) {
      if (!code.includes("lodash")) return null;
      for (const key of lodashNamesIn(code, id)) names.add(key);
      return null;
    },
  };
}

/**
 * The source of the stand-in for lodash: each of `used` from its own module (node_modules/lodash/<name>.js,
 * bundled with what it needs), and every other of lodash's `keys` as a getter that loads the package.
 */
export function lodashSubsetSource(used, keys, lodashDir) {
  const picked = [...used].sort();
  for (const key of picked) {
    if (!keys.includes(key)) throw new Error(`lodash has no "${key}"`);
    if (!fs.existsSync(path.join(lodashDir, `${key}.js`))) throw new Error(`lodash has no module of its own for "${key}"`);
  }
  const rest = keys.filter((k) => !used.has(k));
  return `"use strict";
const subset = {
${picked.map((k) => `  ${k}: require("lodash/${k}.js"),`).join("\n")}
};
let whole;
const load = () => (whole ??= require("lodash"));
for (const key of ${JSON.stringify(rest)})
  Object.defineProperty(subset, key, { enumerable: true, configurable: true, get: () => load()[key] });
module.exports = subset;
`;
}
