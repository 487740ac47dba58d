/**
 * The browser extension's end-to-end harness: the fixture sites (test/fixtures/sites/) served over
 * HTTPS and HTTP under real-looking names, and Debian's Chromium with the unpacked extension loaded,
 * driven by playwright-core (no browser download). Every fixture name resolves to 127.0.0.1 inside
 * that Chromium only, and a certificate made for the run covers them all; the certificate is trusted
 * by its public key alone, so a page keeps its real origin (scheme, name, port) as the extension sees it.
 */
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { domainToASCII } from "node:url";
import { chromium, type BrowserContext, type Page, type Worker } from "playwright-core";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser";
import { tempDir } from "./temp";

/**
 * The names the fixture sites answer to: a bank and its login subdomain, then the look-alikes a
 * password manager must not fill on (a one-letter typo, a Greek alpha in place of the Latin a, the
 * bank's name as a prefix of another registrable domain), a third party that frames a login, and an
 * unrelated shop. The Greek one is in its punycode form, as Chromium puts it in the URL.
 */
export const FIXTURE_HOSTS = {
  bank: "acme-bank.com",
  bankLogin: "login.acme-bank.com",
  typo: "acme-bamk.com",
  homoglyph: domainToASCII("acme-bαnk.com"),
  prefixed: "acme-bank.com.evil-example.net",
  framer: "widgets.other-site.net",
  shop: "shop.example-store.org",
} as const;

const ALL_HOSTS: string[] = Object.values(FIXTURE_HOSTS);

// From test/helpers (jest) or from dist/test/helpers (the compiled benchmark): the project's own fixture pages.
const ROOT = [path.resolve(__dirname, "../.."), path.resolve(__dirname, "../../..")].find((d) =>
  fs.existsSync(path.join(d, "package.json")),
)!;
const SITES = path.join(ROOT, "test/fixtures/sites");

export interface Certificate {
  key: string;
  cert: string;
  /** base64 SHA-256 of the SubjectPublicKeyInfo, as `--ignore-certificate-errors-spki-list` takes it. */
  spkiHash: string;
}

/** A self-signed P-256 server certificate for `hosts` (each a subjectAltName), made with openssl. */
export function makeCertificate(hosts: string[]): Certificate {
  const dir = tempDir("vault-cert-");
  const names = hosts.map((host) => `DNS:${domainToASCII(host)}`).join(",");
  // A config of its own, so that the system's openssl.cnf adds no CA extensions to a server certificate.
  fs.writeFileSync(
    path.join(dir, "openssl.cnf"),
    [
      "[req]",
      "distinguished_name = dn",
      "x509_extensions = server",
      "[dn]",
      "[server]",
      `subjectAltName = ${names}`,
      "basicConstraints = critical, CA:FALSE",
      "keyUsage = critical, digitalSignature",
      "extendedKeyUsage = serverAuth",
      "",
    ].join("\n"),
  );
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "7"],
      ...["-subj", "/CN=vault extension fixture sites", "-config", "openssl.cnf", "-keyout", "key.pem", "-out", "cert.pem"],
    ],
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"] },
  );
  const key = fs.readFileSync(path.join(dir, "key.pem"), "utf8");
  const cert = fs.readFileSync(path.join(dir, "cert.pem"), "utf8");
  const spki = new crypto.X509Certificate(cert).publicKey.export({ type: "spki", format: "der" });
  return { key, cert, spkiHash: crypto.createHash("sha256").update(spki).digest("base64") };
}

export interface Submission {
  /** The name the form was posted to (the Host header without its port). */
  host: string;
  path: string;
  fields: Record<string, string>;
}

export interface FixtureSites {
  httpsPort: number;
  httpPort: number;
  /** Every name in FIXTURE_HOSTS; the certificate covers each. */
  hosts: string[];
  spkiHash: string;
  url(host: string, path: string, scheme?: "https" | "http"): string;
  /** Every form POST either server received, in order. */
  submissions: Submission[];
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

const SIGNED_IN = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed in</title></head>
<body><h1>Signed in</h1><p><a href="/login.html">Back to the sign-in page</a></p></body></html>`;

function serveFixture(req: http.IncomingMessage, res: http.ServerResponse, submissions: Submission[]): void {
  const url = new URL(req.url ?? "/", "http://fixture");
  if (req.method === "POST") {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const host = new URL(`http://${req.headers.host ?? "unknown"}`).hostname;
      const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      submissions.push({ host, path: url.pathname, fields });
      // A page of its own, so the browser loads a new document after every submit.
      res.writeHead(200, { "content-type": CONTENT_TYPES[".html"], "cache-control": "no-store" }).end(SIGNED_IN);
    });
    return;
  }
  if (url.pathname === "/favicon.ico") {
    res.writeHead(204).end(); // no icon, and no 404 in the console of every page
    return;
  }
  const file = path.join(SITES, path.normalize(decodeURIComponent(url.pathname)));
  const type = CONTENT_TYPES[path.extname(file)];
  if (req.method !== "GET" || !file.startsWith(SITES + path.sep) || !type || !fs.existsSync(file)) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    return;
  }
  res.writeHead(200, { "content-type": type, "cache-control": "no-store" }).end(fs.readFileSync(file));
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * The fixture pages by path, whatever name the browser asked for, over HTTPS and over HTTP on
 * 127.0.0.1. The ports are the system's choice: Chromium reaches every fixture name on them.
 */
export async function startFixtureSites(
  opts: {
    /** Routes of a test's own (a relying party's API): answers and returns true for a request it takes. */
    routes?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  } = {},
): Promise<FixtureSites> {
  const { key, cert, spkiHash } = makeCertificate(ALL_HOSTS);
  const submissions: Submission[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!opts.routes?.(req, res)) serveFixture(req, res, submissions);
  };
  const secure = https.createServer({ key, cert }, handler);
  const plain = http.createServer(handler);
  const httpsPort = await listen(secure);
  const httpPort = await listen(plain);
  const stop = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    httpsPort,
    httpPort,
    hosts: ALL_HOSTS,
    spkiHash,
    url: (host, pathname, scheme = "https") => `${scheme}://${host}:${scheme === "https" ? httpsPort : httpPort}${pathname}`,
    submissions,
    close: async () => {
      await Promise.all([stop(secure), stop(plain)]);
    },
  };
}

export interface ExtensionBrowser {
  context: BrowserContext;
  extensionId: string;
  /** The extension's service worker (background.js). */
  worker: Worker;
  /** The extension's popup page, opened as a tab (chrome-extension://<id>/popup.html). */
  openPopup(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Chromium with the unpacked extension in `extensionDir` and no other, in a fresh profile. The
 * fixture names resolve to 127.0.0.1 and the sites' certificate is accepted by its key; every other
 * name resolves as usual. Playwright's own switches already keep HTTP pages on HTTP (they disable
 * HttpsUpgrades and HttpsFirstBalancedModeAutoEnable); a second `--disable-features` here would
 * replace its list rather than add to it, so there is none.
 */
export async function launchWithExtension(opts: {
  extensionDir: string;
  sites: FixtureSites;
  headless?: boolean;
}): Promise<ExtensionBrowser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  const extensionDir = path.resolve(opts.extensionDir);
  if (!fs.existsSync(path.join(extensionDir, "manifest.json")))
    throw new Error(`${extensionDir} holds no manifest.json: run npm run build`);
  const userDataDir = tempDir("vault-extension-profile-");
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: opts.headless ?? true,
    // Playwright passes --disable-extensions. Chromium 156 loads --load-extension despite it; a later
    // one need not.
    ignoreDefaultArgs: ["--disable-extensions"],
    // Debian's /usr/bin/chromium passes a --load-extension of its own (the packaged extensions in
    // /usr/share/chromium/extensions) before these: Chromium takes the last, so ours alone loads.
    args: [
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
      `--host-resolver-rules=${opts.sites.hosts.map((host) => `MAP ${host} 127.0.0.1`).join(", ")}`,
      `--ignore-certificate-errors-spki-list=${opts.sites.spkiHash}`,
      ...CHROMIUM_FLAGS,
    ],
  });
  try {
    const worker = await extensionWorker(context);
    const extensionId = new URL(worker.url()).host;
    return {
      context,
      extensionId,
      worker,
      openPopup: async () => {
        const page = await context.newPage();
        await page.goto(`chrome-extension://${extensionId}/popup.html`);
        return page;
      },
      close: async () => {
        await context.close();
        fs.rmSync(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await context.close();
    throw err;
  }
}

/** The extension's service worker: already running, or the first one to start. */
async function extensionWorker(context: BrowserContext): Promise<Worker> {
  const isExtension = (w: Worker) => w.url().startsWith("chrome-extension://");
  const started = context.waitForEvent("serviceworker", { predicate: isExtension, timeout: 10_000 });
  const running = context.serviceWorkers().find(isExtension);
  if (running) {
    started.catch(() => undefined);
    return running;
  }
  return started.catch(() => {
    throw new Error(
      "the extension's service worker did not start within 10 s: is the extension loaded (manifest, background.service_worker)?",
    );
  });
}
