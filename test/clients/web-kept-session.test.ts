/**
 * The web vault keeps its login across a reload, locked, in Debian's Chromium against the real
 * service: the lock screen after a reload, the master password resuming the same session (no new
 * session, no second step), a wrong password refused, a logout erasing what was kept, a session
 * ended from another device found at the unlock; and "Remember this device" at the second step,
 * forgotten from the Sessions page.
 */
import type { Page } from "playwright-core";
import { SDK_PASSWORD } from "../helpers/sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { webVaultSuite } from "../helpers/web-vault";
import { eventually } from "../helpers/wait";
import type { VaultClient } from "../../sdk";

jest.setTimeout(180_000);

describe("the web vault: a login kept across reloads, and remembered devices", () => {
  const suite = webVaultSuite();
  const { logIn, registered } = suite;
  const page = () => suite.page({ acceptDialogs: true });

  const signedInShell = (p: Page) => p.getByRole("button", { name: "Lock", exact: true }).waitFor();
  const lockScreen = (p: Page) => p.getByRole("heading", { name: "Your vault is locked" }).waitFor();
  const loginForm = (p: Page) => p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
  const kept = (p: Page) => p.evaluate(() => localStorage.getItem("vault.session"));
  const unlockWith = async (p: Page, password: string) => {
    await p.getByLabel("Master password").fill(password);
    await p.getByRole("button", { name: "Unlock", exact: true }).click();
  };
  const sessionIds = async (c: VaultClient) => (await c.sessions.list()).map((s) => s.sessionId).sort();

  test("a reload shows the lock screen; the password resumes the same session; a wrong one is refused; Log out erases what was kept", async () => {
    const ada = await registered();
    const vault = await ada.vaults.create("Kept across reloads");
    await ada.items.add(vault.vaultId, { name: "Bank login", fields: { password: "hunter2" } });
    const p = await page();
    await logIn(p, ada.account.email);
    await signedInShell(p);
    const afterLogin = await sessionIds(ada);

    // What the browser keeps: the account and a sealed blob; no token in the clear.
    const stored = JSON.parse((await kept(p))!) as { account: { email: string }; sealedTokens: string };
    expect(stored.account.email).toBe(ada.account.email);
    // A token in the clear is JWT-shaped (header.payload); random base64 may hold "eyJ" by chance.
    expect(JSON.stringify(stored)).not.toMatch(/refreshToken|accessToken|eyJ[\w-]*\.eyJ/);

    await p.reload();
    await lockScreen(p);
    await p.getByText(`Signed in as ${ada.account.email}`).waitFor();
    await unlockWith(p, "not the master password at all");
    await p.getByRole("alert").filter({ hasText: "That master password is not right." }).waitFor();
    await lockScreen(p);

    await unlockWith(p, SDK_PASSWORD);
    await signedInShell(p);
    // The same session: no new one on the server, and the Sessions page marks it as this device's.
    expect(await sessionIds(ada)).toEqual(afterLogin);
    await p.goto("/#/sessions");
    await p.getByRole("cell", { name: "This device" }).waitFor();
    await expect(p.getByRole("cell", { name: "This device" }).count()).resolves.toBe(1);
    await expect(p.getByRole("row").count()).resolves.toBe(afterLogin.length + 1);
    // And the vault opens with the keys the password unlocked.
    await p.goto("/#/vaults");
    await p.getByText("Kept across reloads").first().waitFor();

    // Lock keeps it; Log out ends the session and erases it.
    await p.getByRole("button", { name: "Lock", exact: true }).click();
    await lockScreen(p);
    expect(await kept(p)).not.toBeNull();
    await unlockWith(p, SDK_PASSWORD);
    await signedInShell(p);
    await p.getByRole("button", { name: "Log out" }).click();
    await loginForm(p);
    expect(await kept(p)).toBeNull();
    await p.reload();
    await loginForm(p);
    await eventually("the browser's session ends on the server", async () => (await sessionIds(ada)).length === afterLogin.length - 1);
  });

  test("a page opened the moment the vault shows stays open: the login lands on its page before the shell shows", async () => {
    const ada = await registered();
    await ada.vaults.create("Landing");
    const p = await page();
    // The login asks for the account's factors before it decides where to land: a slow answer keeps the shell away, not the page.
    await p.route(/\/users\/me\/factors$/, async (route) => {
      await new Promise((r) => setTimeout(r, 1500));
      await route.continue();
    });
    await logIn(p, ada.account.email);
    await signedInShell(p);
    await p.goto("/#/sessions");
    await p.getByRole("cell", { name: "This device" }).waitFor();
    await p.waitForTimeout(2000);
    expect(new URL(p.url()).hash).toBe("#/sessions");
  });

  test("a session ended from another device: the unlock after a reload erases what was kept and says why", async () => {
    const ada = await registered();
    const p = await page();
    await logIn(p, ada.account.email);
    await signedInShell(p);
    expect(await ada.sessions.endOthers()).toBe(1);
    await p.reload();
    await lockScreen(p);
    await unlockWith(p, SDK_PASSWORD);
    await loginForm(p);
    await p.getByRole("status").filter({ hasText: "The session this browser kept has ended" }).waitFor();
    expect(await kept(p)).toBeNull();
    await p.reload();
    await loginForm(p);
  });

  test("a password changed in this browser: the login kept is sealed again, and a reload opens with the new password", async () => {
    const ada = await registered();
    const NEW = "lighthouse keeper 1887 fog";
    const p = await page();
    await logIn(p, ada.account.email);
    await signedInShell(p);
    const before = await kept(p);
    await p.getByRole("link", { name: "Password" }).click();
    await p.getByLabel("Current master password").fill(SDK_PASSWORD);
    await p.getByLabel("New master password", { exact: true }).fill(NEW);
    await p.getByLabel("New master password, again").fill(NEW);
    await p.getByLabel(/^No, nobody else can know it/).check();
    await p.getByRole("button", { name: "Change master password" }).click();
    await p
      .getByRole("status")
      .filter({ hasText: /^Your master password is changed/ })
      .waitFor();
    await eventually("the login kept is sealed again", async () => (await kept(p)) !== before);
    await p.reload();
    await lockScreen(p);
    await unlockWith(p, SDK_PASSWORD);
    await p.getByRole("alert").filter({ hasText: "That master password is not right." }).waitFor();
    await unlockWith(p, NEW);
    await signedInShell(p);
  });

  test("remember this device: the next login skips the code; forgotten on the Sessions page, the code is asked again", async () => {
    const ada = await registered();
    const clock = suite.server.clock;
    const code = (secret: string) => {
      clock.advance(30_000);
      return referenceTotp(fromBase32(secret), clock.nowMs());
    };
    const setup = await ada.factors.setupTotp();
    await ada.factors.confirmTotp(setup.setupToken, code(setup.secret), "Phone", SDK_PASSWORD);
    const p = await page();

    await logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Second step" }).waitFor();
    await p.getByLabel("Remember this device for 30 days").check();
    await p.getByLabel(/Code from your authenticator app/).fill(code(setup.secret));
    await p.getByRole("button", { name: "Continue" }).click();
    await signedInShell(p);
    await p.getByRole("button", { name: "Log out" }).click();
    await loginForm(p);

    await logIn(p, ada.account.email);
    await signedInShell(p);
    await p.goto("/#/sessions");
    await p.getByRole("heading", { name: "Devices that skip the second step" }).waitFor();
    await p.getByRole("button", { name: /^Forget Web vault/ }).click();
    await p.getByText("No device is remembered.").waitFor();
    await p.getByRole("button", { name: "Log out" }).click();
    await loginForm(p);

    await logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Second step" }).waitFor();
  });
});
