/**
 * What the web vault's offline suites share (web-offline.test.ts, web-offline-edits.test.ts): their
 * restartable server, the lock screen, and what the page's IndexedDB and service worker hold, read in the page's own words
 * (these files are type-checked without the DOM's types).
 */
import type { Page } from "playwright-core";
import { startTestServer, tempDir, type TestServer } from "./server";

/**
 * A server of the suite's own, stopped and started again on the same port and data folder, so the
 * page's origin (and its service worker and IndexedDB) stays the same across the restart.
 */
export function restartableServer(prefix: string): { start(): Promise<void>; stop(): Promise<void>; url(): string; port(): string } {
  const dataDir = tempDir(prefix);
  let server: TestServer | undefined;
  let port = "0";
  return {
    async start() {
      server = await startTestServer({ REGISTRATION_MODE: "open", DATA_DIR: dataDir, PORT: port });
      port = new URL(server.url).port;
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
    url: () => server!.url,
    port: () => port,
  };
}

export const lockScreen = (p: Page) => p.getByRole("heading", { name: "Your vault is locked" }).waitFor();

export async function unlockWith(p: Page, password: string): Promise<void> {
  await p.getByLabel("Master password").fill(password);
  await p.getByRole("button", { name: "Unlock", exact: true }).click();
}

/** Every record of one store of the offline database (`snapshots`, `edits`), as IndexedDB returns it, in JSON. */
export const offlineRecords = (p: Page, store: "snapshots" | "edits"): Promise<string> =>
  p.evaluate(`(async () => {
    // Not made here if the page has not made it.
    if (!(await indexedDB.databases()).some((d) => d.name === "vault-offline")) return "[]";
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open("vault-offline");
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    try {
      if (!db.objectStoreNames.contains(${JSON.stringify(store)})) return "[]";
      return await new Promise((resolve, reject) => {
        const all = db.transaction(${JSON.stringify(store)}).objectStore(${JSON.stringify(store)}).getAll();
        all.onsuccess = () => resolve(JSON.stringify(all.result));
        all.onerror = () => reject(all.error);
      });
    } finally {
      // Open, it would hold up the page's own upgrade of the database.
      db.close();
    }
  })()`);

/** The path of every response the service worker's caches hold. */
export const cachedPaths = (p: Page): Promise<string[]> =>
  p.evaluate(`(async () => {
    const paths = [];
    for (const name of await caches.keys())
      for (const req of await (await caches.open(name)).keys()) paths.push(new URL(req.url).pathname);
    return paths;
  })()`);

export const workerActive = (p: Page): Promise<boolean> =>
  p.evaluate(`navigator.serviceWorker.getRegistration("/").then((r) => r?.active?.state === "activated")`);
