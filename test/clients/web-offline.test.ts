/**
 * The web vault offline, in Debian's Chromium against the real service, at http://localhost (where
 * browsers take service workers): the copy of what was read, sealed in IndexedDB (no name, user
 * name or password readable there); the server stopped, a reload loads the app from the service
 * worker, the lock screen refuses a wrong password and opens the copy with the right one (its
 * changes wait: web-offline-edits.test.ts); the server started again on the same port, Reconnect
 * goes on with the same session. Log out erases the copy.
 */
import type { Page } from "playwright-core";
import { MemoryPinStore, VaultClient } from "../../sdk";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { webVaultSuite } from "../helpers/web-vault";
import { eventually } from "../helpers/wait";
import { cachedPaths, lockScreen, offlineRecords, restartableServer, unlockWith, workerActive } from "../helpers/web-offline";

jest.setTimeout(180_000);

describe("the web vault offline: installable, and readable from a sealed copy", () => {
  const suite = webVaultSuite({ localhost: true });
  // A server of this test's own: stopped and started again on the same port and data.
  const own = restartableServer("web-offline-");
  beforeAll(own.start);
  afterAll(own.stop);

  const rawCopy = (p: Page) => offlineRecords(p, "snapshots");

  test("sealed copy at rest; offline, a reload opens it with the password; Reconnect goes on", async () => {
    const ada = new VaultClient({ baseUrl: own.url(), pins: new MemoryPinStore() });
    const email = suite.email("offline");
    await ada.register({ email, password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const vault = await ada.vaults.create("Harbour office");
    await ada.items.add(vault.vaultId, { name: "Lighthouse router", fields: { username: "keeper-admin", password: "tide-7Gq!ferry" } });
    await ada.items.add(vault.vaultId, { name: "Pier camera", fields: { username: "gull-watch", password: "salt-92#rope" } });

    const p = await suite.page({ baseURL: `http://localhost:${own.port()}`, acceptDialogs: true });
    await suite.logIn(p, email);
    await p.getByRole("button", { name: "Lock", exact: true }).waitFor();
    await p.goto("/#/items");
    await p.getByRole("button", { name: /Pier camera/ }).waitFor();

    // The copy is written, sealed: the account's id in the clear, nothing it holds.
    const raw = await eventually("the offline copy is written", async () => {
      const records = await rawCopy(p);
      return records.includes(ada.account.userId) && records;
    });
    for (const plain of [
      "Harbour office",
      "Lighthouse router",
      "keeper-admin",
      "tide-7Gq!ferry",
      "Pier camera",
      "gull-watch",
      "salt-92#rope",
    ])
      expect([plain, raw.includes(plain)]).toEqual([plain, false]);
    expect(JSON.parse(raw)).toEqual([
      { userId: ada.account.userId, version: 1, context: "web-offline-cache-v1", sealed: expect.any(String) },
    ]);
    // The service worker took the app's files.
    await eventually("the service worker is active", () => workerActive(p));

    await own.stop();
    // The service worker kept the app's files, and no answer of the API.
    const kept = await cachedPaths(p);
    expect(kept).toContain("/index.html");
    expect(kept.filter((u) => u.startsWith("/api/"))).toEqual([]);
    await p.reload();
    await lockScreen(p);
    await unlockWith(p, "not the master password at all");
    await p.getByRole("alert").filter({ hasText: "That master password is not right." }).waitFor();
    await unlockWith(p, SDK_PASSWORD);
    await p
      .getByRole("status")
      .filter({ hasText: /^Offline: showing what this browser last synced on / })
      .waitFor();
    const openedOffline = Date.now();
    await suite.accessible(p, "offline banner");

    // The lists, a vault's items, reveal; the changes offered wait for the server (web-offline-edits.test.ts).
    await p.getByRole("button", { name: /Lighthouse router/ }).click();
    await p.getByRole("region", { name: "Item Lighthouse router" }).getByRole("button", { name: "Reveal password" }).click();
    await p.getByTestId("password").filter({ hasText: "tide-7Gq!ferry" }).waitFor();
    await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Harbour office" }).click();
    await p.getByRole("button", { name: /Pier camera/ }).click();
    await p.getByRole("region", { name: "Item Pier camera" }).getByRole("button", { name: "Reveal password" }).click();
    await p.getByTestId("password").filter({ hasText: "salt-92#rope" }).waitFor();
    for (const write of ["Add item", "Edit", "Delete"]) await p.getByRole("button", { name: write, exact: true }).waitFor();
    await p.goto(`/#/vault/${vault.vaultId}/settings`);
    await p.getByRole("heading", { name: "Not available offline" }).waitFor();

    // Offline, nothing asks the server on its own: a focus (the emergency banner reads its grants
    // then) sends no request, even once the server is back, until Reconnect.
    await own.start();
    const asked: string[] = [];
    const note = (r: { url(): string }) => asked.push(new URL(r.url()).pathname);
    p.on("request", note);
    // Past the quiet spell after a read (5 s: web/src/emergency-grants.ts), so that only the
    // offline rule can hold the read back.
    await p.waitForTimeout(Math.max(0, openedOffline + 5_500 - Date.now()));
    await p.evaluate("dispatchEvent(new Event('focus'))");
    await p.waitForTimeout(1_000);
    expect(asked.filter((u) => u.startsWith("/api/"))).toEqual([]);
    p.off("request", note);
    // Reconnect refreshes the same session, and writing is back.
    await p.getByRole("button", { name: "Reconnect" }).click();
    await p
      .getByRole("status")
      .filter({ hasText: /^Offline:/ })
      .waitFor({ state: "detached" });
    await p.goto(`/#/vault/${vault.vaultId}`);
    await p.getByRole("button", { name: "Add item" }).waitFor();

    // Lock keeps the copy; Log out erases it.
    await p.getByRole("button", { name: "Lock", exact: true }).click();
    await lockScreen(p);
    expect(await rawCopy(p)).toContain(ada.account.userId);
    await unlockWith(p, SDK_PASSWORD);
    await p.getByRole("button", { name: "Log out" }).click();
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    await eventually("the offline copy is erased", async () => (await rawCopy(p)) === "[]");
  });
});
