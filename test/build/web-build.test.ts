/** The web vault as `npm run build` leaves it in dist/web, ready for lib/http/web-assets.ts to serve. */
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

test("the build wrote a gzipped copy of each web vault file that gzip makes smaller, and it is that file", () => {
  const web = path.resolve(__dirname, "../../dist/web");
  const files = fs.readdirSync(web, { recursive: true, encoding: "utf8" }).filter((f) => /\.(js|css|html)$/.test(f));
  expect(files.length).toBeGreaterThan(5);
  for (const f of files) {
    const body = fs.readFileSync(path.join(web, f));
    const gz = path.join(web, f + ".gz");
    if (fs.existsSync(gz)) expect([f, zlib.gunzipSync(fs.readFileSync(gz)).equals(body)]).toEqual([f, true]);
    else expect([f, zlib.gzipSync(body, { level: 9 }).length >= body.length]).toEqual([f, true]);
  }
});

test("the build wrote the service worker with the app's files to cache (never the API), and the page links the manifest and icon", () => {
  const web = path.resolve(__dirname, "../../dist/web");
  const page = fs.readFileSync(path.join(web, "index.html"), "utf8");
  expect(page).toContain('<link rel="manifest" href="/manifest.webmanifest"');
  const manifest = JSON.parse(fs.readFileSync(path.join(web, "manifest.webmanifest"), "utf8")) as Record<string, unknown>;
  expect(manifest).toMatchObject({ start_url: "/", display: "standalone", icons: [{ src: "/icon.svg" }] });
  expect(fs.existsSync(path.join(web, "icon.svg"))).toBe(true);
  const sw = fs.readFileSync(path.join(web, "sw.js"), "utf8");
  expect(sw).not.toContain("__VAULT_SHELL");
  const shell = JSON.parse(/cache\.addAll\((\[[^\]]*\])\)/.exec(sw)![1]!) as string[];
  // Every file the page loads, and each listed file exists.
  for (const ref of page.matchAll(/(?:src|href)="(\/[^"]+)"/g)) expect([ref[1], shell.includes(ref[1]!)]).toEqual([ref[1], true]);
  for (const file of shell) expect([file, fs.existsSync(path.join(web, file))]).toEqual([file, true]);
  expect(shell.filter((f) => f.startsWith("/api/"))).toEqual([]);
});
