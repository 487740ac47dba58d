/**
 * The web vault's files (dist/web, built by Vite from web/), served by the gateway under `/` on
 * the API's own origin. Held in memory (about 2 MB, most of it zxcvbn's dictionaries), each file's
 * gzipped copy made on its first request (not at start: a gateway restarts faster); looked up by
 * exact path, so nothing outside the folder can be named. The page gets a strict Content-Security-Policy:
 * scripts, styles and connections only from this origin, nothing inline, WebAssembly for the KDF.
 */
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import zlib from "node:zlib";

export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
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
};

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  /** Content-hashed names (under /assets/) never change: cached for good; the page itself never. */
  immutable: boolean;
}

export class WebAssets {
  private constructor(private readonly files: ReadonlyMap<string, Asset>) {}

  /** Every file of a built web vault; null when `dir` holds none (the API serves alone). */
  static load(dir: string): WebAssets | null {
    if (!fs.existsSync(path.join(dir, "index.html"))) return null;
    const files = new Map<string, Asset>();
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const full = path.join(entry.parentPath, entry.name);
      const urlPath = "/" + path.relative(dir, full).split(path.sep).join("/");
      const body = fs.readFileSync(full);
      files.set(urlPath, {
        body,
        type: TYPES[path.extname(full)] ?? "application/octet-stream",
        immutable: urlPath.startsWith("/assets/"),
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
    const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
    const body = gzip ? (asset.gzip ??= zlib.gzipSync(asset.body, { level: 9 })) : asset.body;
    res.writeHead(200, {
      "Content-Type": asset.type,
      "Content-Length": body.length,
      "Content-Security-Policy": WEB_CSP,
      "Cache-Control": asset.immutable ? "public, max-age=31536000, immutable" : "no-store",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
      "Cross-Origin-Opener-Policy": "same-origin",
      Vary: "Accept-Encoding",
      ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    });
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  }
}
