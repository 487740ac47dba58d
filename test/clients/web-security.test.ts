/**
 * Second factors and account recovery in the web vault, in Debian's Chromium (playwright-core)
 * against the real service: an authenticator app enrolled and asked for at login with a code
 * computed here, a security key made by Chromium's virtual authenticator (DevTools protocol), and a
 * forgotten password recovered in three browser contexts: the user and two trustees. Pages served
 * from http://localhost (the WebAuthn relying party). axe-core checks each new page.
 */
import { VaultClient } from "../../sdk";
import { SDK_PASSWORD } from "../helpers/sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { webVaultSuite } from "../helpers/web-vault";

jest.setTimeout(180_000);

describe("the web vault: second factors and account recovery", () => {
  const suite = webVaultSuite({ localhost: true });
  const { logIn, registered, accessible } = suite;
  const page = (baseURL?: string) => suite.page({ baseURL, acceptDialogs: true });

  test("an authenticator app: enrolled on the Security page with a code computed here, then asked for at login", async () => {
    const ada = await registered();
    const p = await page();
    await logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await p.getByRole("link", { name: "Security" }).click();
    await p.getByRole("heading", { name: "Second factors" }).waitFor();
    await accessible(p, "security");
    await p.getByLabel(/^Master password \(to add/).fill(SDK_PASSWORD);
    await p.getByLabel("Name for a new factor").fill("Phone");
    await p.getByRole("button", { name: "Add an authenticator app" }).click();
    const secret = (await p.getByTestId("totp-secret").textContent())!;
    await p.getByLabel("Code from the app").fill(referenceTotp(fromBase32(secret), Date.now()));
    await p.getByRole("button", { name: "Enrol the app" }).click();
    await p.getByTestId("recovery-codes").locator("li").nth(9).waitFor();
    await expect(p.getByTestId("recovery-codes").locator("li").count()).resolves.toBe(10);
    await p.getByTestId("factor-list").locator("li", { hasText: "Authenticator app: Phone" }).waitFor();

    await p.getByRole("button", { name: "Log out" }).click();
    // Logged out once the login page shows (a reload before that would find the login still kept).
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    await logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Second step" }).waitFor();
    await accessible(p, "second step");
    await p.getByLabel(/Code from your authenticator app/).fill("000000");
    await p.getByRole("button", { name: "Continue" }).click();
    await p.getByText("That was not right").waitFor();
    await p.getByLabel(/Code from your authenticator app/).fill(referenceTotp(fromBase32(secret), Date.now() + 30_000));
    await p.getByRole("button", { name: "Continue" }).click();
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
  });

  test("a security key from Chromium's virtual authenticator: enrolled, then signing in", async () => {
    const ada = await registered();
    const p = await page();
    const cdp = await p.context().newCDPSession(p);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "usb", hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await p.getByRole("link", { name: "Security" }).click();
    await p.getByLabel(/^Master password \(to add/).fill(SDK_PASSWORD);
    await p.getByLabel("Name for a new factor").fill("YubiKey");
    await p.getByRole("button", { name: "Add a security key or passkey" }).click();
    await p.getByTestId("factor-list").locator("li", { hasText: "Security key: YubiKey" }).waitFor();
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);

    await p.getByRole("button", { name: "Log out" }).click();
    // Logged out once the login page shows (a reload before that would find the login still kept).
    await p.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    await logIn(p, ada.account.email);
    await p.getByRole("button", { name: "Use your security key or passkey" }).click();
    await p
      .getByRole("heading", { name: "Your vaults" })
      .waitFor()
      .catch(async (err) => {
        throw new Error(`${err}: the page says ${await p.locator("main").textContent()}`);
      });
    const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(after.credentials[0]!.signCount).toBeGreaterThan(credentials[0]!.signCount);
  });

  test("opened at 127.0.0.1, where browsers refuse security keys: the login and the Security page name http://localhost:PORT/ instead", async () => {
    const ada = await registered();
    const local = `${suite.origin}/`;
    const named = `Security keys and passkeys work at ${local}, not at 127.0.0.1`;
    // Enrolled where keys work (http://localhost, the address the start-up line names): no such note there.
    const there = await page();
    const cdp = await there.context().newCDPSession(there);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "usb", hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await logIn(there, ada.account.email);
    await there.getByRole("link", { name: "Security" }).click();
    await there.getByLabel(/^Master password \(to add/).fill(SDK_PASSWORD);
    await there.getByLabel("Name for a new factor").fill("YubiKey");
    await there.getByRole("button", { name: "Add a security key or passkey" }).click();
    await there.getByTestId("factor-list").locator("li", { hasText: "Security key: YubiKey" }).waitFor();
    expect(await there.getByTestId("security-key-address").count()).toBe(0);
    const recoveryCode = (await there.getByTestId("recovery-codes").locator("li").first().textContent())!.trim();

    // The same web vault opened at the address the server listens on: the second step says where the key works.
    const p = await page(new URL(suite.server.url).origin);
    await logIn(p, ada.account.email);
    await p.getByText(named).waitFor();
    await p.getByRole("button", { name: "Use your security key or passkey" }).click();
    await p.getByRole("alert").filter({ hasText: named }).waitFor();
    await p.getByLabel("A recovery code").fill(recoveryCode);
    await p.getByRole("button", { name: "Continue" }).click();
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    // The Security page says it before a key is tried, and trying one says it again (not the browser's "invalid domain").
    await p.getByRole("link", { name: "Security" }).click();
    await expect(p.getByTestId("security-key-address").textContent()).resolves.toContain(named);
    await p.getByLabel(/^Master password \(to add/).fill(SDK_PASSWORD);
    await p.getByLabel("Name for a new factor").fill("Another key");
    await p.getByRole("button", { name: "Add a security key or passkey" }).click();
    await p.getByRole("alert").filter({ hasText: named }).waitFor();
    await accessible(p, "security at an IP address");
  });

  test("a member who uses only the web vault compares two trustees' fingerprints there, marks them checked, and enrols in recovery", async () => {
    const ada = await registered();
    const carol = await registered("admin", ada);
    const bob = await registered("member", ada);
    const p = await page();
    await logIn(p, bob.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await p.getByRole("link", { name: "Security" }).click();
    const compare = p.getByRole("group", { name: "Compare fingerprints" });
    await compare.waitFor();
    // Not checked yet: enrolling names them, and nothing is enrolled.
    await p.getByLabel(`${ada.account.email} (not verified: compare fingerprints first)`).check();
    await p.getByLabel(`${carol.account.email} (not verified: compare fingerprints first)`).check();
    await p.getByRole("button", { name: "Enrol in account recovery" }).click();
    await p.getByRole("alert").filter({ hasText: "Compare fingerprints with them" }).waitFor();
    expect(await bob.recovery.status()).toBeNull();
    // A fingerprint that is not the one read out (here: another person's) pins nothing.
    await p.getByLabel(`Fingerprint ${carol.account.email} reads to you`).fill(await ada.keys.own());
    await p.getByRole("button", { name: `Mark ${carol.account.email} as checked` }).click();
    await p.getByRole("alert").filter({ hasText: "is not the fingerprint the server shows" }).waitFor();
    // Typed as read out: with spaces anywhere, in capitals.
    for (const trustee of [ada, carol]) {
      const read = (await trustee.keys.own()).replace(/\s+/g, "").toUpperCase();
      await p.getByLabel(`Fingerprint ${trustee.account.email} reads to you`).fill(read);
      await p.getByRole("button", { name: `Mark ${trustee.account.email} as checked` }).click();
      await p.getByText(`${trustee.account.email} (verified)`).waitFor();
    }
    expect(await compare.count()).toBe(0);
    await p.getByLabel(`${ada.account.email} (verified)`).check();
    await p.getByLabel(`${carol.account.email} (verified)`).check();
    await p.getByRole("button", { name: "Enrol in account recovery" }).click();
    await p
      .getByTestId("recovery-status")
      .filter({ hasText: /Enrolled: any 2 of/ })
      .waitFor();
    await accessible(p, "security with recovery");
    expect(await bob.recovery.status()).toMatchObject({ threshold: 2 });
  });

  test("a forgotten password, recovered in three browsers: the user reads the code to two trustees, who approve; then a new password", async () => {
    const ada = await registered();
    const carol = await registered("admin", ada);
    const bob = await registered("member", ada);
    await bob.keys.trust(carol.account.userId, await carol.keys.own(), carol.account.email);
    await bob.recovery.enrol([ada.account.userId, carol.account.userId], 2);

    const bobPage = await page();
    await bobPage.goto("/");
    await bobPage.getByRole("link", { name: "Recover your account with your trustees" }).click();
    await bobPage.getByLabel("Your email").fill(bob.account.email);
    await accessible(bobPage, "recover");
    await bobPage.getByRole("button", { name: "Ask my trustees" }).click();
    const code = (await bobPage.getByTestId("recover-code").textContent())!.trim();
    expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);

    let confirmation = "";
    for (const trustee of [ada, carol]) {
      const t = await page();
      await logIn(t, trustee.account.email);
      await t.getByRole("heading", { name: "Your vaults" }).waitFor();
      await t.getByRole("link", { name: "Security" }).click();
      const task = t.getByTestId("recovery-task");
      await task.waitFor();
      await expect(task.textContent()).resolves.toContain(bob.account.email);
      if (trustee === ada) {
        // A code that is not the device's: refused, nothing approved.
        await t.getByLabel("The code they read out").fill("0000-0000-0000-0000");
        await t.getByRole("button", { name: "Approve" }).click();
        await expect(t.getByRole("alert").first().textContent()).resolves.toMatch(/code is not the one/);
      }
      await t.getByLabel("The code they read out").fill(code);
      await t.getByRole("button", { name: "Approve" }).click();
      await t.getByText(/You approved .* recovery/).waitFor();
      confirmation = (await t.getByTestId("recovery-confirmation").textContent())!.match(
        /[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}/,
      )![0];
    }

    await bobPage.getByRole("button", { name: "Check approvals" }).click();
    await expect(bobPage.getByTestId("recover-progress").textContent()).resolves.toMatch(/2 of 2 approvals/);
    await bobPage.getByLabel("The code a trustee read back to you").fill(confirmation);
    await bobPage.getByLabel("New master password", { exact: true }).fill("a fresh horse battery staple");
    await bobPage.getByLabel("New master password, again").fill("a fresh horse battery staple");
    await bobPage.getByRole("button", { name: "Recover my account" }).click();
    // Rebuilding the keys, a new password and new RSA keys (made in the browser) take a few seconds.
    await bobPage
      .getByRole("heading", { name: "Security" })
      .waitFor({ timeout: 60_000 })
      .catch(async (err) => {
        throw new Error(`${err}: the page says ${await bobPage.locator("main").textContent()}`);
      });
    await expect(bobPage.getByTestId("recovery-status").textContent()).resolves.toMatch(/not enrolled/);
    // The new password opens the account anywhere; the old one no longer does.
    const check = new VaultClient({ baseUrl: suite.server.url });
    await check.login(bob.account.email, "a fresh horse battery staple");
    await expect(new VaultClient({ baseUrl: suite.server.url }).login(bob.account.email, SDK_PASSWORD)).rejects.toBeTruthy();
  });
});
