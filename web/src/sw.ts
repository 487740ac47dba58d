/**
 * The web vault's service worker (`/sw.js`, scope `/`), so that the installed app loads without the
 * server: the build (web/vite.config.mts) turns this file into dist/web/sw.js with the list of the
 * app's files in place of `__VAULT_SHELL__` and its hash in place of `__VAULT_SHELL_VERSION__`.
 * Installing caches those files; a page load tries the network first and falls back to the cached
 * page; content-hashed files (/assets/) come from the cache first. Nothing under /api/ is ever
 * answered or kept here: the vault's data offline is the sealed copy in IndexedDB (offline.ts),
 * never an API answer. Activating removes the caches of earlier builds.
 */

/** The worker's events, typed here: the page's DOM types lack them (this file is compiled alone). */
interface SwEvent extends Event {
  waitUntil(done: Promise<unknown>): void;
}
interface SwFetchEvent extends SwEvent {
  readonly request: Request;
  respondWith(answer: Promise<Response>): void;
}
interface SwScope {
  addEventListener(type: "install" | "activate", listener: (e: SwEvent) => void): void;
  addEventListener(type: "fetch", listener: (e: SwFetchEvent) => void): void;
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  readonly location: Location;
}

declare const __VAULT_SHELL__: string[];
declare const __VAULT_SHELL_VERSION__: string;

const sw = self as unknown as SwScope;
const PREFIX = "vault-shell-";
const CACHE = PREFIX + __VAULT_SHELL_VERSION__;
const PAGE = "/index.html";

sw.addEventListener("install", (e) => {
  e.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(__VAULT_SHELL__))
      .then(() => sw.skipWaiting()),
  );
});

sw.addEventListener("activate", (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n.startsWith(PREFIX) && n !== CACHE).map((n) => caches.delete(n))))
      .then(() => sw.clients.claim()),
  );
});

sw.addEventListener("fetch", (e) => {
  const req = e.request;
  const url = new URL(req.url);
  // Only this origin's own files, read: never the API, never a write, never another origin.
  if (req.method !== "GET" || url.origin !== sw.location.origin || url.pathname.startsWith("/api/")) return;
  if (req.mode === "navigate") e.respondWith(fetch(req).catch(() => cached(PAGE)));
  else if (url.pathname.startsWith("/assets/")) e.respondWith(cacheFirst(req));
  else e.respondWith(fetch(req).catch(() => cached(url.pathname)));
});

async function cached(path: string): Promise<Response> {
  return (await caches.match(path, { ignoreVary: true, ignoreSearch: true })) ?? Response.error();
}

/** A content-hashed file never changes: from the cache, else fetched and kept (a chunk the install left out, loaded on use). */
async function cacheFirst(req: Request): Promise<Response> {
  const hit = await caches.match(req, { ignoreVary: true });
  if (hit) return hit;
  const res = await fetch(req);
  if (res.ok) {
    const copy = res.clone();
    void caches.open(CACHE).then((cache) => cache.put(req, copy));
  }
  return res;
}
