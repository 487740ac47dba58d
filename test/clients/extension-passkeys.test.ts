/**
 * The extension as a passkey provider, as Chromium loads it, against the server as `npm start`
 * runs it and a relying party that verifies with @simplewebauthn/server over HTTPS
 * (test/helpers/relying-party.ts): a passkey made on the bank's page is saved into the shared
 * vault and registers there; it signs in, its counter moving on; a second member of the vault signs
 * in with it too; a look-alike site gets no passkey; "Use another way" hands the call to the
 * browser's own authenticator unchanged.
 */
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import type { VaultClient } from "../../sdk";
import { FIXTURE_HOSTS, launchWithExtension, startFixtureSites, type ExtensionBrowser, type FixtureSites } from "../helpers/extension";
import { startShippedServer, type ShippedServer } from "../helpers/process";
import { relyingParty, type RelyingParty } from "../helpers/relying-party";
import { ownerAndAdmin, SDK_PASSWORD } from "../helpers/sdk";
import { eventually } from "../helpers/wait";

jest.setTimeout(180_000);

const EXTENSION = path.resolve(__dirname, "../../dist/extension");

let server: ShippedServer;
let rp: RelyingParty;
let sites: FixtureSites;
let browser: ExtensionBrowser;
let alice: VaultClient;
let carol: VaultClient;
let vaultId: string;

beforeAll(async () => {
  server = await startShippedServer();
  rp = relyingParty();
  sites = await startFixtureSites({ routes: rp.routes });
  ({ alice, carol } = await ownerAndAdmin(server.url));
  vaultId = (await alice.vaults.create("Team", "shared")).vaultId;
  await alice.members.share(vaultId, carol.account.userId, "member");
  browser = await launchWithExtension({ extensionDir: EXTENSION, sites });
  await signIn(alice.account.email);
});

afterAll(async () => {
  await browser?.close();
  await sites?.close();
  await server?.stop();
});

async function signIn(email: string): Promise<void> {
  const popup = await browser.openPopup();
  await popup.getByLabel("Server address").fill(new URL(server.url).origin);
  await popup.getByLabel("Email").fill(email);
  await popup.getByLabel("Master password").fill(SDK_PASSWORD);
  await popup.getByRole("button", { name: "Sign in", exact: true }).click();
  await popup.getByRole("button", { name: "Lock", exact: true }).waitFor();
  await popup.close();
}

/** Locks, then signs out from the lock screen. */
async function signOut(): Promise<void> {
  const popup = await browser.openPopup();
  await popup.getByRole("button", { name: "Lock", exact: true }).click();
  await popup.getByRole("button", { name: "Sign out" }).click();
  await popup.getByLabel("Server address").waitFor();
  await popup.close();
}

const bankPage = () => sites.url(FIXTURE_HOSTS.bankLogin, "/passkeys.html?rp=acme-bank.com");

async function opened(url: string): Promise<Page> {
  const tab = await browser.context.newPage();
  await tab.goto(url);
  return tab;
}

const promptShown = (tab: Page) => tab.frames().some((f) => f.url().startsWith(`chrome-extension://${browser.extensionId}/menu.html`));

/** The passkey prompt's frame on `tab`, once drawn. */
async function promptOf(tab: Page): Promise<Frame> {
  const frame = await eventually("the passkey prompt", () =>
    tab.frames().find((f) => f.url().startsWith(`chrome-extension://${browser.extensionId}/menu.html`)),
  );
  await frame.locator("nav, section").first().waitFor();
  return frame;
}

const result = (tab: Page) => eventually("the page's result", async () => (await tab.locator("#result").textContent()) || undefined);

/** Chromium's own authenticator for this tab (the browser's, not the vault's), through CDP's virtual authenticator. */
async function browserAuthenticator(tab: Page): Promise<void> {
  const cdp = await browser.context.newCDPSession(tab);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

const passkeysInVault = async (client: VaultClient) => (await client.items.list(vaultId)).flatMap((i) => i.passkeys ?? []);

test("a passkey made on the bank's page is saved into the vault chosen and registers at the site; it signs in there, its counter moving on", async () => {
  const tab = await opened(bankPage());
  await tab.getByRole("button", { name: "Create a passkey" }).click();
  const prompt = await promptOf(tab);
  await prompt.getByText("Save a passkey for acme-bank.com as ada@acme?").waitFor();
  expect(await prompt.getByLabel("Vault", { exact: true }).inputValue()).toBe(vaultId);
  await prompt.getByRole("button", { name: "Save passkey" }).click();
  expect(await result(tab)).toMatch(/^registered /);
  expect(rp.verdicts.at(-1)).toEqual({ kind: "register", verified: true });

  const [saved] = await alice.items.list(vaultId);
  expect(saved).toMatchObject({ name: "Acme Bank", fields: { username: "ada@acme" } });
  expect(saved!.urls![0]!.url).toMatch(/^https:\/\/login\.acme-bank\.com:\d+$/);
  expect(saved!.passkeys).toEqual([
    expect.objectContaining({ rpId: "acme-bank.com", rpName: "Acme Bank", userName: "ada@acme", counter: 0, backupEligible: true }),
  ]);
  expect(rp.credentials.has(saved!.passkeys![0]!.credentialId)).toBe(true);

  await tab.getByRole("button", { name: "Sign in with a passkey" }).click();
  const choice = await promptOf(tab);
  await choice.getByRole("navigation", { name: "Vault: sign in to acme-bank.com with a passkey" }).waitFor();
  await choice.getByRole("button", { name: /ada@acme/ }).click();
  expect(await result(tab)).toBe("signed in as ada@acme, counter 1");
  await eventually("the counter is saved on the item", async () => (await passkeysInVault(alice))[0]?.counter === 1);
  await tab.getByRole("button", { name: "Sign in with a passkey" }).click();
  await (await promptOf(tab)).getByRole("button", { name: /ada@acme/ }).click();
  await eventually("signed in again", async () => (await tab.locator("#result").textContent()) === "signed in as ada@acme, counter 2");
  await tab.close();
});

test("a look-alike site gets no passkey: no prompt, and the browser answers as it would without the vault", async () => {
  const typo = await opened(sites.url(FIXTURE_HOSTS.typo, "/passkeys.html"));
  await browserAuthenticator(typo);
  await typo.getByRole("button", { name: "Sign in with a passkey" }).click();
  expect(await result(typo)).toMatch(/^error NotAllowedError/);
  expect(promptShown(typo)).toBe(false);
  // Claiming the bank's relying party from the look-alike: refused as a browser refuses it.
  await typo.goto(sites.url(FIXTURE_HOSTS.typo, "/passkeys.html?rp=acme-bank.com"));
  await typo.getByRole("button", { name: "Sign in with a passkey" }).click();
  expect(await result(typo)).toMatch(/^error SecurityError/);
  expect(promptShown(typo)).toBe(false);
  expect(rp.verdicts.filter((v) => v.kind === "sign-in" && v.verified)).toHaveLength(2);
  await typo.close();
});

test('"Use another way" hands the call to the browser\'s own authenticator, and nothing is saved in the vault', async () => {
  const before = (await passkeysInVault(alice)).length;
  const tab = await opened(bankPage());
  await browserAuthenticator(tab);
  await tab.getByLabel("Account").fill("ada-second@acme");
  await tab.getByRole("button", { name: "Create a passkey" }).click();
  await (await promptOf(tab)).getByRole("button", { name: "Use another way" }).click();
  expect(await result(tab)).toMatch(/^registered /);
  expect((await passkeysInVault(alice)).length).toBe(before);
  await tab.close();
});

test("a second member of the shared vault signs in with the team's passkey, and the counter moves on from hers", async () => {
  await signOut();
  await signIn(carol.account.email);
  const tab = await opened(bankPage());
  await tab.getByRole("button", { name: "Sign in with a passkey" }).click();
  const prompt = await promptOf(tab);
  await prompt.getByRole("button", { name: /ada@acme/ }).click();
  expect(await result(tab)).toBe("signed in as ada@acme, counter 3");
  await eventually("the counter is saved on the item", async () => (await passkeysInVault(carol)).some((p) => p.counter === 3));
  await tab.close();
});
