/**
 * Edits made offline in the web vault (web/src/offline-edits.ts, offline-replay.ts), in Debian's
 * Chromium against the real service at http://localhost: the server stopped, items are changed,
 * added and moved to the trash, each shown at once as waiting; the queue is sealed in IndexedDB
 * (nothing of it readable) and outlives a reload; Log out warns before losing it. Meanwhile another
 * device changes and trashes some of the same items through the SDK; back online, every edit is
 * saved in order and nothing is lost: a conflict keeps the other version in the item's history
 * (checked through the SDK's history) and is reported by name, an item trashed meanwhile comes
 * back, a delete of an item changed meanwhile is not made. Going on with Log out erases the queue.
 */
import type { Page } from "playwright-core";
import { MemoryPinStore, VaultClient, type Item } from "../../sdk";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { webVaultSuite } from "../helpers/web-vault";
import { eventually } from "../helpers/wait";
import { lockScreen, offlineRecords, restartableServer, unlockWith, workerActive } from "../helpers/web-offline";

jest.setTimeout(300_000);

describe("the web vault offline: edits wait, and are saved on return with nothing lost", () => {
  const suite = webVaultSuite({ localhost: true });
  // A server of this test's own: stopped and started again on the same port and data.
  const own = restartableServer("web-offline-edits-");
  beforeAll(own.start);
  afterAll(own.stop);

  const items = (p: Page) => p.getByRole("list", { name: "Items" });
  const status = (p: Page, text: string | RegExp) => p.getByRole("status").filter({ hasText: text });
  const open = async (p: Page, name: string) => {
    await items(p)
      .getByRole("button", { name: new RegExp(`^${name}`) })
      .click();
    return p.getByRole("region", { name: `Item ${name}` });
  };
  /** One field of an item changed in its dialog, as a person does it. */
  const edit = async (p: Page, name: string, label: string, value: string) => {
    await (await open(p, name)).getByRole("button", { name: "Edit" }).click();
    const dialog = p.getByRole("dialog", { name: `Edit ${name}` });
    await dialog.getByLabel(label, { exact: true }).fill(value);
    await dialog.getByRole("button", { name: "Save item" }).click();
    await dialog.waitFor({ state: "detached" });
  };
  const remove = async (p: Page, name: string) => {
    await (await open(p, name)).getByRole("button", { name: "Delete" }).click();
    await items(p)
      .getByRole("button", { name: new RegExp(`^${name}`) })
      .waitFor({ state: "detached" });
  };
  /** The server stopped; a reload loads the app from the service worker and the password opens the copy. */
  const offlineReload = async (p: Page) => {
    await p.reload();
    await lockScreen(p);
    await unlockWith(p, SDK_PASSWORD);
    await status(p, /^Offline: showing what this browser last synced on /).waitFor();
  };

  test("changed, added and trashed offline; a reload keeps them; back online, saved with conflicts in history", async () => {
    const ada = new VaultClient({ baseUrl: own.url(), pins: new MemoryPinStore() });
    const email = suite.email("offline-edits");
    await ada.register({ email, password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
    const { vaultId } = await ada.vaults.create("Harbour office");
    const add = (name: string, username: string, password: string) => ada.items.add(vaultId, { name, fields: { username, password } });
    const router = await add("Lighthouse router", "keeper-admin", "tide-7Gq!ferry");
    const camera = await add("Pier camera", "gull-watch", "salt-92#rope");
    const gate = await add("Dock gate", "gate-keeper", "chain-4#link");
    const buoy = await add("Signal buoy", "buoy-admin", "bell-6%swell");
    const crane = await add("Harbour crane", "crane-op", "hook-3&lift");

    const p = await suite.page({ baseURL: `http://localhost:${own.port()}` });
    // Each confirm() recorded and answered as `answer` says.
    const dialogs: string[] = [];
    let answer = true;
    p.on("dialog", (d) => {
      dialogs.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });
    await suite.logIn(p, email);
    await p.getByRole("button", { name: "Lock", exact: true }).waitFor();
    await p.goto(`/#/vault/${vaultId}`);
    await items(p)
      .getByRole("button", { name: /^Harbour crane/ })
      .waitFor();
    await eventually("the offline copy is written", async () => (await offlineRecords(p, "snapshots")).includes(ada.account.userId));
    await eventually("the service worker is active", () => workerActive(p));

    // Offline: three changes, an item added, two moved to the trash; each shown at once, waiting.
    await own.stop();
    await offlineReload(p);
    await p.goto(`/#/vault/${vaultId}`);
    await edit(p, "Lighthouse router", "Password", "moon-4Rk!offline");
    await edit(p, "Dock gate", "Username", "gate-keeper-2");
    await edit(p, "Signal buoy", "Password", "buoy-8^offline");
    await p.getByRole("button", { name: "Add item" }).click();
    const dialog = p.getByRole("dialog", { name: "New item" });
    await dialog.getByLabel("Name", { exact: true }).fill("Breakwater gate");
    await dialog.getByLabel("Password", { exact: true }).fill("gate-9Lx#quay");
    await dialog.getByRole("button", { name: "Save item" }).click();
    await dialog.waitFor({ state: "detached" });
    await remove(p, "Pier camera");
    await remove(p, "Harbour crane");
    await status(p, "6 edits wait to be saved.").waitFor();
    for (const name of ["Lighthouse router", "Dock gate", "Signal buoy", "Breakwater gate"])
      await items(p)
        .getByRole("button", { name: new RegExp(`^${name}.*waiting to be saved`) })
        .waitFor();

    // The queue at rest: sealed, only the account's id in the clear.
    const raw = await offlineRecords(p, "edits");
    const plain = ["Harbour office", "Lighthouse router", "moon-4Rk!offline", "gate-keeper-2", "Signal buoy", "buoy-8^offline"];
    for (const secret of [...plain, "Breakwater gate", "gate-9Lx#quay", "Pier camera", "Harbour crane"])
      expect([secret, raw.includes(secret)]).toEqual([secret, false]);
    expect(JSON.parse(raw)).toEqual([
      { userId: ada.account.userId, version: 1, context: "web-offline-edits-v1", sealed: expect.any(String) },
    ]);

    // A reload, still offline: the edits still wait, shown as made.
    await offlineReload(p);
    await status(p, "6 edits wait to be saved.").waitFor();
    await p.goto(`/#/vault/${vaultId}`);
    await items(p)
      .getByRole("button", { name: /^Breakwater gate.*waiting to be saved/ })
      .waitFor();
    expect(
      await items(p)
        .getByRole("button", { name: /^(Pier camera|Harbour crane)/ })
        .count(),
    ).toBe(0);
    await (await open(p, "Lighthouse router")).getByRole("button", { name: "Reveal password" }).click();
    await p.getByTestId("password").filter({ hasText: "moon-4Rk!offline" }).waitFor();

    // Log out warns that they would be lost; declined, nothing changes.
    answer = false;
    const asked = dialogs.length;
    await p.getByRole("button", { name: "Log out" }).click();
    await eventually("Log out asks first", () => dialogs.length === asked + 1);
    expect(dialogs.at(-1)).toMatch(/^6 edits made offline still wait to be saved in this browser\. Logging out erases them/);
    await status(p, "6 edits wait to be saved.").waitFor();
    answer = true;

    // Meanwhile, another device (the server back, this browser still cut off): the router changed, the buoy trashed, the crane changed.
    await p.context().setOffline(true);
    await own.start();
    expect(await p.evaluate(`fetch("/", { method: "HEAD", cache: "no-store" }).then(() => "answered", () => "unreachable")`)).toBe(
      "unreachable",
    );
    const other = (item: Item, password: string) =>
      ada.items.edit(vaultId, item.itemId, { name: item.name, fields: { ...item.fields, password } });
    await other(router, "storm-2Wq!other");
    await ada.items.delete(vaultId, buoy.itemId);
    await other(crane, "hook-5&other");
    await p.context().setOffline(false);

    // Back: every edit saved in order, the outcome reported by name.
    await p.getByRole("button", { name: "Reconnect" }).click();
    const report = status(p, "Edits made offline: 5 saved.");
    await report.waitFor({ timeout: 60_000 });
    const lines = await report.getByRole("listitem").allTextContents();
    expect(lines).toEqual([
      "Edits made offline: 5 saved.",
      'Conflict: changed meanwhile by someone else: "Lighthouse router" (Harbour office). Your version is saved; the other version is in the item\'s history.',
      'Moved to the trash meanwhile: "Signal buoy" (Harbour office). Brought back, with your change.',
      'Not moved to the trash, because someone changed it meanwhile: "Harbour crane" (Harbour office). The newer version is kept.',
    ]);

    // Nothing lost: the offline version current, the other one in the item's history.
    const now = new Map((await ada.items.list(vaultId)).map((i) => [i.name, i]));
    expect([...now.keys()].sort()).toEqual(["Breakwater gate", "Dock gate", "Harbour crane", "Lighthouse router", "Signal buoy"]);
    expect(now.get("Lighthouse router")!.fields.password).toBe("moon-4Rk!offline");
    const history = await ada.items.history(vaultId, router.itemId);
    expect(history.map((r) => r.fields.password)).toEqual(["storm-2Wq!other", "tide-7Gq!ferry"]);
    expect(now.get("Dock gate")!.fields.username).toBe("gate-keeper-2");
    expect(now.get("Dock gate")!.revision).toBe(gate.revision + 1);
    expect([now.get("Signal buoy")!.itemId, now.get("Signal buoy")!.fields.password]).toEqual([buoy.itemId, "buoy-8^offline"]);
    expect(now.get("Harbour crane")!.fields.password).toBe("hook-5&other");
    expect(now.get("Breakwater gate")!.fields.password).toBe("gate-9Lx#quay");
    expect((await ada.items.trash(vaultId)).map((t) => t.itemId)).toEqual([camera.itemId]);
    await eventually("the queue is emptied", async () => (await offlineRecords(p, "edits")) === "[]");
    await items(p)
      .getByRole("button", { name: /^Breakwater gate/ })
      .waitFor();
    expect(
      await items(p)
        .getByRole("button", { name: /waiting to be saved/ })
        .count(),
    ).toBe(0);

    // Offline once more, an edit waits; going on with Log out erases it.
    await own.stop();
    await offlineReload(p);
    await p.goto(`/#/vault/${vaultId}`);
    await edit(p, "Dock gate", "Username", "gate-keeper-3");
    await status(p, "1 edit waits to be saved.").waitFor();
    await p.getByRole("button", { name: "Log out" }).click();
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    expect(dialogs.at(-1)).toMatch(/^1 edit made offline still waits to be saved in this browser\. Logging out erases them/);
    await eventually("the queue is erased", async () => (await offlineRecords(p, "edits")) === "[]");
  });
});
