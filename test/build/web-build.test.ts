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
