/**
 * The web vault's files as the gateway serves them (lib/http/web-assets.ts): read from disk at
 * each request, none held in memory; the build's gzipped copy to a browser that takes gzip; only
 * the files found at start, by exact path.
 */
import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import zlib from "node:zlib";
import { WebAssets } from "../../../../lib/http/web-assets";
import { tempDir } from "../../../helpers/server";

let dir: string;
let server: http.Server;
let origin: string;
const page = "<!doctype html><title>vault</title>";
const script = "console.log('the vault');\n".repeat(2000);

beforeAll(async () => {
  dir = tempDir("web-assets-");
  fs.mkdirSync(path.join(dir, "assets"));
  fs.writeFileSync(path.join(dir, "index.html"), page);
  fs.writeFileSync(path.join(dir, "assets", "app-1.js"), script);
  fs.writeFileSync(path.join(dir, "assets", "app-1.js.gz"), zlib.gzipSync(script));
  fs.writeFileSync(path.join(dir, "assets", "logo.svg"), "<svg/>");
  fs.writeFileSync(path.join(dir, "sw.js"), "self.addEventListener('fetch', () => {});");
  fs.writeFileSync(path.join(dir, "manifest.webmanifest"), '{"name":"Vault"}');
  const web = WebAssets.load(dir)!;
  server = http.createServer((req, res) => {
    if (!web.serve(req, res)) res.writeHead(404).end("not a web file");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A raw GET (fetch would undo the gzip): status, headers and the bytes as sent. */
function get(urlPath: string, headers: Record<string, string> = {}, method = "GET") {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    // The path as written, not normalized as a URL would be.
    const req = http.request({ host: "127.0.0.1", port: new URL(origin).port, path: urlPath, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("the page and its files, with their types, caching and the CSP", async () => {
  const root = await get("/");
  expect([root.status, root.body.toString(), root.headers["content-type"], root.headers["cache-control"]]).toEqual([
    200,
    page,
    "text/html; charset=utf-8",
    "no-store",
  ]);
  expect(root.headers["content-security-policy"]).toContain("default-src 'none'");
  const js = await get("/assets/app-1.js");
  expect([js.status, js.body.toString(), js.headers["content-length"], js.headers["content-encoding"]]).toEqual([
    200,
    script,
    String(Buffer.byteLength(script)),
    undefined,
  ]);
  expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
});

test("the service worker and the app manifest: their types, never cached for good, allowed by the CSP and nothing else added", async () => {
  const sw = await get("/sw.js");
  expect([sw.status, sw.headers["content-type"], sw.headers["cache-control"], sw.headers["service-worker-allowed"]]).toEqual([
    200,
    "text/javascript; charset=utf-8",
    "no-store",
    "/",
  ]);
  const manifest = await get("/manifest.webmanifest");
  expect([manifest.status, manifest.headers["content-type"], manifest.body.toString()]).toEqual([
    200,
    "application/manifest+json",
    '{"name":"Vault"}',
  ]);
  expect((await get("/")).headers["service-worker-allowed"]).toBeUndefined();
  const csp = String(manifest.headers["content-security-policy"]).split("; ");
  expect(csp).toEqual(expect.arrayContaining(["default-src 'none'", "worker-src 'self'", "manifest-src 'self'", "connect-src 'self'"]));
  expect(csp.join("; ")).not.toMatch(/unsafe-inline|\*|https?:/);
});

test("a browser that takes gzip gets the build's gzipped copy; a file without one goes as it is", async () => {
  const js = await get("/assets/app-1.js", { "accept-encoding": "gzip, br" });
  expect(js.headers["content-encoding"]).toBe("gzip");
  expect(js.headers["content-length"]).toBe(String(js.body.length));
  expect(js.body.length).toBeLessThan(Buffer.byteLength(script) / 10);
  expect(zlib.gunzipSync(js.body).toString()).toBe(script);
  const svg = await get("/assets/logo.svg", { "accept-encoding": "gzip" });
  expect([svg.headers["content-encoding"], svg.body.toString()]).toEqual([undefined, "<svg/>"]);
  const head = await get("/assets/app-1.js", { "accept-encoding": "gzip" }, "HEAD");
  expect([head.status, head.body.length, head.headers["content-length"]]).toEqual([200, 0, js.headers["content-length"]]);
});

test("only the files found at start, by exact path: not the gzipped copies, nothing outside the folder", async () => {
  for (const p of ["/assets/app-1.js.gz", "/../index.html", "/assets/../../etc/passwd", "/assets/", "/ASSETS/app-1.js"]) {
    expect([p, (await get(p)).body.toString()]).toEqual([p, "not a web file"]);
  }
  fs.writeFileSync(path.join(dir, "assets", "later.js"), "1");
  expect((await get("/assets/later.js")).body.toString()).toBe("not a web file");
});

test("files are read at each request, not held: a file changed on disk is served as it now is, one removed is 404", async () => {
  fs.writeFileSync(path.join(dir, "assets", "logo.svg"), "<svg id='new'/>");
  expect((await get("/assets/logo.svg")).body.toString()).toBe("<svg id='new'/>");
  fs.rmSync(path.join(dir, "assets", "logo.svg"));
  const gone = await get("/assets/logo.svg");
  expect([gone.status, JSON.parse(gone.body.toString())]).toEqual([404, { error: { code: "NOT_FOUND", message: "Not found" } }]);
});

test("a file made a symbolic link after the start is 404, not what it points to", async () => {
  const secret = path.join(dir, "..", path.basename(dir) + "-secret.txt");
  fs.writeFileSync(secret, "the store's key");
  try {
    fs.rmSync(path.join(dir, "index.html"));
    fs.symlinkSync(secret, path.join(dir, "index.html"));
    const res = await get("/");
    expect([res.status, res.body.toString()]).toEqual([404, JSON.stringify({ error: { code: "NOT_FOUND", message: "Not found" } })]);
  } finally {
    fs.rmSync(path.join(dir, "index.html"));
    fs.writeFileSync(path.join(dir, "index.html"), page);
    fs.rmSync(secret);
  }
});

test("clients that go away before their answer leave no file open", async () => {
  // Files under the web root this process holds open; sockets still closing are not counted.
  const root = fs.realpathSync(dir) + path.sep;
  const open = () =>
    fs.readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
      } catch {
        return false; // closed while being listed
      }
    }).length;
  const before = open();
  // Each sends its request and closes at once, while the file is being opened.
  await Promise.all(
    Array.from(
      { length: 1000 },
      () =>
        new Promise<void>((resolve) => {
          const socket = net.connect(Number(new URL(origin).port), "127.0.0.1", () => {
            socket.end("GET /assets/app-1.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
            socket.destroy();
          });
          socket.on("close", () => resolve());
          socket.on("error", () => resolve());
        }),
    ),
  );
  // The server's side of each is handled within moments; a file left open would only be closed
  // by the garbage collector, some time later (with Node's DEP0137 warning).
  for (let waited = 0; open() > before && waited < 1000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  expect(open() - before).toBe(0);
});
