/**
 * A dishonest server, as a real HTTP server in front of the real service: it forwards every
 * request (the API and the web vault's pages alike), lets a test rewrite the service's genuine
 * JSON answers (`edit`), and records every API request a client sends. A client (the SDK, the
 * `vaultctl` process, Chromium) points at `url` and cannot tell it from the service.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ServerStore } from "./postgres";
import { startTestServer, type TestServer } from "./server";

/** One API request as the client sent it: path relative to /api/v1, the JSON body if any. */
export interface SentRequest {
  method: string;
  path: string;
  body?: any;
}

/** Rewrites one answer of the service: return the body to send instead (or the same one). */
export type Edit = (method: string, path: string, body: any, status: number) => any;

/**
 * Rewrites one API request before the service sees it (a server that skips one of its own
 * checks): the JSON body to forward (undefined: none), `headers` changed in place.
 */
export type Rewrite = (method: string, path: string, body: any, headers: Record<string, string>) => any;

export interface DishonestProxy {
  /** The proxy's address: `${origin}/api/v1`. */
  url: string;
  origin: string;
  /** Every API request since the proxy started (or since `sent.length = 0`). */
  sent: SentRequest[];
  /** The rewrite in force; `honest` by default. */
  edit: Edit;
  /** The request rewrite in force (`sent` keeps what the client sent); none by default. */
  rewrite?: Rewrite;
  close(): Promise<void>;
}

export const honest: Edit = (_method, _path, body) => body;

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "host"]);

export async function startDishonestProxy(upstreamOrigin: string): Promise<DishonestProxy> {
  const proxy: DishonestProxy = { url: "", origin: "", sent: [], edit: honest, close: async () => undefined };
  const server = http.createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", upstreamOrigin);
      const api = url.pathname.startsWith("/api/v1/");
      const path = url.pathname.replace(/^\/api\/v1/, "") + url.search;
      let body: unknown;
      if (api) {
        try {
          body = raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
        } catch {
          body = raw.toString("utf8");
        }
        proxy.sent.push({ method: req.method ?? "GET", path, body });
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && !HOP_BY_HOP.has(k)) headers[k] = v;
      if (api && proxy.rewrite && typeof body !== "string") {
        const out = proxy.rewrite(req.method ?? "GET", url.pathname.replace(/^\/api\/v1/, ""), structuredClone(body), headers);
        raw = out === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(out));
      }
      headers["accept-encoding"] = "identity";
      const upstream = await fetch(url, { method: req.method, headers, body: raw.length ? raw : undefined });
      let out = Buffer.from(await upstream.arrayBuffer());
      if (api && (upstream.headers.get("content-type") ?? "").includes("application/json") && out.length > 0) {
        const edited = proxy.edit(
          req.method ?? "GET",
          url.pathname.replace(/^\/api\/v1/, ""),
          JSON.parse(out.toString("utf8")),
          upstream.status,
        );
        out = Buffer.from(JSON.stringify(edited));
      }
      upstream.headers.forEach((value, key) => {
        if (!HOP_BY_HOP.has(key)) res.setHeader(key, value);
      });
      res.setHeader("content-length", out.length);
      res.writeHead(upstream.status);
      res.end(out);
    } catch (err) {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${(err as Error).message}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  proxy.origin = `http://127.0.0.1:${port}`;
  proxy.url = `${proxy.origin}/api/v1`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

/** The requests that change something on the server, or carry what a password derives (everything but reads and prelogin). */
export function writesIn(sent: readonly SentRequest[]): SentRequest[] {
  return sent.filter((s) => s.method !== "GET");
}

// ---- Attacks more than one client's test makes ------------------------------------------------------

/** The server swaps two vaults' names, in the vault list and in each vault's own record. */
export function swapVaultNames(a: { vaultId: string; name: string }, b: { vaultId: string; name: string }): Edit {
  const swapped = (v: any) =>
    v.vaultId === a.vaultId ? { ...v, vaultName: b.name } : v.vaultId === b.vaultId ? { ...v, vaultName: a.name } : v;
  return (method, path, body) => {
    if (method === "GET" && path === "/vaults") return { vaults: body.vaults.map(swapped) };
    if (method === "GET" && /^\/vaults\/[^/]+$/.test(path)) return swapped(body);
    return body;
  };
}

/**
 * The server pairs a colleague's email with a colluder: the organization's list shows the
 * colluder's id and keys (with `keyStatement`) under the colleague's email, and the colleague
 * nowhere; the colluder's key lookup answers the same.
 */
export function colluderAs(
  colleague: { userId: string; email: string },
  colluder: { userId: string; bundle: { publicKey: string; signingPublicKey: string; publicKeySignature: string } },
  keyStatement: unknown,
): Edit {
  const bundle = {
    userId: colluder.userId,
    email: colleague.email,
    publicKey: colluder.bundle.publicKey,
    signingPublicKey: colluder.bundle.signingPublicKey,
    publicKeySignature: colluder.bundle.publicKeySignature,
    keyStatement,
  };
  return (method, path, body) => {
    if (method === "GET" && /^\/orgs\/[^/]+\/members$/.test(path))
      return {
        members: body.members
          .filter((m: any) => m.userId !== colleague.userId && m.userId !== colluder.userId)
          .concat([{ ...bundle, role: "member", createdAt: new Date().toISOString() }]),
      };
    if (method === "GET" && path === `/users/${colluder.userId}/keys`) return bundle;
    return body;
  };
}

/**
 * One describe block's dishonest server: the real service on a fresh store (`openStore`, one of
 * SQL_ENGINES), open registration, and the proxy in front of it, honest again after every test.
 * Read its parts inside tests (they exist once `beforeAll` ran).
 */
export function dishonestSuite(openStore: () => Promise<ServerStore>, env: Record<string, string> = {}) {
  const suite = {} as { store: ServerStore; server: TestServer; proxy: DishonestProxy };
  beforeAll(async () => {
    suite.store = await openStore();
    suite.server = await startTestServer({ ...suite.store.env, REGISTRATION_MODE: "open", ...env });
    suite.proxy = await startDishonestProxy(new URL(suite.server.url).origin);
  });
  afterEach(() => {
    suite.proxy.edit = honest;
    suite.proxy.rewrite = undefined;
  });
  afterAll(async () => {
    await suite.proxy?.close();
    await suite.server?.stop();
    await suite.store?.drop();
  });
  return suite;
}
