// `npm run build`'s step for the browser extension: its pages and service worker (extension/vite.config.mts),
// the content script as one classic script, the manifest, and a zip of each for a store:
// dist/extension/ (what Chromium loads unpacked), dist/extension-chromium.zip and
// dist/extension-firefox.zip (the same files under Firefox's manifest). Plain JavaScript.
import { Buffer } from "node:buffer";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";
import { build } from "vite";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const source = path.join(root, "extension");
const out = path.join(root, "dist/extension");

await build({ configFile: path.join(source, "vite.config.mts") });
/** A content script as one classic script (content scripts cannot be modules). */
const classicScript = (entry, file) =>
  build({
    configFile: false,
    root: source,
    logLevel: "warn",
    publicDir: false,
    build: {
      outDir: out,
      emptyOutDir: false,
      target: "es2022",
      minify: true,
      lib: { entry: path.join(source, entry), formats: ["iife"], name: "vaultContent", fileName: () => file },
    },
  });

await classicScript("src/content/index.ts", "content.js");
// The passkey scripts of the top frame: the page-world one and its bridge.
await classicScript("src/passkeys/page.ts", "passkeys-page.js");
await classicScript("src/content/passkeys.ts", "passkeys-bridge.js");

const manifest = JSON.parse(fs.readFileSync(path.join(source, "manifest.json"), "utf8"));
fs.writeFileSync(path.join(out, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");

/** Firefox takes the same files with a background script instead of a service worker, and an add-on id. */
const firefox = {
  ...manifest,
  background: { scripts: ["background.js"], type: "module" },
  browser_specific_settings: { gecko: { id: "vault-extension@vault.invalid", strict_min_version: "128.0" } },
};

function files(dir, prefix = "") {
  const found = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const name = prefix + entry.name;
    if (entry.isDirectory()) Object.assign(found, files(path.join(dir, entry.name), name + "/"));
    else found[name] = fs.readFileSync(path.join(dir, entry.name));
  }
  return found;
}

const all = files(out);
const json = (value) => Buffer.from(JSON.stringify(value, null, 2) + "\n");
fs.writeFileSync(path.join(root, "dist/extension-chromium.zip"), zipSync(all, { level: 9, mtime: new Date("2026-01-01") }));
fs.writeFileSync(
  path.join(root, "dist/extension-firefox.zip"),
  zipSync({ ...all, "manifest.json": json(firefox) }, { level: 9, mtime: new Date("2026-01-01") }),
);
