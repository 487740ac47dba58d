/**
 * The browser extension as `npm run build` leaves it: the unpacked folder Chromium loads
 * (dist/extension) and the two zips for the stores, each complete and each under its own manifest.
 */
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { unzipSync } from "fflate";

const DIST = path.resolve(__dirname, "../../dist");
const UNPACKED = path.join(DIST, "extension");

interface Manifest {
  manifest_version: number;
  background: { service_worker?: string; scripts?: string[]; type?: string };
  action: { default_popup: string };
  content_scripts: Array<{ js: string[]; all_frames: boolean }>;
  web_accessible_resources: Array<{ resources: string[] }>;
  permissions: string[];
  host_permissions: string[];
  browser_specific_settings?: { gecko?: { id?: string } };
}

/** The files a manifest names, and every script and stylesheet the pages it names load. */
function named(manifest: Manifest, read: (file: string) => string | undefined): string[] {
  const pages = [manifest.action.default_popup, ...manifest.web_accessible_resources.flatMap((w) => w.resources), "offscreen.html"];
  const loaded = pages.flatMap((page) => [...(read(page) ?? "").matchAll(/(?:src|href)="\/([^"]+)"/g)].map((m) => m[1]!));
  const background = manifest.background.service_worker ? [manifest.background.service_worker] : (manifest.background.scripts ?? []);
  return [...background, ...manifest.content_scripts.flatMap((c) => c.js), ...pages, ...loaded];
}

test("the unpacked extension is Manifest V3 and holds every file its manifest and pages name", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(UNPACKED, "manifest.json"), "utf8")) as Manifest;
  expect(manifest.manifest_version).toBe(3);
  expect(manifest.background).toEqual({ service_worker: "background.js", type: "module" });
  // No broader reach than filling needs: no tabs, history, cookies or scripting permission.
  expect([...manifest.permissions].sort()).toEqual(["alarms", "clipboardWrite", "idle", "offscreen", "storage"]);
  const read = (file: string) =>
    fs.existsSync(path.join(UNPACKED, file)) ? fs.readFileSync(path.join(UNPACKED, file), "utf8") : undefined;
  expect(named(manifest, read).filter((file) => read(file) === undefined)).toEqual([]);
});

test("the content script, run in every frame of every page, is one small classic script without the suffix list", () => {
  const source = fs.readFileSync(path.join(UNPACKED, "content.js"), "utf8");
  // A content script cannot be a module: an import or export statement would not even parse here.
  expect(() => new vm.Script(source)).not.toThrow();
  expect(source.length).toBeLessThan(32 * 1024);
  expect(source).not.toMatch(/github\.io|blogspot/);
});

test.each([
  ["extension-chromium.zip", { service_worker: "background.js", type: "module" }, undefined],
  ["extension-firefox.zip", { scripts: ["background.js"], type: "module" }, "vault-extension@vault.invalid"],
])("%s holds the same files under its own manifest", (zip, background, geckoId) => {
  const files = unzipSync(fs.readFileSync(path.join(DIST, zip)));
  const manifest = JSON.parse(Buffer.from(files["manifest.json"]!).toString("utf8")) as Manifest;
  expect(manifest.background).toEqual(background);
  expect(manifest.browser_specific_settings?.gecko?.id).toBe(geckoId);
  const read = (file: string) => (files[file] ? Buffer.from(files[file]).toString("utf8") : undefined);
  expect(named(manifest, read).filter((file) => read(file) === undefined)).toEqual([]);
  const unpacked = fs
    .readdirSync(UNPACKED, { recursive: true, encoding: "utf8" })
    .filter((f) => fs.statSync(path.join(UNPACKED, f)).isFile());
  expect(Object.keys(files).sort()).toEqual(unpacked.map((f) => f.split(path.sep).join("/")).sort());
});
