// A rolldown plugin for build/bundle-vendor.mjs (and its test, test/build/vendor.test.ts).

/** A CommonJS module whose first statement (after comments) is the "use strict" directive. */
const STRICT = /^\s*(?:\/\*[\s\S]*?\*\/\s*|\/\/[^\n]*\n\s*)*["']use strict["']/;
const ES_MODULE = /^\s*(?:import|export)\s/m;

/**
 * Each CommonJS module written in strict mode stays in strict mode once bundled. rolldown wraps
 * every CommonJS module in a function and drops its "use strict" directive, so the module's
 * functions would run in sloppy mode (a `this` of the global object for a plain call, silent
 * failures where the package throws). Its code goes in a function that starts with the directive
 * instead. Modules written in sloppy mode stay so; ES modules, always strict, are the output
 * option's (`strict: true` for a bundle made of them).
 */
export function keepStrict() {
  return {
    name: "keep-strict",
    transform(code) {
      if (!STRICT.test(code) || ES_MODULE.test(code)) return null;
      return { code: `(function () {\n${code}\n}).call(this);\n`, map: null };
    },
  };
}
