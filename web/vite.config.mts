/**
 * The web vault's build: Vite, Preact (JSX through oxc), output in dist/web, which the gateway
 * serves under `/`. Run by `npm run build`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: "/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
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
