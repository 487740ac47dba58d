/** The web vault from the keyboard, on a phone and with many items: a skip link first; wide tables as cards at 390 px; a search that says when it shows only part. */
import fs from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import { MemoryPinStore, VaultClient } from "../../sdk";
import { launchChromium } from "../helpers/browser";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { startTestServer, type TestServer } from "../helpers/server";

jest.setTimeout(60_000);

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!fs.existsSync(path.resolve(__dirname, "../../dist/web/index.html")))
    throw new Error("the web vault is not built: run npm run build");
  server = await startTestServer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop().catch(() => undefined);
});

async function loggedIn(width: number) {
  const page = await browser.newPage({ baseURL: new URL(server.url).origin, viewport: { width, height: 800 } });
  await page.goto("/");
  await page.getByLabel("Email").fill("ada@example.test");
  await page.getByLabel("Master password").fill(SDK_PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Your vaults" }).waitFor();
  return page;
}

test("the first Tab stop is 'Skip to content', and Enter puts the keyboard at the page's content, past the navigation", async () => {
  const ada = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
  await ada.register({ email: "ada@example.test", password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  const page = await loggedIn(1100);
  await page.evaluate("document.activeElement.blur()");
  await page.keyboard.press("Tab");
  expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
  await page.keyboard.press("Enter");
  expect(await page.evaluate("document.activeElement.tagName")).toBe("MAIN");
  // The next Tab lands inside the page, not on the navigation.
  await page.keyboard.press("Tab");
  expect(await page.evaluate("Boolean(document.activeElement.closest('main'))")).toBe(true);
  await page.close();
});

test("on a phone (390 px) the sessions page shows each session as a card, its End button in view, and nothing scrolls sideways", async () => {
  // Another session to end: this test's login and one more from the SDK.
  const other = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore(), deviceName: "A laptop with a rather long device name" });
  await other.login("ada@example.test", SDK_PASSWORD);
  const page = await loggedIn(390);
  await page.getByRole("button", { name: "Menu" }).click();
  await page.getByRole("link", { name: "Sessions" }).click();
  const end = page.getByRole("button", { name: /End session of A laptop/ });
  await end.waitFor();
  const box = (await end.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  expect(await page.evaluate("document.scrollingElement.scrollWidth")).toBeLessThanOrEqual(390);
  await page.close();
});

test("a search across every vault with more matches than it lists says how many it left out", async () => {
  const ada = new VaultClient({ baseUrl: server.url, pins: new MemoryPinStore() });
  await ada.login("ada@example.test", SDK_PASSWORD);
  const vault = await ada.vaults.create("Servers", "shared");
  await ada.items.import(
    vault.vaultId,
    Array.from({ length: 230 }, (_, n) => ({
      name: `Server ${n}`,
      type: "login" as const,
      fields: { username: `root${n}`, password: "x" },
    })),
  );
  const page = await loggedIn(1100);
  await page.getByLabel("Search all items").fill("server");
  await page.getByRole("status").filter({ hasText: "Showing the best 200 of 230 matching items" }).waitFor();
  expect(await page.getByRole("list", { name: "Matching items" }).getByRole("listitem").count()).toBe(200);
  await page.close();
});
