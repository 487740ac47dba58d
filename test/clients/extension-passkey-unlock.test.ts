/**
 * The browser extension's passkeys for the account (docs/design/passkey-unlock.md), as Chromium
 * loads it (dist/extension, unpacked), against the server as `npm start` runs it: Debian's
 * Chromium with its virtual authenticator (DevTools protocol, with and without the PRF) on the
 * popup's tab. The ceremony runs in the popup, an extension page, with the server's relying party
 * id ("localhost"); its answers come from `chrome-extension://<id>`, which the server accepts only
 * as listed in WEBAUTHN_ORIGINS. So Chromium starts first, and the server after it, with the
 * extension's origin (and the web vault's) in that setting.
 *
 * A passkey added in the popup unlocks the locked extension and signs it in again with no master
 * password typed; the vault's logins are listed and filled as after a password unlock. One without
 * the PRF signs in and asks the master password. A web page cannot reach any of it: not through
 * the content script's bridge, and not as a content script (its world driven by the DevTools
 * protocol, standing for one a compromised page took over).
 */
import path from "node:path";
import type { CDPSession, Frame, Page } from "playwright-core";
import { VaultClient, type ItemContent } from "../../sdk";
import { seriousAxeViolations } from "../helpers/browser";
import { newDevice } from "../helpers/devices";
import { FIXTURE_HOSTS, launchWithExtension, startFixtureSites, type ExtensionBrowser, type FixtureSites } from "../helpers/extension";
import { freePort } from "../helpers/ports";
import { startShippedServer, type ShippedServer } from "../helpers/process";
import { SDK_PASSWORD, TEST_KDF } from "../helpers/sdk";
import { eventually } from "../helpers/wait";

jest.setTimeout(240_000);

const EXTENSION = path.resolve(__dirname, "../../dist/extension");
const EMAIL = "ada.passkeys@example.test";

const BANK: ItemContent = {
  name: "Acme Bank",
  type: "login",
  fields: { username: "ada@acme", password: "bank-password-1" },
  urls: [{ url: "https://acme-bank.com", match: "domain" }],
};

let server: ShippedServer;
let sites: FixtureSites;
let browser: ExtensionBrowser;
let ada: VaultClient;

beforeAll(async () => {
  sites = await startFixtureSites();
  browser = await launchWithExtension({ extensionDir: EXTENSION, sites });
  // The extension's id is known once Chromium loaded it (for an unpacked one, it follows from its folder's path).
  const port = await freePort();
  server = await startShippedServer({
    PORT: String(port),
    WEBAUTHN_RP_ID: "localhost",
    WEBAUTHN_ORIGINS: `http://localhost:${port},chrome-extension://${browser.extensionId}`,
  });
  ada = new VaultClient({ baseUrl: server.url, ...newDevice() });
  await ada.register({ email: EMAIL, password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
  const { vaultId } = await ada.vaults.create("Team", "shared");
  await ada.items.add(vaultId, BANK);
});

afterAll(async () => {
  await browser?.close();
  await sites?.close();
  await server?.stop();
});

const origin = () => new URL(server.url).origin;

/** The popup in a tab of its own, with Chromium's virtual authenticator on that tab: a platform one that keeps passkeys and verifies its user. */
async function popupWithAuthenticator(hasPrf: boolean): Promise<{ popup: Page; cdp: CDPSession; authenticatorId: string }> {
  const popup = await browser.openPopup();
  const cdp = await browser.context.newCDPSession(popup);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, hasPrf },
  });
  return { popup, cdp, authenticatorId };
}

/** Signed in and unlocked with the master password, from whatever the popup shows. */
async function withPassword(popup: Page): Promise<void> {
  const shown = await popup.getByRole("heading", { name: /^(Sign in to Vault|Vault is locked|Vault)$/ }).textContent();
  if (shown === "Vault") return;
  if (shown === "Vault is locked") {
    await popup.getByLabel("Master password").fill(SDK_PASSWORD);
    await popup.getByRole("button", { name: "Unlock", exact: true }).click();
    return unlockedIn(popup);
  }
  await popup.getByLabel("Server address").fill(origin());
  await popup.getByLabel("Email").fill(EMAIL);
  await popup.getByLabel("Master password").fill(SDK_PASSWORD);
  await popup.getByRole("button", { name: "Sign in", exact: true }).click();
  await unlockedIn(popup);
}

/** The popup shows the unlocked vault, or the test fails saying what it shows instead. */
async function unlockedIn(popup: Page): Promise<void> {
  await popup
    .getByRole("button", { name: "Lock", exact: true })
    .waitFor()
    .catch(async (err) => {
      throw new Error(`${err}: the popup says ${await popup.locator("main").textContent()}`);
    });
}

async function addPasskey(popup: Page, name: string, said: string): Promise<void> {
  await popup.getByRole("button", { name: "Passkeys" }).click();
  await popup.getByLabel("Name for the passkey").fill(name);
  await popup.getByLabel("Master password (to add a passkey)").fill(SDK_PASSWORD);
  await popup.getByRole("button", { name: "Add a passkey" }).click();
  await popup
    .getByRole("status")
    .filter({ hasText: said })
    .waitFor()
    .catch(async (err) => {
      throw new Error(`${err}: the popup says ${await popup.locator("main").textContent()}`);
    });
  await popup.getByRole("button", { name: "Back" }).click();
}

async function lock(popup: Page): Promise<void> {
  await popup.getByRole("button", { name: "Lock", exact: true }).click();
  await popup.getByRole("heading", { name: "Vault is locked" }).waitFor();
}

async function signOut(popup: Page): Promise<void> {
  await lock(popup);
  await popup.getByRole("button", { name: "Sign out" }).click();
  await popup.getByRole("heading", { name: "Sign in to Vault" }).waitFor();
}

const listed = (popup: Page, name: string) => popup.getByRole("list", { name: "Items" }).getByText(name).waitFor();

/** The inline menu's frame on `tab`, once it is drawn. */
async function menuOf(tab: Page): Promise<Frame> {
  const frame = await eventually("the inline menu", () =>
    tab.frames().find((f) => f.url().startsWith(`chrome-extension://${browser.extensionId}/menu.html`)),
  );
  await frame.locator("nav, section, p").first().waitFor();
  return frame;
}

/** On the bank's login page, the Acme Bank login is offered and fills both fields, as after a password unlock. */
async function fillsTheBankLogin(): Promise<void> {
  const tab = await browser.context.newPage();
  await tab.goto(sites.url(FIXTURE_HOSTS.bankLogin, "/login.html"));
  await tab.locator("#username").click();
  await (await menuOf(tab)).getByRole("button", { name: /Acme Bank/ }).click();
  await eventually("the filled fields", async () =>
    (await tab.locator("#username").inputValue()) === "ada@acme" && (await tab.locator("#password").inputValue()) === "bank-password-1"
      ? true
      : undefined,
  );
  await tab.close();
}

/** What the service worker keeps of the session in `chrome.storage.session` (storage.ts): a password unlock keeps the tokens and the stretched key. */
const keptSession = (): Promise<{ signedIn: boolean; stretchedKey: boolean }> =>
  browser.worker.evaluate(`chrome.storage.session.get("session").then(({ session }) =>
    ({ signedIn: session?.tokens !== undefined, stretchedKey: typeof session?.stretchedKey === "string" }))`);

test("with the PRF: added in the popup, the passkey unlocks the locked extension and signs it in again, with no master password typed", async () => {
  const { popup, cdp, authenticatorId } = await popupWithAuthenticator(true);
  await withPassword(popup);
  await addPasskey(popup, "Laptop", "“Laptop” added: it signs you in and unlocks your vault.");
  const { passkeys } = await ada.accountPasskeys.list();
  expect(passkeys).toEqual([expect.objectContaining({ name: "Laptop", unlock: true })]);
  await popup.getByRole("button", { name: "Passkeys" }).click();
  await popup.getByRole("list", { name: "Passkeys" }).getByText("Unlocks your vault").waitFor();
  expect(await seriousAxeViolations(popup)).toEqual([]);
  await popup.getByRole("button", { name: "Back" }).click();

  await lock(popup);
  expect(await seriousAxeViolations(popup)).toEqual([]);
  expect(await keptSession()).toEqual({ signedIn: true, stretchedKey: false });
  await popup.getByRole("button", { name: "Unlock with a passkey" }).click();
  await unlockedIn(popup);
  expect(await popup.getByLabel("Master password").count()).toBe(0);
  await listed(popup, "Acme Bank");
  expect(await keptSession()).toEqual({ signedIn: true, stretchedKey: true });
  await fillsTheBankLogin();

  await signOut(popup);
  expect(await keptSession()).toEqual({ signedIn: false, stretchedKey: false });
  // The server address is remembered from the last sign-in; no email, no password.
  expect(await popup.getByLabel("Server address").inputValue()).toBe(origin());
  await popup.getByRole("button", { name: "Sign in with a passkey" }).click();
  await unlockedIn(popup);
  await listed(popup, "Acme Bank");
  expect(await keptSession()).toEqual({ signedIn: true, stretchedKey: true });
  await fillsTheBankLogin();

  // The authenticator signed three times with the one passkey it holds: at the check of the PRF after creation (if any), the unlock, the sign-in.
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  expect(credentials).toHaveLength(1);
  expect(credentials[0]!.signCount).toBeGreaterThanOrEqual(2);
  const after = await ada.accountPasskeys.list();
  expect(after.passkeys).toEqual([expect.objectContaining({ name: "Laptop", lastUsedAt: expect.any(String) })]);

  // Removed in the popup, it signs in no more.
  await popup.getByRole("button", { name: "Passkeys" }).click();
  popup.once("dialog", (dialog) => void dialog.accept());
  await popup.getByRole("button", { name: "Remove passkey Laptop" }).click();
  await popup.getByRole("status").filter({ hasText: "“Laptop” removed." }).waitFor();
  await popup.getByRole("list", { name: "Passkeys" }).getByText("None yet.").waitFor();
  await popup.getByRole("button", { name: "Back" }).click();
  await signOut(popup);
  await popup.getByRole("button", { name: "Sign in with a passkey" }).click();
  await popup.getByRole("alert").filter({ hasText: "This passkey does not sign in to an account on this server" }).waitFor();
  await popup.close();
});

test("without the PRF: the passkey signs in and asks the master password, a wrong one is said and tried again", async () => {
  const { popup } = await popupWithAuthenticator(false);
  await withPassword(popup);
  await addPasskey(popup, "Old phone", "“Old phone” added: it signs you in, and your master password unlocks");
  await signOut(popup);

  await popup.getByRole("button", { name: "Sign in with a passkey" }).click();
  await popup.getByRole("heading", { name: "Unlock your vault" }).waitFor();
  await popup.getByText(`Your passkey signed you in as ${EMAIL}.`).waitFor();
  expect(await seriousAxeViolations(popup)).toEqual([]);
  expect(await keptSession()).toEqual({ signedIn: false, stretchedKey: false });
  await popup.getByLabel("Master password").fill("not the password");
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await popup.getByRole("alert").filter({ hasText: "That master password is not right." }).waitFor();
  await popup.getByLabel("Master password").fill(SDK_PASSWORD);
  await popup.getByRole("button", { name: "Unlock", exact: true }).click();
  await unlockedIn(popup);
  await listed(popup, "Acme Bank");
  expect(await keptSession()).toEqual({ signedIn: true, stretchedKey: true });
  await popup.close();
});

/** The extension's isolated world in `tab`'s top frame: where its content scripts run (the DevTools protocol names it after the extension). */
async function contentScriptWorld(tab: Page): Promise<{ cdp: CDPSession; contextId: number }> {
  const cdp = await browser.context.newCDPSession(tab);
  const contexts: Array<{ id: number; origin: string; auxData?: { type?: string; isDefault?: boolean } }> = [];
  cdp.on("Runtime.executionContextCreated", ({ context }) => contexts.push(context));
  await cdp.send("Runtime.enable");
  const world = await eventually("the content script's world", () =>
    contexts.find((c) => c.auxData?.type === "isolated" && c.origin.startsWith(`chrome-extension://${browser.extensionId}`)),
  );
  return { cdp, contextId: world.id };
}

test("a web page cannot start an account passkey ceremony or read anything of one: not through the bridge, not as a content script", async () => {
  // A passkey that unlocks, and the extension locked: what a hostile page would want to use.
  const { popup } = await popupWithAuthenticator(true);
  await withPassword(popup);
  await addPasskey(popup, "Desk", "“Desk” added: it signs you in and unlocks your vault.");
  await lock(popup);

  const tab = await browser.context.newPage();
  await tab.goto(sites.url(FIXTURE_HOSTS.bankLogin, "/login.html"));
  const kinds = [
    { kind: "account-passkey-sign-in" },
    { kind: "account-passkey-sign-in", server: origin() },
    { kind: "account-passkey-answer", id: "x", answer: { error: "no" } },
    { kind: "account-passkey-password", password: SDK_PASSWORD },
    { kind: "account-passkey-cancel" },
    { kind: "account-passkeys" },
    { kind: "account-passkey-add", name: "Thief", password: SDK_PASSWORD },
    { kind: "account-passkey-remove", credentialId: "x" },
  ];

  // The page, through the passkey bridge's channel and plain window messages: the bridge relays only a site's own passkey
  // call (passkey-request), and what comes back is a site passkey's refusal or "use the browser", never a ceremony.
  // (A string: the page's own JavaScript, with the page's globals.)
  const answers = (await tab.evaluate(`(async (requests) => {
    const got = [];
    addEventListener("message", (e) => {
      if (e.data && e.data.to === "page" && e.data.answer !== undefined) got.push(e.data.answer);
    });
    for (const request of requests) {
      postMessage(request, location.origin);
      postMessage({ channel: "vault-extension-passkeys", to: "extension", ...request }, location.origin);
      postMessage({ channel: "vault-extension-passkeys", to: "extension", id: 7, call: request }, location.origin);
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return got;
  })(${JSON.stringify(kinds)})`)) as unknown[];
  for (const answer of answers) {
    expect(answer).toEqual(
      expect.objectContaining(answer && typeof answer === "object" && "use" in answer ? { use: "browser" } : { error: expect.anything() }),
    );
    expect(JSON.stringify(answer)).not.toMatch(/ceremony|challenge|prf|credential/i);
  }

  // As the content script itself (its world driven by the DevTools protocol): every kind refused, nothing started.
  const { cdp, contextId } = await contentScriptWorld(tab);
  for (const request of kinds) {
    const { result } = await cdp.send("Runtime.evaluate", {
      contextId,
      expression: `chrome.runtime.sendMessage(${JSON.stringify(request)})`,
      awaitPromise: true,
      returnByValue: true,
    });
    expect([request.kind, result.value]).toEqual([request.kind, { error: "Not allowed from here.", code: "FORBIDDEN" }]);
  }
  await tab.close();

  // Still locked and still signed in; no passkey was added; the popup's own passkey unlock works as before.
  expect(await keptSession()).toEqual({ signedIn: true, stretchedKey: false });
  expect((await ada.accountPasskeys.list()).passkeys.map((p) => p.name)).not.toContain("Thief");
  await popup.reload();
  await popup.getByRole("button", { name: "Unlock with a passkey" }).click();
  await unlockedIn(popup);
  await popup.close();
});
