/**
 * Passkeys that sign in to the account, and with the WebAuthn PRF extension unlock it, in the web
 * vault: Debian's Chromium with its virtual authenticator (DevTools protocol, with and without the
 * PRF) against the real service, at http://localhost (the relying party). A passkey registered on
 * the Security page signs in and opens the vault with no master password typed, before and after a
 * password change and a key rotation made on their pages; a change made because the old password
 * may be known removes it. One without the PRF signs in and asks the master password of the account
 * it named; a prompt that finds no passkey, or a removed one, is said in words. A server that
 * withholds what a passkey unlocks with (its answer rewritten in the browser) gets no password
 * prompt. The organization's policy form forbids them, and the Security page then offers none.
 * axe-core checks the Security section and the passkey's password prompt.
 */
import type { Page } from "playwright-core";
import { SDK_PASSWORD } from "../helpers/sdk";
import { webVaultSuite } from "../helpers/web-vault";
import { VaultClient } from "../../sdk";

jest.setTimeout(300_000);

const NEW_PASSWORD = "a brand new and long passphrase 7";
const NEWER_PASSWORD = "another quite different passphrase 9";

describe("the web vault: passkeys that sign in and unlock", () => {
  const suite = webVaultSuite({ localhost: true });
  const { logIn, registered, accessible } = suite;
  const page = () => suite.page({ acceptDialogs: true });

  /** Chromium's virtual authenticator on this page: a platform authenticator keeping passkeys, verifying its user, with or without the PRF. */
  async function virtualAuthenticator(p: Page, hasPrf: boolean): Promise<void> {
    const cdp = await p.context().newCDPSession(p);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, hasPrf },
    });
  }

  /** Ada, owner of a new organization, with a personal vault holding one secret written through the SDK. */
  async function adaWithSecret() {
    const ada = await registered();
    const vault = await ada.vaults.create("Private", "personal");
    const item = await ada.items.add(vault.vaultId, { name: "Router", fields: { password: "hunter2" } });
    return { ada, vaultId: vault.vaultId, itemId: item.itemId };
  }

  /** Waits for `name`, or fails saying what the page shows instead. */
  async function shows(p: Page, name: string | RegExp): Promise<void> {
    await p
      .getByRole("heading", { name })
      .first()
      .waitFor()
      .catch(async (err) => {
        throw new Error(`${err}: the page says ${await p.locator("main").textContent()}`);
      });
  }

  async function addPasskey(p: Page, name: string, password = SDK_PASSWORD): Promise<void> {
    await p.getByRole("link", { name: "Security" }).click();
    await p.getByRole("heading", { name: "Passkeys for signing in" }).waitFor();
    await p.getByLabel("Name for the passkey").fill(name);
    await p.getByLabel("Master password (to register a passkey)").fill(password);
    await p.getByRole("button", { name: "Add a passkey" }).click();
    await p
      .getByRole("status")
      .filter({ hasText: `“${name}” added` })
      .waitFor()
      .catch(async (err) => {
        throw new Error(`${err}: the section says ${await p.getByRole("region", { name: "Passkeys for signing in" }).textContent()}`);
      });
  }

  const passkeyRow = (p: Page, name: string) => p.getByTestId("passkey-list").locator("li", { hasText: name });

  async function logOut(p: Page): Promise<void> {
    await p.getByRole("button", { name: "Log out" }).click();
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
  }

  /** The login page's passkey button; answers which page the sign-in led to: the vault list, or the master password prompt. */
  async function signInWithPasskey(p: Page): Promise<"vaults" | "password prompt"> {
    await p.getByRole("button", { name: "Sign in with a passkey" }).click();
    await shows(p, /^(Your vaults|Unlock your vault)$/);
    return (await p.getByRole("heading", { name: "Your vaults" }).count()) > 0 ? "vaults" : "password prompt";
  }

  /** The secret written before, read in this page (moved by its address, not reloaded: a reload locks). */
  async function readsSecret(p: Page, vaultId: string, itemId: string): Promise<void> {
    await p.evaluate(`location.hash = "#/vault/${vaultId}/${itemId}"`);
    const detail = p.getByRole("region", { name: "Item Router" });
    await detail.getByRole("button", { name: "Reveal password" }).click();
    await detail.getByTestId("password").getByText("hunter2").waitFor();
    await p.evaluate(`location.hash = "#/vaults"`);
  }

  /** Locks on an item's page, and opens the lock screen with the passkey: back on that page, the secret readable, no password typed. */
  async function readsSecretAfterUnlock(p: Page, vaultId: string, itemId: string): Promise<void> {
    await p.evaluate(`location.hash = "#/vault/${vaultId}/${itemId}"`);
    await p.getByRole("region", { name: "Item Router" }).waitFor();
    await p.getByRole("button", { name: "Lock", exact: true }).click();
    await shows(p, "Your vault is locked");
    await accessible(p, "the lock screen with its passkey button");
    await p.getByRole("button", { name: "Unlock with a passkey" }).click();
    const detail = p.getByRole("region", { name: "Item Router" });
    await detail.getByRole("button", { name: "Reveal password" }).click();
    await detail.getByTestId("password").getByText("hunter2").waitFor();
    expect(await p.evaluate("location.hash")).toBe(`#/vault/${vaultId}/${itemId}`);
    await p.evaluate(`location.hash = "#/vaults"`);
  }

  async function changePassword(p: Page, current: string, next: string, oldMayBeKnown: boolean): Promise<void> {
    await p.getByRole("link", { name: "Password", exact: true }).click();
    await p.getByLabel("Current master password").fill(current);
    await p.getByLabel("New master password", { exact: true }).fill(next);
    await p.getByLabel("New master password, again").fill(next);
    await p.getByLabel(oldMayBeKnown ? /^Yes, or I am not sure/ : /^No, nobody else can know it/).check();
    await p.getByRole("button", { name: "Change master password" }).click();
    await p.getByRole("status").filter({ hasText: "Your master password is changed" }).waitFor({ timeout: 90_000 });
  }

  test("with the PRF: registered on the Security page, it opens the vault with no master password, after a password change and a key rotation too", async () => {
    const { ada, vaultId, itemId } = await adaWithSecret();
    const p = await page();
    await virtualAuthenticator(p, true);
    await logIn(p, ada.account.email);
    await shows(p, "Your vaults");
    await addPasskey(p, "Laptop");
    await passkeyRow(p, "Laptop").filter({ hasText: "Unlocks your vault" }).waitFor();
    await accessible(p, "security with a passkey that unlocks");

    await logOut(p);
    expect(await signInWithPasskey(p)).toBe("vaults");
    await readsSecret(p, vaultId, itemId);
    // The login is kept as a password login's is, sealed under the key the passkey opened: after a reload the password resumes it.
    await p.reload();
    await shows(p, "Your vault is locked");
    await p.getByLabel("Master password").fill(SDK_PASSWORD);
    await p.getByRole("button", { name: "Unlock", exact: true }).click();
    await shows(p, "Your vaults");
    // Locked, the passkey opens the lock screen in place of the password, on the page left: a new login takes the locked one's place.
    const sessionsBefore = (await ada.sessions.list()).length;
    await readsSecretAfterUnlock(p, vaultId, itemId);
    expect(await ada.sessions.list()).toHaveLength(sessionsBefore);
    // After a reload too (the kept login's lock screen).
    await p.reload();
    await shows(p, "Your vault is locked");
    await p.getByRole("button", { name: "Unlock with a passkey" }).click();
    await shows(p, "Your vaults");

    await changePassword(p, SDK_PASSWORD, NEW_PASSWORD, false);
    await logOut(p);
    expect(await signInWithPasskey(p)).toBe("vaults");
    await readsSecret(p, vaultId, itemId);

    await p.getByRole("link", { name: "Your key" }).click();
    await p.getByRole("button", { name: "Rotate my keys" }).click();
    await p.getByRole("status").filter({ hasText: "Your keys are rotated" }).waitFor({ timeout: 90_000 });
    await logOut(p);
    expect(await signInWithPasskey(p)).toBe("vaults");
    await readsSecret(p, vaultId, itemId);
    const { passkeys } = await signedInClient(ada.account.email, NEW_PASSWORD).then((c) => c.accountPasskeys.list());
    expect(passkeys).toEqual([expect.objectContaining({ name: "Laptop", unlock: true, lastUsedAt: expect.any(String) })]);

    // A change made because the old password may be known removes it: it signs in no more, and says so.
    await changePassword(p, NEW_PASSWORD, NEWER_PASSWORD, true);
    await p.getByRole("link", { name: "Security" }).click();
    await p.getByTestId("passkey-list").getByText("None yet.").waitFor();
    await logOut(p);
    await p.getByRole("button", { name: "Sign in with a passkey" }).click();
    await p.getByRole("alert").filter({ hasText: "This passkey does not sign in to an account here" }).waitFor();
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
  });

  test("without the PRF: it signs in and asks the master password of that account; a wrong one is said and tried again; Remove ends it", async () => {
    const { ada, vaultId, itemId } = await adaWithSecret();
    const p = await page();
    await virtualAuthenticator(p, false);
    // None registered yet: the browser finds no passkey for this site, and the page says so in words.
    await p.goto("/");
    await p.getByRole("button", { name: "Sign in with a passkey" }).click();
    await p.getByRole("alert").filter({ hasText: "No passkey was used" }).waitFor();
    await p.getByLabel("Email").fill(ada.account.email);
    await p.getByLabel("Master password").fill(SDK_PASSWORD);
    await p.getByRole("button", { name: "Log in" }).click();
    await shows(p, "Your vaults");
    await addPasskey(p, "Old key");
    await passkeyRow(p, "Old key").filter({ hasText: "Signs in; your master password unlocks" }).waitFor();

    await logOut(p);
    expect(await signInWithPasskey(p)).toBe("password prompt");
    await p.getByText(`Your passkey signed you in as ${ada.account.email}. Enter your master password to unlock.`).waitFor();
    await accessible(p, "passkey sign-in asking the master password");
    await p.getByLabel("Master password").fill("not the master password at all");
    await p.getByRole("button", { name: "Unlock", exact: true }).click();
    await p.getByRole("alert").filter({ hasText: "That master password is not right." }).waitFor();
    await p.getByLabel("Master password").fill(SDK_PASSWORD);
    await p.getByRole("button", { name: "Unlock", exact: true }).click();
    await shows(p, "Your vaults");
    await readsSecret(p, vaultId, itemId);

    await p.getByRole("link", { name: "Security" }).click();
    await passkeyRow(p, "Old key").getByRole("button", { name: "Remove" }).click();
    await p.getByTestId("passkey-list").getByText("None yet.").waitFor();
    expect((await ada.accountPasskeys.list()).passkeys).toEqual([]);
    await logOut(p);
    await p.getByRole("button", { name: "Sign in with a passkey" }).click();
    await p.getByRole("alert").filter({ hasText: "This passkey does not sign in to an account here" }).waitFor();
  });

  test("a server that withholds what the passkey unlocks with: the sentence, no password prompt, and still signed out", async () => {
    const ada = await registered();
    const p = await page();
    await virtualAuthenticator(p, true);
    await logIn(p, ada.account.email);
    await shows(p, "Your vaults");
    await addPasskey(p, "Laptop");
    await logOut(p);
    // The sign-in's answer, as a dishonest server would give it: the passkey's unlock left out, as if it kept none.
    await p.route("**/api/v1/auth/passkey", async (route) => {
      const answer = await route.fetch();
      const body = (await answer.json()) as { passkey?: { unlock?: unknown } };
      delete body.passkey?.unlock;
      await route.fulfill({ response: answer, json: body });
    });
    await p.getByRole("button", { name: "Sign in with a passkey" }).click();
    await p.getByRole("alert").filter({ hasText: "the server answered without what it unlocks with" }).waitFor();
    expect(await p.getByRole("heading", { name: "Unlock your vault" }).count()).toBe(0);
    expect(await p.getByLabel("Master password").count()).toBe(1);
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    expect(await p.evaluate(() => localStorage.getItem("vault.session"))).toBeNull();
  });

  test("the policy form forbids passkeys: the Security page offers none and says why; required, it says so, and members read it", async () => {
    const ada = await registered();
    const p = await page();
    await logIn(p, ada.account.email);
    await shows(p, "Your vaults");
    await p.getByRole("link", { name: "Security" }).click();
    // Allowed by default: the form to add one is there.
    await p.getByRole("button", { name: "Add a passkey" }).waitFor();
    await p.getByLabel("Signing in with a passkey").selectOption("forbidden");
    await p.getByRole("button", { name: "Save policies" }).click();
    await p.getByRole("status").filter({ hasText: "Policies saved." }).waitFor();
    expect((await ada.factors.policies()).passkeySignIn).toBe("forbidden");

    const again = async () => {
      await p.getByRole("link", { name: "Sessions" }).click();
      await p.getByRole("heading", { name: "Where you are signed in" }).waitFor();
      await p.getByRole("link", { name: "Security" }).click();
      await p.getByRole("heading", { name: "Passkeys for signing in" }).waitFor();
    };
    await again();
    await p.getByTestId("passkey-policy").filter({ hasText: "Your organization does not allow signing in with a passkey" }).waitFor();
    expect(await p.getByRole("button", { name: "Add a passkey" }).count()).toBe(0);
    expect(await p.getByLabel("Name for the passkey").count()).toBe(0);
    expect(await p.getByLabel("Signing in with a passkey").inputValue()).toBe("forbidden");
    await accessible(p, "security with passkeys forbidden");

    const { enforced: _enforced, clientOnly: _clientOnly, ...stored } = await ada.factors.policies();
    await ada.factors.setPolicies({ ...stored, passkeySignIn: "required" });
    await again();
    await p.getByTestId("passkey-policy").filter({ hasText: "Your organization requires signing in with a passkey" }).waitFor();
    await p.getByRole("button", { name: "Add a passkey" }).waitFor();

    // A member reads it in the policies table, as enforced by the server.
    const bob = await registered("member", ada);
    const b = await page();
    await logIn(b, bob.account.email);
    await shows(b, "Your vaults");
    await b.getByRole("link", { name: "Security" }).click();
    const row = b.getByRole("row", { name: /Signing in with a passkey/ });
    await row.waitFor();
    expect(await row.locator("td").allInnerTexts()).toEqual(["Required of members who have one", "Enforced by the server"]);
    await b.getByTestId("passkey-policy").filter({ hasText: "Your organization requires signing in with a passkey" }).waitFor();
  });

  /** An SDK client logged in to the account with `password` (to read what the server keeps). */
  async function signedInClient(email: string, password: string): Promise<VaultClient> {
    const c = new VaultClient({ baseUrl: suite.server.url });
    await c.login(email, password);
    return c;
  }
});
