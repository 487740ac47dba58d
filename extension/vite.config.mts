/**
 * The browser extension's build, run by build/bundle-extension.mjs (part of `npm run build`):
 * its pages (the popup, the inline menu, the offscreen document) and the service worker as ES
 * modules in dist/extension. The content script is built apart, as one classic script
 * (content scripts cannot be modules): see that file.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: "/",
  logLevel: "warn",
  publicDir: false,
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: path.resolve(here, "../dist/extension"),
    emptyOutDir: true,
    target: "es2022",
    // No preload helper: it reaches for `document`, which a service worker does not have.
    modulePreload: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      // The SDK loads one-time codes lazily for the web vault's first page; the service worker loads them at once, as meant.
      onwarn(warning, warn) {
        if (warning.code !== "INEFFECTIVE_DYNAMIC_IMPORT") warn(warning);
      },
      input: {
        popup: path.join(here, "popup.html"),
        menu: path.join(here, "menu.html"),
        offscreen: path.join(here, "offscreen.html"),
        background: path.join(here, "src/background/index.ts"),
      },
      output: {
        // The service worker at the name the manifest gives; everything else hashed under assets/.
        entryFileNames: (chunk) => (chunk.name === "background" ? "background.js" : "assets/[name]-[hash].js"),
      },
    },
  },
});
