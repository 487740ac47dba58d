/**
 * The web vault's build: Vite, Preact (JSX through oxc), output in dist/web, which the gateway
 * serves under `/`. Run by `npm run build`.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { defineConfig, transformWithOxc, type Plugin } from "vite";

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

/** The files of web/public, copied as they are beside the page (the manifest, the icon). */
const PUBLIC_FILES = ["/manifest.webmanifest", "/icon.svg"];

/**
 * `sw.js`, the service worker (web/src/sw.ts, compiled alone), with the list of the files it caches
 * on install: the page, the public files and every chunk but zxcvbn's dictionaries (registration
 * only; fetched and kept on use), and a version that changes with that list, so that each build's
 * worker replaces the last one's cache.
 */
function serviceWorker(): Plugin {
  return {
    name: "service-worker",
    apply: "build",
    async generateBundle(_options, bundle) {
      const shell = ["/index.html", ...PUBLIC_FILES];
      for (const [name, out] of Object.entries(bundle)) {
        if (name === "index.html") continue;
        const dictionary = out.type === "chunk" && out.moduleIds.length > 0 && out.moduleIds.every((id) => id.includes("zxcvbn"));
        if (!dictionary) shell.push("/" + name);
      }
      shell.sort();
      const version = crypto.createHash("sha256").update(shell.join("\n")).digest("hex").slice(0, 16);
      const source = fs.readFileSync(path.join(here, "src/sw.ts"), "utf8");
      const { code } = await transformWithOxc(source, "sw.ts", { lang: "ts" });
      const filled = code
        .replaceAll("__VAULT_SHELL_VERSION__", JSON.stringify(version))
        .replaceAll("__VAULT_SHELL__", JSON.stringify(shell));
      if (filled.includes("__VAULT_SHELL")) throw new Error("sw.ts: a placeholder was left unfilled");
      this.emitFile({ type: "asset", fileName: "sw.js", source: filled });
    },
  };
}

export default defineConfig({
  root: here,
  base: "/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  plugins: [serviceWorker(), gzipCopies()],
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
