/**
 * A dishonest server against the browser extension as Chromium loads it: the same attacks the web
 * vault and the SDK refuse, refused here with the same named errors, shown in the popup and the
 * inline menu. The server is the shipped one (embedded, SQLite) behind a proxy that rewrites its
 * answers (test/helpers/dishonest-proxy.ts); the extension signs in to the proxy.
 */
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { VaultClient } from "../../sdk";
import { toBase64 } from "../../protocol/encoding";
import { newDevice } from "../helpers/devices";
import { honest, startDishonestProxy, swapVaultNames, type DishonestProxy } from "../helpers/dishonest-proxy";
import { FIXTURE_HOSTS, launchWithExtension, startFixtureSites, type ExtensionBrowser, type FixtureSites } from "../helpers/extension";
import { startShippedServer, type ShippedServer } from "../helpers/process";
import { TEST_KDF } from "../helpers/sdk";
import { eventually } from "../helpers/wait";

jest.setTimeout(120_000);

const EXTENSION = path.resolve(__dirname, "../../dist/extension");
const ADA = { email: "ada@example.test", password: "correct horse battery staple" };

let server: ShippedServer;
let proxy: DishonestProxy;
let sites: FixtureSites;
let browser: ExtensionBrowser;
let ada: VaultClient;
let team: string;
let personal: string;

beforeAll(async () => {
  server = await startShippedServer();
  proxy = await startDishonestProxy(new URL(server.url).origin);
  sites = await startFixtureSites();
  ada = new VaultClient({ baseUrl: server.url, ...newDevice() });
  await ada.register({ email: ADA.email, password: ADA.password, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  team = (await ada.vaults.create("Team", "shared")).vaultId;
  personal = (await ada.vaults.create("Private", "personal")).vaultId;
  const login = (name: string, username: string) => ({
    name,
    type: "login" as const,
    fields: { username, password: `${name}-password` },
    urls: [{ url: "https://acme-bank.com", match: "domain" as const }],
  });
  await ada.items.add(team, login("Team bank", "team@acme"));
  await ada.items.add(personal, login("My bank", "ada@acme"));
  browser = await launchWithExtension({ extensionDir: EXTENSION, sites });
});

afterAll(async () => {
  await browser?.close();
  await sites?.close();
  await proxy?.close();
  await server?.stop();
});

afterEach(() => {
  proxy.edit = honest;
});

const logins = (from: number) => proxy.sent.slice(from).filter((s) => s.method === "POST" && s.path === "/auth/login");

async function signIn(): Promise<Page> {
  const popup = await browser.openPopup();
  await popup.getByLabel("Server address").fill(proxy.origin);
  await popup.getByLabel("Email").fill(ADA.email);
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Sign in", exact: true }).click();
  return popup;
}

async function signOut(popup: Page): Promise<void> {
  await popup.getByRole("button", { name: "Lock", exact: true }).click();
  await popup.getByRole("button", { name: "Sign out" }).click();
  await popup.getByRole("button", { name: "Sign in", exact: true }).waitFor();
}

/** The inline menu drawn on `tab` for the field `selector`, clicked as a person would. */
async function menuFor(tab: Page, selector: string): Promise<Frame> {
  await tab.locator(selector).click();
  const menu = await eventually("the inline menu", () => tab.frames().find((f) => f.url().includes("/menu.html")));
  await menu.locator("nav, p").first().waitFor();
  return menu;
}

test("1. a KDF downgrade at the first sign-in: the popup says so, and the password is neither derived nor sent", async () => {
  proxy.edit = (method, path, body) =>
    method === "GET" && path === "/auth/prelogin"
      ? { ...body, kdf: { algorithm: "pbkdf2-sha256", salt: body.kdf.salt, iterations: 1 } }
      : body;
  const from = proxy.sent.length;
  const popup = await signIn();
  await popup.getByRole("alert").filter({ hasText: "weaker than this app accepts, so your password was not used" }).waitFor();
  expect(logins(from)).toEqual([]);
  await popup.close();
  // Signed out, the extension draws nothing into pages.
  const tab = await browser.context.newPage();
  await tab.goto(sites.url(FIXTURE_HOSTS.bank, "/login.html"));
  expect(await menuShownWithin(tab, 1000)).toBe(false);
  await tab.close();
});

test("2. a KDF salt changed after a sign-in this extension remembers: refused as unsigned, nothing sent", async () => {
  let popup = await signIn();
  await popup.getByRole("button", { name: "Lock", exact: true }).waitFor();
  await signOut(popup);
  proxy.edit = (method, path, body) =>
    method === "GET" && path === "/auth/prelogin" ? { ...body, kdf: { ...body.kdf, salt: toBase64(new Uint8Array(16).fill(4)) } } : body;
  const from = proxy.sent.length;
  await popup.close();
  popup = await signIn();
  await popup.getByRole("alert").filter({ hasText: "protect your password differently from before" }).waitFor();
  expect(logins(from)).toEqual([]);
  proxy.edit = honest;
  await popup.close();
  popup = await signIn();
  await popup.getByRole("button", { name: "Lock", exact: true }).waitFor();
  await popup.close();
});

test("3. vault names swapped: the popup names the refusal, and neither vault's logins are offered", async () => {
  proxy.edit = swapVaultNames({ vaultId: team, name: "Team" }, { vaultId: personal, name: "Private" });
  const popup = await browser.openPopup();
  // The extension reads its vaults again at most a minute after the last read: lock and unlock to read now.
  await popup.getByRole("button", { name: "Lock", exact: true }).click();
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await popup.getByRole("alert").filter({ hasText: "under another name than its signed history gives it" }).waitFor();
  const tab = await browser.context.newPage();
  await tab.goto(sites.url(FIXTURE_HOSTS.bank, "/login.html"));
  const menu = await menuFor(tab, "#username");
  await menu.getByText("No login is saved for this site.").waitFor();
  expect(await menu.getByRole("button").count()).toBe(0);
  await popup.close();
  await tab.close();
});

test("4. another vault's wrap handed over as the team vault's key: refused by name, and only the vault that checks out is offered", async () => {
  const listed = await ada.vaults.list();
  const own = listed.find((v) => v.vaultId === personal)!;
  const other = await ada.vaults.create("Other", "personal");
  const swap = (v: any) =>
    v.vaultId === personal
      ? { ...v, encryptedVaultKey: other.encryptedVaultKey, wrapSignature: other.wrapSignature, senderId: own.senderId }
      : v;
  proxy.edit = (method, path, body) =>
    method === "GET" && path === "/vaults"
      ? { vaults: body.vaults.map(swap) }
      : method === "GET" && path === `/vaults/${personal}`
        ? swap(body)
        : body;
  const popup = await browser.openPopup();
  await popup.getByRole("button", { name: "Lock", exact: true }).click();
  await popup.getByLabel("Master password").fill(ADA.password);
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await popup
    .getByRole("alert")
    .filter({ hasText: /Private: The key the server handed over is not the one the vault's signed history vouches for/ })
    .waitFor();
  const tab = await browser.context.newPage();
  await tab.goto(sites.url(FIXTURE_HOSTS.bank, "/login.html"));
  const menu = await menuFor(tab, "#username");
  await menu.getByRole("button", { name: /Team bank/ }).waitFor();
  expect(await menu.getByRole("button", { name: /My bank/ }).count()).toBe(0);
  await popup.close();
  await tab.close();
});

/** Whether an inline menu appears on `tab` within `ms` of a click into its username field. */
async function menuShownWithin(tab: Page, ms: number): Promise<boolean> {
  await tab.locator("#username").click();
  await tab.waitForTimeout(ms);
  return tab.frames().some((f) => f.url().includes("/menu.html"));
}
