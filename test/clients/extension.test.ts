/**
 * The browser extension as Chromium loads it (dist/extension, unpacked), against the server as
 * `npm start` runs it and fixture sites served over HTTPS under real-looking names
 * (test/helpers/extension.ts). Driven as a person would: the toolbar popup's labelled fields and
 * buttons; on a login page, focusing the username field shows a menu with the matching logins by
 * name; choosing one fills both fields; sending a new login offers to save it.
 */
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { VaultClient, type ItemContent } from "../../sdk";
import { seriousAxeViolations } from "../helpers/browser";
import { newDevice } from "../helpers/devices";
import { FIXTURE_HOSTS, launchWithExtension, startFixtureSites, type ExtensionBrowser, type FixtureSites } from "../helpers/extension";
import { startShippedServer, type ShippedServer } from "../helpers/process";
import { TEST_KDF } from "../helpers/sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { eventually } from "../helpers/wait";

jest.setTimeout(120_000);

const EXTENSION = path.resolve(__dirname, "../../dist/extension");
const ADA = { email: "ada@example.test", password: "correct horse battery staple" };
const TOTP_SECRET = "JBSWY3DPEHPK3PXP";

const BANK: ItemContent = {
  name: "Acme Bank",
  type: "login",
  fields: { username: "ada@acme", password: "bank-password-1" },
  urls: [{ url: "https://acme-bank.com", match: "domain" }],
  totp: TOTP_SECRET,
};
const SHOP: ItemContent = {
  name: "Example Store",
  type: "login",
  fields: { username: "ada-shop", password: "shop-password-1" },
  urls: [{ url: "https://shop.example-store.org", match: "host" }],
};

const CARD: ItemContent = {
  name: "Team card",
  type: "card",
  fields: { cardholder: "Ada Lovelace", number: "4111111111111111", expiry: "12/30", code: "737" },
};
const IDENTITY: ItemContent = {
  name: "Ada at work",
  type: "identity",
  fields: { fullName: "Ada Lovelace", email: "ada@acme.example", phone: "+44 20 7946 0000", address: "12 Analytical Row" },
};

let server: ShippedServer;
let sites: FixtureSites;
let browser: ExtensionBrowser;
let ada: VaultClient;
let vaultId: string;

beforeAll(async () => {
  server = await startShippedServer();
  sites = await startFixtureSites();
  ada = new VaultClient({ baseUrl: server.url, ...newDevice() });
  await ada.register({ email: ADA.email, password: ADA.password, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  vaultId = (await ada.vaults.create("Team", "shared")).vaultId;
  await ada.items.add(vaultId, BANK);
  await ada.items.add(vaultId, SHOP);
  await ada.items.add(vaultId, CARD);
  await ada.items.add(vaultId, IDENTITY);
  browser = await launchWithExtension({ extensionDir: EXTENSION, sites });
  await (await signIn()).close();
});

afterAll(async () => {
  await browser?.close();
  await sites?.close();
  await server?.stop();
});

const origin = () => new URL(server.url).origin;
const page = (host: string, file: string, scheme: "https" | "http" = "https") => sites.url(host, `/${file}`, scheme);

async function signIn(): Promise<Page> {
  const popup = await browser.openPopup();
  await popup.getByLabel("Server address").fill(origin());
  await popup.getByLabel("Email").fill(ADA.email);
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Sign in", exact: true }).click();
  await popup.getByRole("button", { name: "Lock", exact: true }).waitFor();
  return popup;
}

/** The inline menu's frame on `tab`, once it is drawn. */
async function menuOf(tab: Page): Promise<Frame> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const frame = tab.frames().find((f) => f.url().startsWith(`chrome-extension://${browser.extensionId}/menu.html`));
    if (frame) {
      await frame.locator("nav, section, p").first().waitFor();
      return frame;
    }
    if (Date.now() > deadline) throw new Error("no inline menu appeared");
    await tab.waitForTimeout(50);
  }
}

const menuShown = (tab: Page) => tab.frames().some((f) => f.url().includes("/menu.html"));

test("the popup, signed in with the server address, email and master password, lists and searches the vault's items", async () => {
  const popup = await browser.openPopup();
  await expectVisible(popup.getByRole("list", { name: "Items" }).getByText("Acme Bank"));
  await popup.getByLabel("Search").fill("store");
  await expectVisible(popup.getByText("Example Store"));
  await popup.getByText("Acme Bank").waitFor({ state: "detached" });
  expect(await seriousAxeViolations(popup)).toEqual([]);
  await popup.close();
});

test("on a login page, focusing the username shows the matching login by name; choosing it fills both fields and copies the one-time code", async () => {
  const tab = await browser.context.newPage();
  await tab.goto(page(FIXTURE_HOSTS.bankLogin, "login.html"));
  await tab.locator("#username").click();
  const menu = await menuOf(tab);
  // Never on page load: nothing is filled until a login is chosen.
  expect([await tab.locator("#username").inputValue(), await tab.locator("#password").inputValue()]).toEqual(["", ""]);
  const choice = menu.getByRole("button", { name: /Acme Bank/ });
  await choice.waitFor();
  expect(await menu.getByRole("button", { name: /Example Store/ }).count()).toBe(0);
  expect(await seriousAxeViolations(menu)).toEqual([]);
  await choice.click();
  await valueIs(tab, "#username", "ada@acme");
  await valueIs(tab, "#password", "bank-password-1");
  const said = await menuSays(tab);
  const codes = [Date.now() - 30_000, Date.now(), Date.now() + 30_000].map((at) => referenceTotp(fromBase32(TOTP_SECRET), at));
  expect(said).toMatch(/one-time code/);
  expect(codes.some((code) => said.includes(code))).toBe(true);
  await tab.close();
});

/** Clicks into `selector` (in `within` where given) as a person would, and answers the menu drawn for it. */
async function focusOn(tab: Page, selector: string, within?: Frame): Promise<Frame> {
  await (within ?? tab).locator(selector).click();
  return menuOf(tab);
}

async function opened(host: string, file: string, scheme: "https" | "http" = "https"): Promise<Page> {
  const tab = await browser.context.newPage();
  await tab.goto(page(host, file, scheme));
  return tab;
}

test("an http page of the login's site: the menu says it is not secure, lists nothing, and nothing is filled", async () => {
  const tab = await opened(FIXTURE_HOSTS.bank, "login.html", "http");
  const menu = await focusOn(tab, "#username");
  await menu.getByRole("alert").filter({ hasText: "not secure" }).waitFor();
  expect(await menu.getByRole("button").count()).toBe(0);
  expect(await tab.locator("#password").inputValue()).toBe("");
  await tab.close();
});

test.each([
  ["a one-letter typo", FIXTURE_HOSTS.typo],
  ["a Greek alpha for the Latin a", FIXTURE_HOSTS.homoglyph],
  ["the site's name as a prefix of another domain", FIXTURE_HOSTS.prefixed],
])("a look-alike of the login's site (%s): the menu warns and lists nothing", async (_what, host) => {
  const tab = await opened(host, "login.html");
  const menu = await focusOn(tab, "#username");
  await menu.getByRole("alert").filter({ hasText: "looks like" }).waitFor();
  expect(await menu.getByRole("button").count()).toBe(0);
  await tab.close();
});

test("a login form in a same-origin frame is filled in that frame", async () => {
  const tab = await opened(FIXTURE_HOSTS.bank, "frame-same.html");
  const frame = await eventually("the login frame", () => tab.frames().find((f) => f.url().endsWith("/login.html")));
  const menu = await focusOn(tab, "#username", frame);
  await menu.getByRole("button", { name: /Acme Bank/ }).click();
  await valueIs(frame, "#password", "bank-password-1");
  await tab.close();
});

test("the login's site framed by another website: the menu says so and nothing is filled", async () => {
  const tab = await opened(FIXTURE_HOSTS.framer, `frame-cross.html?frame=${FIXTURE_HOSTS.bankLogin}`);
  const frame = await eventually("the login frame", () => tab.frames().find((f) => f.url().includes(`${FIXTURE_HOSTS.bankLogin}:`)));
  const menu = await focusOn(tab, "#username", frame);
  await menu.getByRole("alert").filter({ hasText: "inside another website" }).waitFor();
  expect(await menu.getByRole("button").count()).toBe(0);
  expect(await frame.locator("#password").inputValue()).toBe("");
  await tab.close();
});

test("the login's site framed by another site inside its own page (a chain of frames): refused as well", async () => {
  const inner = encodeURIComponent(`/frame-cross.html?frame=${FIXTURE_HOSTS.bankLogin}`);
  const tab = await opened(FIXTURE_HOSTS.bank, `frame-cross.html?frame=${FIXTURE_HOSTS.framer}&path=${inner}`);
  const frame = await eventually("the innermost login frame", () =>
    tab.frames().find((f) => f.url().includes(`${FIXTURE_HOSTS.bankLogin}:`)),
  );
  const menu = await focusOn(tab, "#username", frame);
  await menu.getByRole("alert").filter({ hasText: "inside another website" }).waitFor();
  expect(await menu.getByRole("button").count()).toBe(0);
  await tab.close();
});

test("a hostile page cannot read the menu, click it for the user or get a secret into fields no one can see", async () => {
  const tab = await opened(FIXTURE_HOSTS.bank, "hostile.html");
  const menu = await focusOn(tab, "#username");
  await menu.getByRole("button", { name: /Acme Bank/ }).waitFor();
  // The page's script has had its time at the menu: finding it, reading it, clicking it, posting to it.
  await tab.waitForTimeout(1500);
  const findings = (await tab.evaluate("window.__hostileFindings")) as string[];
  expect(findings.filter((f) => /^(iframe-document|shadow-root|filled):/.test(f))).toEqual([]);
  expect(await tab.locator("#password").inputValue()).toBe("");
  await menu.getByRole("button", { name: /Acme Bank/ }).click();
  await valueIs(tab, "#password", "bank-password-1");
  expect(await tab.locator("#hidden-password").inputValue()).toBe("");
  expect(await tab.locator("#invisible-field").inputValue()).toBe("");
  await tab.close();
});

test("a two-step login: the username on the first page, the password on the second", async () => {
  const tab = await opened(FIXTURE_HOSTS.bankLogin, "two-step.html");
  let menu = await focusOn(tab, "#username");
  await menu.getByRole("button", { name: /Acme Bank/ }).click();
  await valueIs(tab, "#username", "ada@acme");
  await tab.getByRole("button", { name: "Next" }).click();
  await tab.waitForURL(/two-step-password/);
  menu = await focusOn(tab, "#password");
  await menu.getByRole("button", { name: /Acme Bank/ }).click();
  await valueIs(tab, "#password", "bank-password-1");
  await tab.close();
});

test("a one-time code field after a login with a code: the menu offers that login's current code", async () => {
  const tab = await opened(FIXTURE_HOSTS.bankLogin, "code.html");
  const menu = await focusOn(tab, "#one-time-code");
  await menu.getByRole("button", { name: /Fill the code of Acme Bank/ }).click();
  const value = await eventually("the code", async () => (await tab.locator("#one-time-code").inputValue()) || undefined);
  const codes = [Date.now() - 30_000, Date.now()].map((at) => referenceTotp(fromBase32(TOTP_SECRET), at));
  expect(codes).toContain(value);
  await tab.close();
});

test("a sign-up form: the menu generates a password into both new-password fields; sending it offers to save the login, which Save stores", async () => {
  const tab = await opened(FIXTURE_HOSTS.framer, "signup.html");
  await tab.locator("#username").fill("newcomer");
  const menu = await focusOn(tab, "#new-password");
  await menu.getByRole("button", { name: "Generate a password" }).click();
  const generated = await eventually("a generated password", async () => (await tab.locator("#new-password").inputValue()) || undefined);
  expect(generated).toHaveLength(20);
  expect(await tab.locator("#confirm-password").inputValue()).toBe(generated);
  await tab.getByRole("button", { name: "Create account" }).click();
  await tab.getByRole("heading", { name: "Signed in" }).waitFor();
  const bar = await menuOf(tab);
  await bar.getByRole("region", { name: "Vault: save this login" }).waitFor();
  expect(await seriousAxeViolations(bar)).toEqual([]);
  await bar.getByLabel("Vault", { exact: true }).selectOption({ label: "Team" });
  await bar.getByRole("button", { name: "Save" }).click();
  await bar.getByRole("status").filter({ hasText: "Saved" }).waitFor();
  const saved = (await ada.items.list(vaultId)).find((i) => i.fields.username === "newcomer");
  expect(saved).toMatchObject({
    fields: { password: generated },
    urls: [{ url: `https://${FIXTURE_HOSTS.framer}:${sites.httpsPort}`, match: "domain" }],
  });
  await tab.close();
});

test.each([
  [
    "an overlay above it that lets clicks through",
    "const o = document.createElement('div'); o.style.cssText = 'position:fixed;inset:0;z-index:2147483647;pointer-events:none;background:rgba(255,255,255,.6)'; document.documentElement.append(o);",
  ],
  [
    "a popover in the top layer that lets clicks through",
    "const o = document.createElement('div'); o.popover = 'manual'; o.style.cssText = 'position:fixed;inset:0;width:100vw;height:100vh;margin:0;border:0;pointer-events:none;background:rgba(255,255,255,.6)'; document.body.append(o); o.showPopover();",
  ],
])("a page that hides the menu under a click (%s): the choice fills nothing and the menu says why", async (_how, script) => {
  const tab = await opened(FIXTURE_HOSTS.bank, "login.html");
  const menu = await focusOn(tab, "#username");
  const choice = menu.getByRole("button", { name: /Acme Bank/ });
  await eventually("the menu to take clicks", () => choice.isEnabled());
  await tab.evaluate(script);
  // The browser looks again every 100 ms; a person's click comes later than that.
  await tab.waitForTimeout(300);
  await choice.click({ force: true });
  await menu.getByRole("alert").filter({ hasText: "covered this menu" }).waitFor({ state: "attached" });
  expect(await tab.locator("#password").inputValue()).toBe("");
  await tab.close();
});

test.each([
  ["made transparent", "host.style.setProperty('opacity', '0.05', 'important')"],
  ["moved under a button of the page's", "host.style.setProperty('top', '400px', 'important')"],
  ["given a class of the page's", "host.className = 'prize'"],
  ["moved into another element", "document.body.append(host)"],
])("the page restyles or moves the menu (%s): it closes, and nothing is filled", async (_how, change) => {
  const tab = await opened(FIXTURE_HOSTS.bank, "login.html");
  await focusOn(tab, "#username");
  await tab.evaluate(`{ const host = document.documentElement.lastElementChild; ${change}; }`);
  await eventually("the menu to close", () => !menuShown(tab));
  expect(await tab.locator("#password").inputValue()).toBe("");
  await tab.close();
});

test("a page's own script cannot open the menu: focusing a field opens it only after the person pressed it or tabbed to it", async () => {
  const tab = await opened(FIXTURE_HOSTS.bank, "login.html");
  await tab.evaluate("document.getElementById('password').focus(); document.getElementById('username').focus()");
  await tab.waitForTimeout(1000);
  expect(menuShown(tab)).toBe(false);
  await tab.keyboard.press("Tab");
  const menu = await menuOf(tab);
  await menu.getByRole("button", { name: /Acme Bank/ }).waitFor();
  await tab.close();
});

test("the menu is one size on every page, so a page learns nothing from it: a look-alike of a saved site, a site with no login, a card form", async () => {
  const heights: Record<string, number> = {};
  for (const [name, host, file, field] of [
    ["look-alike", FIXTURE_HOSTS.prefixed, "login.html", "#username"],
    ["no login", FIXTURE_HOSTS.framer, "login.html", "#username"],
    ["cards", FIXTURE_HOSTS.shop, "card.html", "#cc-number"],
  ] as const) {
    const tab = await opened(host, file);
    await focusOn(tab, field);
    heights[name] = await tab.evaluate("document.documentElement.lastElementChild.getBoundingClientRect().height");
    await tab.close();
  }
  expect(new Set(Object.values(heights)).size).toBe(1);
});

test("a form the page's script sends by itself offers nothing: a page cannot test guesses at the stored password", async () => {
  const tab = await opened(FIXTURE_HOSTS.bankLogin, "login.html");
  await tab.evaluate(
    "document.getElementById('username').value = 'ada@acme'; document.getElementById('password').value = 'a-guess'; document.getElementById('login').requestSubmit()",
  );
  await tab.getByRole("heading", { name: "Signed in" }).waitFor();
  await tab.waitForTimeout(1500);
  expect(menuShown(tab)).toBe(false);
  await tab.close();
});

test("a card form and an address form: the menu lists the cards or identities, and a choice fills their fields", async () => {
  const tab = await opened(FIXTURE_HOSTS.shop, "card.html");
  let menu = await focusOn(tab, "#cc-number");
  await menu.getByRole("button", { name: /Team card/ }).click();
  await valueIs(tab, "#cc-number", "4111111111111111");
  expect([
    await tab.locator("#cc-name").inputValue(),
    await tab.locator("#cc-exp").inputValue(),
    await tab.locator("#cc-csc").inputValue(),
  ]).toEqual(["Ada Lovelace", "12/30", "737"]);
  await tab.goto(page(FIXTURE_HOSTS.shop, "identity.html"));
  menu = await focusOn(tab, "#name");
  await menu.getByRole("button", { name: /Ada at work/ }).click();
  await valueIs(tab, "#email", "ada@acme.example");
  expect(await tab.locator("#tel").inputValue()).toBe("+44 20 7946 0000");
  await tab.close();
});

test("locked, the popup shows only the lock screen and a login page's menu only says so; nothing secret is in the extension's disk storage", async () => {
  let popup = await browser.openPopup();
  await popup.getByRole("button", { name: "Lock", exact: true }).click();
  await popup.getByRole("heading", { name: "Vault is locked" }).waitFor();
  expect(await popup.getByRole("list", { name: "Items" }).count()).toBe(0);
  expect(await seriousAxeViolations(popup)).toEqual([]);
  const tab = await opened(FIXTURE_HOSTS.bank, "login.html");
  const menu = await focusOn(tab, "#username");
  await menu.getByText("Vault is locked").waitFor();
  expect(await menu.getByRole("button").count()).toBe(0);
  const disk = JSON.stringify(await browser.worker.evaluate("chrome.storage.local.get(null)"));
  const memory = JSON.stringify(await browser.worker.evaluate("chrome.storage.session.get(null)"));
  for (const secret of [ADA.password, "bank-password-1", "4111111111111111", "accessToken", "refreshToken", "stretchedKey"])
    expect({ secret, onDisk: disk.includes(secret) }).toEqual({ secret, onDisk: false });
  expect(memory).not.toContain("stretchedKey");
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await popup.getByRole("list", { name: "Items" }).waitFor();
  await popup.close();
  // Idle past the lock time (shortened here): locked again, without anyone pressing Lock.
  await browser.worker.evaluate("chrome.storage.local.set({ idleLockSeconds: 1 })");
  await tab.waitForTimeout(1500);
  popup = await browser.openPopup();
  await popup.getByRole("heading", { name: "Vault is locked" }).waitFor();
  await browser.worker.evaluate("chrome.storage.local.remove('idleLockSeconds')");
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await popup.getByRole("list", { name: "Items" }).waitFor();
  await popup.close();
  await tab.close();
});

test("a page cannot keep the vault unlocked: its focuses and its own frames of the menu are not use", async () => {
  await browser.worker.evaluate("chrome.storage.local.set({ idleLockSeconds: 2 })");
  const tab = await opened(FIXTURE_HOSTS.bank, "login.html");
  await tab.evaluate(`{
    const menuUrl = "chrome-extension://${browser.extensionId}/menu.html#keep-alive";
    setInterval(() => {
      document.getElementById("password").focus();
      document.getElementById("username").focus();
      const frame = document.createElement("iframe");
      frame.src = menuUrl;
      document.body.append(frame);
      setTimeout(() => frame.remove(), 250);
    }, 300);
  }`);
  await tab.waitForTimeout(3500);
  const popup = await browser.openPopup();
  await popup.getByRole("heading", { name: "Vault is locked" }).waitFor();
  await tab.close();
  await browser.worker.evaluate("chrome.storage.local.remove('idleLockSeconds')");
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await popup.getByRole("list", { name: "Items" }).waitFor();
  await popup.close();
});

test("a change-password form sent with a new password offers to update the login; Update changes it and its history keeps the old one", async () => {
  const tab = await opened(FIXTURE_HOSTS.bankLogin, "change-password.html");
  await tab.locator("#current-password").fill("bank-password-1");
  await tab.locator("#new-password").fill("bank-password-2");
  await tab.locator("#confirm-password").fill("bank-password-2");
  await tab.getByRole("button", { name: "Change password" }).click();
  await tab.getByRole("heading", { name: "Signed in" }).waitFor();
  const bar = await menuOf(tab);
  await bar.getByRole("region", { name: "Vault: update this login" }).getByText("Acme Bank").waitFor();
  await bar.getByRole("button", { name: "Update" }).click();
  await bar.getByRole("status").filter({ hasText: "Updated" }).waitFor();
  const bank = (await ada.items.list(vaultId)).find((i) => i.name === "Acme Bank")!;
  expect(bank.fields.password).toBe("bank-password-2");
  const history = await ada.items.history(vaultId, bank.itemId);
  expect(history.map((r) => r.fields.password)).toContain("bank-password-1");
  await tab.close();
});

test("the popup copies a password, and the clipboard is emptied after the clearing time (shortened here)", async () => {
  await browser.worker.evaluate("chrome.storage.local.set({ clipboardClearSeconds: 2 })");
  const popup = await browser.openPopup();
  await popup.getByRole("button", { name: "Copy password of Example Store" }).click();
  await popup.getByRole("status").filter({ hasText: "copied" }).waitFor();
  // The clipboard as a page the person allowed to read it sees it.
  const reader = await opened(FIXTURE_HOSTS.shop, "login.html");
  await browser.context.grantPermissions(["clipboard-read"], { origin: new URL(reader.url()).origin });
  const clipboard = () => reader.evaluate("navigator.clipboard.readText()");
  expect(await clipboard()).toBe("shop-password-1");
  await eventually("the clipboard to be emptied", async () => (await clipboard()) === "");
  await browser.worker.evaluate("chrome.storage.local.remove('clipboardClearSeconds')");
  await reader.close();
  await popup.close();
});

// Last: it stops the service worker, whose handle the other tests use.
test("a service worker Chromium stopped comes back unlocked from session storage, and fills", async () => {
  const tab = await opened(FIXTURE_HOSTS.bankLogin, "login.html");
  const internals = await browser.context.newPage();
  await internals.goto("chrome://serviceworker-internals/");
  const entry = internals.locator(".serviceworker-registration").filter({ hasText: `chrome-extension://${browser.extensionId}/` });
  await entry.getByText("Running Status: RUNNING").waitFor();
  await entry.getByRole("button", { name: "Stop" }).click();
  await entry.getByText("Running Status: STOPPED").waitFor();
  await internals.close();
  const menu = await focusOn(tab, "#username");
  await menu.getByRole("button", { name: /Acme Bank/ }).click();
  await valueIs(tab, "#username", "ada@acme");
  await tab.close();
});

/** What a menu says after a choice, when it stays open to say it. */
async function menuSays(tab: Page): Promise<string> {
  const menu = await menuOf(tab);
  return eventually(
    "the menu's answer",
    async () => (await menu.locator("[role=status], [role=alert]").first().textContent()) || undefined,
  );
}

async function valueIs(tab: Page | Frame, selector: string, value: string): Promise<void> {
  await eventually(`${selector} to hold its value`, async () => (await tab.locator(selector).inputValue()) === value, { timeoutMs: 5_000 });
}

async function expectVisible(locator: ReturnType<Page["locator"]>): Promise<void> {
  await locator.first().waitFor({ state: "visible" });
}
