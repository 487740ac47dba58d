// A rolldown plugin for build/bundle-vendor.mjs (and its test, test/build/vendor.test.ts).
const LAZY = "\0lazy:";

/**
 * Each package named in `names` loads at the first use of one of its exports, not where it is
 * required: its importers get a stand-in whose properties load the real module (the one that
 * importer would have had) and read from it. For packages that export an object of functions and
 * tables, used as `pkg.fn(...)`; rolldown runs a bundled CommonJS module at its first require, and
 * Node loads a built-in module at its first require.
 *
 * A package named in `external` too stays out of the bundle, required from node_modules at its
 * first use. (The bundle's own `external` option would keep rolldown from asking this plugin.)
 */
export function lazyModules(names, { external = [] } = {}) {
  return {
    name: "lazy-modules",
    async resolveId(id, importer) {
      if (importer?.startsWith(LAZY)) return external.includes(id) ? { id, external: true } : null;
      if (!names.includes(id)) return null;
      if (external.includes(id)) return LAZY + id;
      const real = await this.resolve(id, importer, { skipSelf: true });
      // A package: the file that importer would have had, bundled. A built-in module: required from Node.
      return real ? LAZY + real.id : null;
    },
    load(id) {
      if (!id.startsWith(LAZY)) return null;
      const real = JSON.stringify(id.slice(LAZY.length));
      return `let real;
const load = () => (real ??= require(${real}));
module.exports = new Proxy({}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_, key) => {
    const d = Reflect.getOwnPropertyDescriptor(load(), key);
    return d && { ...d, configurable: true };
  },
});
`;
    },
  };
}
