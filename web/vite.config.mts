/**
 * The web vault's build: Vite, Preact (JSX through oxc), output in dist/web, which the gateway
 * serves under `/`. Run by `npm run build`.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { defineConfig, type Plugin } from "vite";

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * `<file>.gz` beside each file the build writes, where gzip makes it smaller: the gateway sends
 * it to browsers that take gzip (lib/http/web-assets.ts), so nothing is compressed at run time.
 */
function gzipCopies(): Plugin {
  return {
    name: "gzip-copies",
    apply: "build",
    writeBundle(options, bundle) {
      for (const name of Object.keys(bundle)) {
        const file = path.join(options.dir!, name);
        const body = fs.readFileSync(file);
        const gzipped = zlib.gzipSync(body, { level: 9 });
        if (gzipped.length < body.length) fs.writeFileSync(file + ".gz", gzipped);
      }
    },
  };
}

export default defineConfig({
  root: here,
  base: "/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  plugins: [gzipCopies()],
  build: {
    outDir: path.resolve(here, "../dist/web"),
    emptyOutDir: true,
    target: "es2022",
    // One script and one stylesheet, loaded from the same origin: the CSP allows nothing inline.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    // zxcvbn's dictionaries (about 0.8 MB gzipped) are their own chunks, loaded only when someone registers.
    chunkSizeWarningLimit: 1500,
  },
});
