/**
 * The web vault's files (dist/web, built by Vite from web/), served by the gateway under `/` on
 * the API's own origin. Read from disk at each request and streamed, none of them held in memory
 * (about 2.3 MB, most of it zxcvbn's dictionaries that only registration loads); their gzipped
 * copies are made once, by the build (web/vite.config.mts writes `<file>.gz` beside each), not
 * by the server. Looked up by exact path among the files found at start, so nothing outside the
 * folder can be named. The page gets a strict Content-Security-Policy: scripts, styles and
 * connections only from this origin, nothing inline, WebAssembly for the KDF; the service worker
 * (`/sw.js`, which never answers the API) and the app manifest from this origin too.
 */
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream";

export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  // The service worker (/sw.js) and the web app manifest, both from this origin (installable, loads offline).
  "worker-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".wasm": "application/wasm",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

/** The service worker: its scope is the whole origin, and a browser checks it for a new build at every load. */
const SERVICE_WORKER = "/sw.js";

interface Asset {
  file: string;
  /** The build's gzipped copy, where it made one. */
  gzipFile?: string;
  type: string;
  /** Content-hashed names (under /assets/) never change: cached for good; the page itself never. */
  immutable: boolean;
  serviceWorker: boolean;
}

/** The build's gzipped copy of each file: `<file>.gz` (web/vite.config.mts). */
export const GZIP_SUFFIX = ".gz";

export class WebAssets {
  private constructor(private readonly files: ReadonlyMap<string, Asset>) {}

  /** The files of a built web vault, by URL path; null when `dir` holds none (the API serves alone). */
  static load(dir: string): WebAssets | null {
    if (!fs.existsSync(path.join(dir, "index.html"))) return null;
    const found = new Set<string>();
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) found.add(path.join(entry.parentPath, entry.name));
    }
    const files = new Map<string, Asset>();
    for (const file of found) {
      if (file.endsWith(GZIP_SUFFIX) && found.has(file.slice(0, -GZIP_SUFFIX.length))) continue;
      const urlPath = "/" + path.relative(dir, file).split(path.sep).join("/");
      files.set(urlPath, {
        file,
        ...(found.has(file + GZIP_SUFFIX) ? { gzipFile: file + GZIP_SUFFIX } : {}),
        type: TYPES[path.extname(file)] ?? "application/octet-stream",
        immutable: urlPath.startsWith("/assets/"),
        serviceWorker: urlPath === SERVICE_WORKER,
      });
    }
    files.set("/", files.get("/index.html")!);
    return new WebAssets(files);
  }

  /** Answers a GET or HEAD of a web file; false for any other request (the API's routes, unknown paths). */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const asset = this.files.get((req.url ?? "/").split("?")[0]!);
    if (!asset) return false;
    const gzip = asset.gzipFile !== undefined && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
    // Whatever fails once the answer has begun ends its connection, never the process.
    send(req, res, asset, gzip).catch(() => res.destroy());
    return true;
  }
}

/**
 * Streams the file (or its gzipped copy) with the page's headers, exactly as many bytes as its size
 * when opened; a file gone since the start, or made a symbolic link, is 404. The file is closed
 * on every path, a client gone away included.
 */
async function send(req: IncomingMessage, res: ServerResponse, asset: Asset, gzip: boolean): Promise<void> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(gzip ? asset.gzipFile! : asset.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return notFound(res);
  }
  let streaming = false;
  try {
    const st = await handle.stat();
    if (!st.isFile()) return notFound(res);
    if (res.destroyed) return;
    res.writeHead(200, {
      "Content-Type": asset.type,
      "Content-Length": st.size,
      "Content-Security-Policy": WEB_CSP,
      "Cache-Control": asset.immutable ? "public, max-age=31536000, immutable" : "no-store",
      ...(asset.serviceWorker ? { "Service-Worker-Allowed": "/" } : {}),
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
      "Cross-Origin-Opener-Policy": "same-origin",
      Vary: "Accept-Encoding",
      ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    });
    if (req.method === "HEAD" || st.size === 0) return void res.end();
    // From here the stream owns the file: it closes it at its end, on an error, or when the
    // client goes away (pipeline destroys both sides).
    pipeline(handle.createReadStream({ start: 0, end: st.size - 1 }), res, () => undefined);
    streaming = true;
  } catch {
    return notFound(res);
  } finally {
    if (!streaming) await handle.close().catch(() => undefined);
  }
}

function notFound(res: ServerResponse): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(404, { "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify({ error: { code: "NOT_FOUND", message: "Not found" } }));
}
