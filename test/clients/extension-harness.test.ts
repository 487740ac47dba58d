/**
 * The browser extension's harness (test/helpers/extension.ts) proved on a throwaway extension written
 * here: its service worker starts, its content script runs on every fixture name over HTTPS, inside
 * a third party's frame and on a plain HTTP page, its popup opens, and a form post reaches the
 * fixture server. When the extension's own tests fail, this says whether the harness is at fault.
 */
import fs from "node:fs";
import path from "node:path";
import { FIXTURE_HOSTS, launchWithExtension, startFixtureSites, type ExtensionBrowser, type FixtureSites } from "../helpers/extension";
import { tempDir } from "../helpers/temp";

jest.setTimeout(30_000);

/** A minimal MV3 extension: a worker, a content script that marks each document with its host, a popup. */
function writeProbeExtension(): string {
  const dir = tempDir("vault-probe-extension-");
  const files: Record<string, string> = {
    "manifest.json": JSON.stringify({
      manifest_version: 3,
      name: "Harness probe",
      version: "1.0",
      background: { service_worker: "background.js" },
      action: { default_popup: "popup.html" },
      content_scripts: [{ matches: ["http://*/*", "https://*/*"], all_frames: true, js: ["content.js"], run_at: "document_idle" }],
    }),
    "background.js": "self.probeStarted = true;",
    "content.js": "document.documentElement.dataset.probe = location.host;",
    "popup.html":
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Probe popup</title></head><body><h1 id="name"></h1><script src="popup.js"></script></body></html>',
    "popup.js": 'document.getElementById("name").textContent = chrome.runtime.getManifest().name;',
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

describe("the extension harness", () => {
  let sites: FixtureSites;
  let browser: ExtensionBrowser;

  beforeAll(async () => {
    sites = await startFixtureSites();
    browser = await launchWithExtension({ extensionDir: writeProbeExtension(), sites });
    browser.context.setDefaultTimeout(5_000);
  });
  afterAll(async () => {
    await browser?.close();
    await sites?.close();
  });

  const probeOf = (frame: { waitForFunction(fn: string): Promise<unknown>; evaluate(fn: string): Promise<unknown> }) =>
    frame.waitForFunction("document.documentElement.dataset.probe").then(() => frame.evaluate("document.documentElement.dataset.probe"));

  test("the extension's service worker runs, under the id its URL names", async () => {
    expect(browser.extensionId).toMatch(/^[a-p]{32}$/);
    expect(await browser.worker.evaluate("[self.probeStarted, chrome.runtime.id]")).toEqual([true, browser.extensionId]);
  });

  test("the content script runs on every fixture name over HTTPS, the certificate accepted", async () => {
    expect(FIXTURE_HOSTS.homoglyph).toMatch(/^xn--/);
    const page = await browser.context.newPage();
    for (const host of sites.hosts) {
      const res = await page.goto(sites.url(host, "/login.html"));
      expect({ host, status: res?.status(), url: page.url() }).toEqual({ host, status: 200, url: sites.url(host, "/login.html") });
      expect(await probeOf(page.mainFrame())).toBe(`${host}:${sites.httpsPort}`);
    }
    await page.close();
  });

  test("the content script runs inside a third party's frame, under the frame's own name", async () => {
    const page = await browser.context.newPage();
    await page.goto(sites.url(FIXTURE_HOSTS.bank, "/frame-cross.html"));
    const frame = await page.waitForSelector("#login-frame").then((el) => el.contentFrame());
    await frame!.waitForLoadState();
    expect(new URL(frame!.url()).host).toBe(`${FIXTURE_HOSTS.framer}:${sites.httpsPort}`);
    expect(await probeOf(frame!)).toBe(`${FIXTURE_HOSTS.framer}:${sites.httpsPort}`);
    expect(await probeOf(page.mainFrame())).toBe(`${FIXTURE_HOSTS.bank}:${sites.httpsPort}`);
    await page.close();
  });

  test("a plain HTTP page stays on HTTP, and the content script runs there", async () => {
    const page = await browser.context.newPage();
    await page.goto(sites.url(FIXTURE_HOSTS.shop, "/login.html", "http"));
    expect(page.url()).toBe(`http://${FIXTURE_HOSTS.shop}:${sites.httpPort}/login.html`);
    expect(await probeOf(page.mainFrame())).toBe(`${FIXTURE_HOSTS.shop}:${sites.httpPort}`);
    await page.close();
  });

  test("the popup page opens with the extension's APIs", async () => {
    const popup = await browser.openPopup();
    expect(popup.url()).toBe(`chrome-extension://${browser.extensionId}/popup.html`);
    await expect(popup.locator("#name").textContent()).resolves.toBe("Harness probe");
    await popup.close();
  });

  test("a submitted form is recorded by name and path, and answered with a new page", async () => {
    const page = await browser.context.newPage();
    await page.goto(sites.url(FIXTURE_HOSTS.bankLogin, "/login.html"));
    await page.fill("#username", "ada");
    await page.fill("#password", "correct horse battery staple");
    await Promise.all([page.waitForURL(sites.url(FIXTURE_HOSTS.bankLogin, "/session")), page.click("button[type=submit]")]);
    await expect(page.locator("h1").textContent()).resolves.toBe("Signed in");
    expect(sites.submissions).toEqual([
      { host: FIXTURE_HOSTS.bankLogin, path: "/session", fields: { username: "ada", password: "correct horse battery staple" } },
    ]);
    await page.close();
  });
});
