/**
 * The web vault in a real browser (Debian's Chromium through playwright-core) against the real
 * service, which serves it: two browser contexts, an owner and an invitee, walk the whole story,
 * then the adverse cases. axe-core checks every page; the README's screenshots are taken here.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { VaultClient } from "../../sdk";
import { checkApiAnswers, launchChromium, SCREENSHOTS, seriousAxeViolations, vaultTab } from "../helpers/browser";
import { describePagesOnFailure } from "../helpers/page-failures";
import { plainShare, unsignedVault } from "../helpers/sdk";
import { fromBase32, referenceTotp } from "../helpers/totp";
import { startTestServer, type TestServer } from "../helpers/server";
import { keepassFile } from "../helpers/keepass";
import { readImport } from "../../sdk/transfer";

jest.setTimeout(120_000);

const ADA = { email: "ada@example.test", password: "correct horse battery staple" };
const BOB = { email: "bob@example.test", password: "bob's long master password" };

describe("the web vault", () => {
  let server: TestServer;
  let origin: string;
  let browser: Browser;
  let adaContext: BrowserContext, bobContext: BrowserContext;
  let ada: Page, bob: Page;
  const cspViolations: string[] = [];
  const bobRequests: string[] = [];
  let bobUserId: string;
  // Every API answer the pages receive is checked against the OpenAPI document, before each test ends.
  const answersChecked: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const settled of answersChecked) await settled();
  });

  async function accessible(page: Page, name: string): Promise<void> {
    expect({ page: name, violations: await seriousAxeViolations(page) }).toEqual({ page: name, violations: [] });
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

  // After a failed test, what every page opened so far showed (a closed one is left out).
  const opened: Record<string, Page> = {};
  describePagesOnFailure(() => opened);

  async function newPage(context: BrowserContext, name: string): Promise<Page> {
    const page = await context.newPage();
    opened[name] = page;
    answersChecked.push(checkApiAnswers(page));
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    page.on("dialog", (d) => void d.accept());
    return page;
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.resolve(__dirname, "../../dist/web/index.html")))
      throw new Error("the web vault is not built: run npm run build");
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startTestServer();
    origin = new URL(server.url).origin;
    browser = await launchChromium();
    adaContext = await browser.newContext({ baseURL: origin, viewport: { width: 1100, height: 800 } });
    await adaContext.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    bobContext = await browser.newContext({ baseURL: origin, viewport: { width: 1100, height: 800 } });
    for (const context of [adaContext, bobContext]) context.setDefaultTimeout(15_000);
    ada = await newPage(adaContext, "ada");
    bob = await newPage(bobContext, "bob");
    bob.on("request", (r) => bobRequests.push(r.url()));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop().catch(() => undefined);
  });

  test("the page is served with a strict CSP; a wrong password reads as a sentence; the first user registers", async () => {
    const res = await adaContext.request.get("/");
    const csp = res.headers()["content-security-policy"]!;
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers()["cache-control"]).toBe("no-store");
    expect((await adaContext.request.get("/api/v1/health")).status()).toBe(200);

    await ada.goto("/");
    await ada.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    // An empty server: its first page leads with making the first account, above the login.
    const first = ada.getByRole("heading", { name: "This server has no accounts yet" });
    await first.waitFor();
    expect((await first.boundingBox())!.y).toBeLessThan(
      (await ada.getByRole("heading", { name: "Log in to your vault" }).boundingBox())!.y,
    );
    await accessible(ada, "login");
    await shot(ada, "login");
    await ada.getByLabel("Email").fill(ADA.email);
    await ada.getByLabel("Master password").fill("not the password");
    // The KDF runs in a Web Worker: the page keeps answering while it works.
    const worker = ada.waitForEvent("worker");
    await ada.getByRole("button", { name: "Log in" }).click();
    expect((await worker).url()).toMatch(new RegExp(`^${origin}/assets/kdf\\.worker-[\\w-]+\\.js$`));
    await expect(ada.getByRole("alert").textContent()).resolves.toMatch(/Your email or password is not right/);

    await ada.getByRole("link", { name: "Create the first account" }).click();
    // Filled once the registration form is there: a field of the login page, about to go, would take the text instead.
    await ada.getByRole("heading", { name: "Create the first account" }).waitFor();
    await ada.getByLabel("Email").fill(ADA.email);
    await ada.getByLabel("Organization name").fill("Acme");
    await ada.getByLabel("Master password", { exact: true }).fill("acme2026");
    await ada.getByLabel("Master password, again").fill("acme2026");
    await ada.getByRole("button", { name: "Create account" }).click();
    await expect(ada.getByRole("alert").textContent()).resolves.toMatch(
      /^That master password is too weak. It has 8 characters; a master password needs at least 12. .*It is too easy to guess/,
    );
    await ada.getByLabel("Master password", { exact: true }).fill(ADA.password);
    await ada.getByLabel("Master password, again").fill("a different password");
    await ada.getByRole("button", { name: "Create account" }).click();
    await expect(ada.getByRole("alert").textContent()).resolves.toBe(
      "The two passwords are not the same: type the same master password twice.",
    );
    await ada.getByLabel("Master password, again").fill(ADA.password);
    await accessible(ada, "register");
    await ada.getByRole("button", { name: "Create account" }).click();
    await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
    // No longer empty: another browser's first page is the login alone.
    const later = await browser.newPage({ baseURL: origin });
    await later.goto("/");
    await later.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    await later.waitForLoadState("networkidle");
    expect(await later.getByRole("heading", { name: "This server has no accounts yet" }).count()).toBe(0);
    await later.close();
    await accessible(ada, "vaults (empty)");
  });

  test("an invite link, shown once, opens registration with the organization and role it gives", async () => {
    await ada.getByRole("link", { name: "Invites" }).click();
    await ada.getByLabel("Their email").fill(BOB.email);
    await ada.getByRole("button", { name: "Create invite" }).click();
    const link = (await ada.getByTestId("invite-link").textContent())!;
    // The token, the binding secret and ada's key fingerprint, in the fragment.
    expect(link).toMatch(new RegExp(`^${origin}/#/invite/[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{22}$`));
    await ada.getByRole("cell", { name: BOB.email, exact: true }).waitFor();
    await accessible(ada, "invites");
    await shot(ada, "invites");

    await bob.goto(link);
    await bob.getByRole("heading", { name: "Accept your invitation" }).waitFor();
    expect(await bob.locator("main").textContent()).toMatch(
      /You are invited to Acme \(organization [0-9a-f-]{36}\) as member, for bob@example\.test/,
    );
    expect(await bob.getByLabel("Email").inputValue()).toBe(BOB.email);
    await accessible(bob, "invite registration");
    await shot(bob, "invite");
    await bob.getByLabel("Master password", { exact: true }).fill(BOB.password);
    await bob.getByLabel("Master password, again").fill(BOB.password);
    await bob.getByRole("button", { name: "Create account" }).click();
    await bob.getByRole("heading", { name: "Your vaults" }).waitFor();
    // The token lived in the fragment: no request line the browser sent carries it.
    const token = decodeURIComponent(link.split("/invite/")[1]!);
    expect(bobRequests.filter((u) => u.includes(token) || u.includes(encodeURIComponent(token)))).toEqual([]);
    expect(bobRequests.length).toBeGreaterThan(3);
  });

  test("a shared vault with items: a generated password, revealed on demand, copied and cleared from the clipboard", async () => {
    await ada.evaluate(`localStorage.setItem("vault.clipboardClearSeconds", "1")`);
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
    await ada.getByLabel("Name", { exact: true }).fill("Team");
    await ada.getByRole("button", { name: "Create vault" }).click();
    await ada.getByRole("heading", { name: "Team" }).waitFor();

    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Name", { exact: true }).fill("GitHub");
    await ada.getByLabel("Username").fill("ada");
    await ada.getByRole("button", { name: "Generate a password" }).click();
    const generated = await ada.getByLabel("Password", { exact: true }).inputValue();
    expect(generated).toHaveLength(24);
    await ada.getByRole("button", { name: "Save item" }).click();
    await ada.getByRole("region", { name: "Item GitHub" }).waitFor();
    expect(await ada.getByTestId("password").textContent()).not.toContain(generated);
    await ada.getByRole("button", { name: "Reveal" }).click();
    expect(await ada.getByTestId("password").textContent()).toBe(generated);

    await ada.getByRole("button", { name: "Copy password" }).click();
    await ada.getByText("Copied. The clipboard will be cleared in 1 seconds.").waitFor();
    expect(await ada.evaluate(`navigator.clipboard.readText()`)).toBe(generated);
    await ada.getByText("The clipboard was cleared.").waitFor();
    expect(await ada.evaluate(`navigator.clipboard.readText()`)).toBe("");

    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Name", { exact: true }).fill("Wifi");
    await ada.getByLabel("Password", { exact: true }).fill("hunter2");
    await ada.getByRole("button", { name: "Save item" }).click();
    await ada.getByRole("region", { name: "Item Wifi" }).waitFor();
    await ada.getByRole("button", { name: "Edit" }).click();
    await ada.getByLabel("Password", { exact: true }).fill("rotated");
    await ada.getByRole("button", { name: "Save item" }).click();
    await ada.getByText("Revision 2").waitFor();
  });

  test("sharing shows the member's key fingerprint, vouched for by the invite ada sent, and the member opens the items", async () => {
    await vaultTab(ada, "Members");
    await ada.getByLabel("Person").selectOption({ label: BOB.email });
    const fingerprint = ada.getByTestId("fingerprint");
    await fingerprint.waitFor();
    // Bob registered through ada's link: the MAC of his key statement under the link's secret vouches for his keys.
    expect(await fingerprint.textContent()).toMatch(/Vouched for by the invite link you sent bob@example\.test: nothing to compare/);
    const shown = (await fingerprint.locator("code").nth(1).textContent())!;
    expect(shown).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){15}$/);
    // Bob sees the same fingerprint on his own page.
    await bob.getByRole("link", { name: "Your key" }).click();
    await bob.getByTestId("own-fingerprint").getByText(shown, { exact: true }).waitFor();
    await accessible(bob, "your key");
    await ada.getByRole("button", { name: "Share", exact: true }).click();
    await ada.getByRole("cell", { name: BOB.email, exact: true }).waitFor();
    const pins = JSON.parse(await ada.evaluate<string>(`localStorage.getItem("vault.pins")`));
    bobUserId = Object.keys(pins).find((id) => pins[id].fingerprint === shown)!;
    expect(pins[bobUserId]).toEqual({ fingerprint: shown, email: BOB.email, via: "invite", stated: true });
    await vaultTab(ada, "Member history");
    await ada.getByText(`added ${BOB.email} as member`).waitFor();
    await accessible(ada, "vault");
    await shot(ada, "vault");

    await bob.getByRole("link", { name: "Vaults", exact: true }).click();
    await bob.reload();
    // The login kept across the reload, locked: left, for a login of its own.
    await bob.getByRole("button", { name: "Log out" }).click();
    await bob.getByRole("heading", { name: "Log in to your vault" }).waitFor();
    await bob.getByLabel("Email").fill(BOB.email);
    await bob.getByLabel("Master password").fill(BOB.password);
    await bob.getByRole("button", { name: "Log in" }).click();
    await bob.getByRole("main").getByRole("link", { name: "Team" }).click();
    await bob.getByRole("button", { name: "Wifi" }).click();
    await bob.getByRole("button", { name: "Reveal" }).click();
    expect(await bob.getByTestId("password").textContent()).toBe("rotated");
    await accessible(bob, "vault (member)");
  });

  test("removal, then the rekey at once with its progress; the removed member is locked out", async () => {
    // Every progress line the page shows, as it shows it.
    // (Page code as text: this file is type-checked without the DOM library.)
    await ada.evaluate(`{
      const seen = (window.__progress = []);
      new MutationObserver(() => {
        const label = document.querySelector("label[for=rekey-progress]")?.textContent;
        if (label && seen.at(-1) !== label) seen.push(label);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }`);
    // The remover's page rekeys right after the removal, without being asked.
    await vaultTab(ada, "Members");
    await ada.getByRole("button", { name: `Remove ${BOB.email}` }).click();
    await ada.getByText("Rekeyed: key version 2, 2 items re-encrypted, wrapped for 1 members.").waitFor();
    const progress = await ada.evaluate<string[]>(`window.__progress`);
    // The phases in order, each with its total (updates within one frame are drawn once).
    const phases = progress.map((line) => line.replace(/: \d+ of (\d+)$/, " of $1")).filter((p, i, all) => all[i - 1] !== p);
    expect(phases.filter((p) => !p.endsWith(" of 0"))).toEqual([
      "Re-encrypting items of 2",
      "Wrapping the new key for members of 1",
      "Uploading of 1",
    ]);
    expect(progress.at(-1)).toBe("Uploading: 1 of 1");
    // What bob could read, from the signed history: both items, neither changed since.
    const exposure = ada.getByRole("region", { name: `What ${BOB.email} could read` });
    await exposure.getByText("2 secrets to change:").waitFor();
    await vaultTab(ada, "Member history");
    await ada.getByText(`removed ${BOB.email}`).waitFor();
    await ada.getByText("rekeyed: key version 2, wrapped for 1 member").waitFor();
    await exposure.getByText("2 secrets to change:").waitFor();
    await expect(exposure.getByRole("checkbox", { checked: false }).count()).resolves.toBe(2);
    await accessible(ada, "exposure report");

    await bob.reload();
    await bob.getByRole("button", { name: "Log out" }).click();
    await bob.getByLabel("Email").fill(BOB.email);
    await bob.getByLabel("Master password").fill(BOB.password);
    await bob.getByRole("button", { name: "Log in" }).click();
    await bob.getByText("No vaults yet").waitFor();
    await bob.goto(`/#/vault/${new URL(ada.url()).hash.split("/")[2]}`);
    await expect(bob.getByRole("alert").textContent()).resolves.toMatch(
      /That was not found: it may have been deleted, or you no longer have access to it/,
    );
    await bob.getByRole("button", { name: "Log out" }).click();
    await bob.getByRole("heading", { name: "Log in to your vault" }).waitFor();
  });

  test("the audit log, verified", async () => {
    const verdict = ada.getByTestId("audit-verdict");
    // The audit worker records events a moment after the changes: read the page again until the rekey is in.
    for (let round = 0; ; round++) {
      await ada.getByRole("link", { name: "Audit log" }).click();
      await verdict.waitFor();
      if (await ada.getByRole("cell", { name: "vault.rekeyed", exact: true }).count()) break;
      if (round === 20) throw new Error("the rekey was never recorded");
      await ada.getByRole("link", { name: "Vaults", exact: true }).click();
      await ada.waitForTimeout(250);
    }
    expect(await verdict.textContent()).toMatch(
      /^Checked here, in your browser: all \d+ records, each hash recomputed and linked to the one before/,
    );
    expect(await verdict.textContent()).toMatch(/signed by the server's audit key [0-9a-f]{16}…, pinned in this browser/);
    for (const type of [
      "user.registered",
      "invite.created",
      "invite.consumed",
      "vault.created",
      "vault.member.added",
      "vault.member.removed",
      "vault.rekeyed",
    ]) {
      expect(await ada.getByRole("cell", { name: type, exact: true }).count()).toBeGreaterThan(0);
    }
    await accessible(ada, "audit");
    await shot(ada, "audit");
  });

  test("a changed key: a loud warning, and no share until the new fingerprint is trusted", async () => {
    const fake = "0000 1111 2222 3333 4444 5555 6666 7777 8888 9999 aaaa bbbb cccc dddd eeee ffff";
    await ada.evaluate(
      `localStorage.setItem("vault.pins", JSON.stringify({ ...JSON.parse(localStorage.getItem("vault.pins")), ${JSON.stringify(bobUserId)}: { fingerprint: ${JSON.stringify(fake)}, email: ${JSON.stringify(BOB.email)}, via: "first-use" } }))`,
    );
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("main").getByRole("link", { name: "Team" }).click();
    await vaultTab(ada, "Members");
    // The list no longer names bob by the server's word: his keys do not check out.
    await ada.getByLabel("Person").selectOption(bobUserId);
    const warning = ada.getByTestId("identity-problem");
    await warning.waitFor();
    expect(await warning.textContent()).toContain(`the keys the server shows for user ${bobUserId}`);
    expect(await warning.textContent()).toContain("Pinned: 0000 1111");
    expect(await warning.textContent()).toContain("changed since first seen");
    expect(await ada.getByRole("button", { name: "Share", exact: true }).isDisabled()).toBe(true);
    await accessible(ada, "key changed");
    await shot(ada, "key-changed");
    await ada.getByRole("button", { name: /^I checked it: trust this key for / }).click();
    await ada.getByText(`You compared it with ${BOB.email} and trusted it.`).waitFor();
    expect(await ada.getByRole("button", { name: "Share", exact: true }).isDisabled()).toBe(false);
  });

  test("an expired invite link, and registering without one, say so and what to do", async () => {
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login(ADA.email, ADA.password);
    const { token } = await sdk.invites.create("late@example.test", "member", "1s");
    server.clock.advance(1_000);
    const page = await newPage(bobContext, "invitee");
    await page.goto(`/#/invite/${encodeURIComponent(token)}`);
    await page.getByRole("heading", { name: "This invite cannot be used" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(
      /This invite has expired, was already used, or was revoked. Ask the person who invited you for a new one./,
    );
    await accessible(page, "expired invite");
    // Without an invite, once the server has its first user: the page says what to do.
    await page.goto("/#/register");
    await page.getByLabel("Email").fill("eve@example.test");
    await page.getByLabel("Master password", { exact: true }).fill("lunar kettle orbit 17");
    await page.getByLabel("Master password, again").fill("lunar kettle orbit 17");
    await page.getByRole("button", { name: "Create account" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe(
      "This server only lets people register with an invite: ask an administrator for an invite link.",
    );
    await page.close();
  });

  test("lock by hand and when idle; the wrong password does not unlock", async () => {
    await ada.getByRole("button", { name: "Lock", exact: true }).click();
    await ada.getByRole("heading", { name: "Your vault is locked" }).waitFor();
    await accessible(ada, "locked");
    await shot(ada, "locked");
    await ada.getByLabel("Master password").fill("wrong");
    await ada.getByRole("button", { name: "Unlock", exact: true }).click();
    await expect(ada.getByRole("alert").textContent()).resolves.toBe("That master password is not right.");
    await ada.evaluate(`localStorage.setItem("vault.idleLockSeconds", "1")`);
    await ada.getByLabel("Master password").fill(ADA.password);
    await ada.getByRole("button", { name: "Unlock", exact: true }).click();
    await ada.getByRole("button", { name: "Lock", exact: true }).waitFor();
    // No input for a second: locked again.
    await ada.getByRole("heading", { name: "Your vault is locked" }).waitFor({ timeout: 5000 });
    await ada.evaluate(`localStorage.removeItem("vault.idleLockSeconds")`);
    await ada.getByLabel("Master password").fill(ADA.password);
    await ada.getByRole("button", { name: "Unlock", exact: true }).click();
    await ada.getByRole("button", { name: "Lock", exact: true }).waitFor();
  });

  test("sessions: ada sees her phone's login, ends it, and the phone is sent back to the login page, saying why", async () => {
    // Another browser (by its user agent), so that its session is told apart by name.
    const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0";
    const phoneContext = await browser.newContext({ baseURL: origin, viewport: { width: 390, height: 800 }, userAgent: firefox });
    try {
      const phone = await newPage(phoneContext, "phone");
      await phone.goto("/");
      await phone.getByLabel("Email").fill(ADA.email);
      await phone.getByLabel("Master password").fill(ADA.password);
      await phone.getByRole("button", { name: "Log in" }).click();
      await phone.getByRole("heading", { name: "Your vaults" }).waitFor();

      await ada.getByRole("link", { name: "Sessions" }).click();
      await ada.getByRole("heading", { name: "Where you are signed in" }).waitFor();
      const rows = ada.getByRole("row");
      await ada.getByRole("cell", { name: "This device" }).waitFor(); // the list loads after the heading
      await expect(ada.getByRole("cell", { name: "This device" }).count()).resolves.toBe(1);
      await expect(rows.filter({ hasText: "Web vault, Chromium-based browser on Linux" }).count()).resolves.toBeGreaterThanOrEqual(1);
      await expect(rows.filter({ hasText: "Web vault, Firefox on Linux" }).count()).resolves.toBe(1);
      await accessible(ada, "sessions");
      await shot(ada, "sessions");
      const before = await rows.count();
      await ada.getByRole("button", { name: "End session of Web vault, Firefox on Linux" }).click();
      await expect(ada.getByRole("status").textContent()).resolves.toMatch(/^Ended the session of Web vault, Firefox on Linux/);
      await expect(rows.count()).resolves.toBe(before - 1);

      // The phone's next request: its login is over, and it says so.
      await phone.getByRole("button", { name: "Menu" }).click();
      await phone.getByRole("link", { name: "Sessions" }).click();
      await phone.getByRole("heading", { name: "Log in to your vault" }).waitFor();
      await expect(phone.getByRole("status").textContent()).resolves.toMatch(/session was ended/);
      // Ada's own session goes on.
      await ada.getByRole("link", { name: "Vaults", exact: true }).click();
      await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
    } finally {
      await phoneContext.close();
    }
  });

  test("the rest of the owner's day: a role change, search, a personal vault renamed, an item and the vault deleted, an invite revoked", async () => {
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("main").getByRole("link", { name: "Team" }).click();
    await vaultTab(ada, "Members");
    await ada.getByLabel("Person").selectOption({ label: BOB.email });
    await ada.getByText(`It matches the key pinned for ${BOB.email} in this browser.`).waitFor();
    await ada.getByRole("button", { name: "Share", exact: true }).click();
    await ada.getByLabel(`Role of ${BOB.email}`).selectOption("admin");
    await ada.getByRole("button", { name: "Save role" }).click();
    await ada.getByText(`${BOB.email} is admin now.`).waitFor();
    await vaultTab(ada, "Member history");
    await ada.getByText(`made ${BOB.email} admin`).waitFor();

    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
    await ada.getByLabel("Name", { exact: true }).fill("Mine");
    await ada.getByLabel("Kind").selectOption("personal");
    await ada.getByRole("button", { name: "Create vault" }).click();
    await ada.getByText("personal vault · your role: owner").waitFor();
    // A personal vault has no members to manage: no such tab.
    expect(await ada.getByRole("navigation", { name: "This vault" }).getByRole("link", { name: "Members" }).count()).toBe(0);
    await vaultTab(ada, "Settings");
    await ada.getByLabel("Vault name").fill("Mine, renamed");
    await ada.getByRole("button", { name: "Rename" }).click();
    await ada.getByRole("heading", { name: "Mine, renamed" }).waitFor();
    await vaultTab(ada, "Items");
    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Name", { exact: true }).fill("Bank");
    await ada.getByRole("button", { name: "Save item" }).click();
    await ada.getByRole("button", { name: "Delete", exact: true }).click();
    await ada.getByText("No items yet.").waitFor();

    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByLabel("Search vaults").fill("renamed");
    await ada.getByRole("main").getByRole("link", { name: "Mine, renamed" }).waitFor();
    expect(await ada.getByRole("main").getByRole("link", { name: "Team" }).count()).toBe(0);
    await ada.getByLabel("Search vaults").fill("nothing like it");
    await ada.getByText("No vault matches your search.").waitFor();
    await ada.getByLabel("Search vaults").fill("");
    await ada.getByRole("main").getByRole("link", { name: "Mine, renamed" }).click();
    await vaultTab(ada, "Settings");
    await ada.getByRole("button", { name: "Delete this vault" }).click();
    await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
    await ada.getByRole("main").getByRole("link", { name: "Team" }).waitFor();
    expect(await ada.getByRole("main").getByRole("link", { name: "Mine, renamed" }).count()).toBe(0);

    await ada.getByRole("link", { name: "Invites" }).click();
    await ada.getByLabel("Their email").fill("carol@example.test");
    await ada.getByRole("button", { name: "Create invite" }).click();
    await ada.getByRole("button", { name: "Revoke invite for carol@example.test" }).click();
    await ada.getByText("No pending invites.").waitFor();
  });

  test("a rekey that keeps meeting a changed vault: retried, then a clear 'try again' that works", async () => {
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("main").getByRole("link", { name: "Team" }).click();
    // The vault "changes" under every upload: the server answers 409 as it would to a racing write.
    let conflicts = 0;
    await ada.route("**/api/v1/vaults/*/rekey", (route) => {
      if (conflicts-- <= 0) return route.continue();
      return route.fulfill({
        status: 409,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "CONFLICT", message: "The vault's key version is 3, not 2", field: "keyVersion" } }),
      });
    });
    conflicts = 5;
    // The removal's own rekey meets the changing vault five times.
    await vaultTab(ada, "Members");
    await ada.getByRole("button", { name: `Remove ${BOB.email}` }).click();
    await expect(ada.getByRole("alert").filter({ hasText: "Someone changed" }).textContent()).resolves.toBe(
      "Someone changed this at the same time. Reload and try again.",
    );
    conflicts = 1;
    await ada.getByRole("button", { name: "Try the rekey again" }).click();
    await ada
      .getByText(/^Rekeyed: key version 3, 2 items re-encrypted, wrapped for 1 members \(after 1 retries: the vault changed meanwhile\)\.$/)
      .waitFor();
    await ada.unroute("**/api/v1/vaults/*/rekey");
  });

  test("a vault made without a signed roster: flagged, and adopted by its owner for the members she checks, in the roles shown", async () => {
    // Made the way a plain interface client (or a release before signed rosters) makes one, with ada's real keys.
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login(ADA.email, ADA.password);
    const legacy = await unsignedVault(sdk, "Legacy");
    await plainShare(sdk, legacy, bobUserId, "member");
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada
      .getByRole("main")
      .getByRole("link", { name: /^Legacy/ })
      .click();
    const panel = ada.getByRole("region", { name: "Adopt this vault" });
    await panel.waitFor();
    // Nobody but the owner is vouched for until she checks them.
    const bobBox = panel.getByLabel(`${BOB.email} (member)`);
    expect(await bobBox.isChecked()).toBe(false);
    expect(await panel.getByLabel(`${ADA.email} (owner)`).isChecked()).toBe(true);
    await accessible(ada, "adopt");
    await bobBox.check();
    await panel.getByRole("button", { name: "Adopt: new key for the checked members" }).click();
    await ada.getByText("The vault has a signed member history now, and a new key for the members you kept.").waitFor();
    await ada.getByText(/signed member and item history verified/).waitFor();
    // The browser and another client of the owner's read one history: the same fingerprint.
    const shown = (await ada.getByTestId("vault-fingerprint").textContent())!.match(/[0-9a-f]{4}( [0-9a-f]{4}){4}/)![0];
    expect(shown).toBe(await sdk.vaults.fingerprint(legacy.vaultId));
    const roster = await sdk.members.roster(legacy.vaultId);
    expect(roster!.state).toMatchObject({ name: "Legacy", keyVersion: 2 });
    expect(Object.fromEntries([...roster!.state.members].map(([id, m]) => [id, m.role]))).toEqual({
      [sdk.account.userId]: "owner",
      [bobUserId]: "member",
    });
  });

  test("people: ada takes bob out of the organization; the vaults she manages are rekeyed with progress, and bob cannot log in again", async () => {
    // A vault ada shares with bob, made through the SDK.
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login(ADA.email, ADA.password);
    const farewell = await sdk.vaults.create("Farewell");
    await sdk.members.share(farewell.vaultId, bobUserId);

    await ada.getByRole("link", { name: "People" }).click();
    await ada.getByRole("heading", { name: "People" }).waitFor();
    await ada.getByRole("button", { name: `Remove ${BOB.email} from the organization` }).click();
    const done = ada.getByRole("status").filter({ hasText: /is out of the organization/ });
    await expect(done.textContent({ timeout: 30_000 })).resolves.toMatch(
      new RegExp(`^${BOB.email.replace(".", "\\.")} is out of the organization; \\d+ sessions? ended\\. [1-9]\\d* vaults? rekeyed\\.`),
    );
    await ada.getByRole("heading", { name: "Removed" }).waitFor();
    await accessible(ada, "people");
    expect((await sdk.members.list(farewell.vaultId)).map((m) => m.userId)).not.toContain(bobUserId);
    expect((await sdk.vaults.get(farewell.vaultId)).keyVersion).toBe(2);

    // Bob, in a fresh page: his password still derives, and the server says why it lets him in no more.
    await bob.goto("/");
    await bob.getByLabel("Email").fill(BOB.email);
    await bob.getByLabel("Master password").fill(BOB.password);
    await bob.getByRole("button", { name: "Log in" }).click();
    await expect(bob.getByRole("alert").textContent({ timeout: 20_000 })).resolves.toMatch(/removed from its organization/);
  });

  test("a password change: a new password that is too weak, then a good one; another browser logs in with it, not with the old one", async () => {
    const NEW = "lighthouse keeper 1887 fog";
    const change = async (from: string, to: string) => {
      await ada.getByRole("link", { name: "Password" }).click();
      await ada.getByRole("heading", { name: "Change your master password" }).waitFor();
      await ada.getByLabel("Current master password").fill(from);
      await ada.getByLabel("New master password", { exact: true }).fill(to);
      await ada.getByLabel("New master password, again").fill(to);
      await ada.getByLabel(/^No, nobody else can know it/).check();
      await ada.getByRole("button", { name: "Change master password" }).click();
    };
    await change(ADA.password, "short");
    await expect(ada.getByRole("alert").textContent()).resolves.toMatch(/^That master password is too weak/);
    await change("not the password", NEW);
    await expect(ada.getByRole("alert").textContent()).resolves.toBe("That master password is not right.");
    await change(ADA.password, NEW);
    const changed = ada.getByRole("status").filter({ hasText: /^Your master password is changed/ });
    await expect(changed.textContent()).resolves.toMatch(/^Your master password is changed\. \d+ personal vaults? wrapped again/);
    await expect(changed.textContent()).resolves.toMatch(
      /Your keys are the same as before: the old password, with a copy of the server's data from before, still opens them\.$/,
    );
    await accessible(ada, "password");

    const other = await browser.newContext({ baseURL: origin });
    try {
      const page = await newPage(other, "ada elsewhere");
      await page.goto("/");
      await page.getByLabel("Email").fill(ADA.email);
      await page.getByLabel("Master password").fill(ADA.password);
      await page.getByRole("button", { name: "Log in" }).click();
      await expect(page.getByRole("alert").textContent()).resolves.toMatch(/Your email or password is not right/);
      await page.getByLabel("Master password").fill(NEW);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { name: "Your vaults" }).waitFor();
    } finally {
      await other.close();
    }
    // Ada's own browser goes on: its session was not ended.
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
  });

  test("a key rotation: ada rotates her keys on her key page; cy, who had pinned the old ones, opens their vault without a warning", async () => {
    const NEW = "lighthouse keeper 1887 fog"; // ada's password since the test before
    const CY = { email: "cy@example.test", password: "cy's own long master password" };
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login(ADA.email, NEW);
    const invite = await sdk.invites.create(CY.email, "member");
    const cySdk = new VaultClient({ baseUrl: server.url });
    await cySdk.register({ email: CY.email, password: CY.password, invite: invite.code });
    const vault = await sdk.vaults.create("Rotation");
    await sdk.items.add(vault.vaultId, { name: "Before", fields: { password: "signed by the old key" } });
    await sdk.members.share(vault.vaultId, cySdk.account.userId);

    const cyContext = await browser.newContext({ baseURL: origin });
    try {
      const cy = await newPage(cyContext, "cy");
      const openItem = async () => {
        await cy.getByRole("link", { name: "Vaults", exact: true }).click();
        await cy.getByRole("main").getByRole("link", { name: "Rotation" }).click();
        await cy.getByRole("button", { name: "Before" }).click();
        await cy.getByRole("button", { name: "Reveal" }).click();
        expect(await cy.getByTestId("password").textContent()).toBe("signed by the old key");
      };
      await cy.goto("/");
      await cy.getByLabel("Email").fill(CY.email);
      await cy.getByLabel("Master password").fill(CY.password);
      await cy.getByRole("button", { name: "Log in" }).click();
      await cy.getByRole("heading", { name: "Your vaults" }).waitFor();
      await openItem();
      const pinnedBefore = JSON.parse(await cy.evaluate<string>(`localStorage.getItem("vault.pins")`))[sdk.account.userId];

      await ada.getByRole("link", { name: "Your key" }).click();
      await ada.getByRole("heading", { name: "Your key", exact: true }).waitFor();
      const shownFingerprint = ada.getByTestId("own-fingerprint").filter({ hasText: /^[0-9a-f]{4}( [0-9a-f]{4}){15}$/ });
      const oldFingerprint = await shownFingerprint.textContent();
      await ada.getByRole("button", { name: "Rotate my keys" }).click();
      const rotated = ada.getByRole("status").filter({ hasText: /^Your keys are rotated/ });
      await expect(rotated.textContent({ timeout: 30_000 })).resolves.toMatch(
        /^Your keys are rotated \(key version 2\)\. [1-9]\d* vaults? wrapped/,
      );
      await ada.getByRole("heading", { name: "Your key log" }).waitFor();
      await expect(ada.getByRole("row").count()).resolves.toBe(3); // the heading row and two versions
      // The page shows the new fingerprint once the rotation is done (it reads it again).
      await ada.waitForFunction(
        `(() => { const t = document.querySelector('[data-testid="own-fingerprint"]')?.textContent ?? ""; return /^[0-9a-f]{4}( [0-9a-f]{4}){15}$/.test(t) && t !== ${JSON.stringify(oldFingerprint)}; })()`,
      );
      const newFingerprint = await shownFingerprint.textContent();
      await accessible(ada, "your key (rotated)");
      await shot(ada, "key-rotation");

      // Cy's browser follows the signed step: no warning, the item ada signed with her old key opens, the pin moves.
      await openItem();
      await expect(cy.getByRole("alert").count()).resolves.toBe(0);
      const pinnedAfter = JSON.parse(await cy.evaluate<string>(`localStorage.getItem("vault.pins")`))[sdk.account.userId];
      expect(pinnedBefore.fingerprint).toBe(oldFingerprint);
      expect(pinnedAfter).toMatchObject({ fingerprint: newFingerprint, keyVersion: 2 });
      // The SDK session ada had elsewhere ended with the rotation.
      await expect(sdk.vaults.list()).rejects.toMatchObject({ status: 401 });
    } finally {
      await cyContext.close();
    }
  });

  test("a page that stays current: a vault shared meanwhile shows when 'Vaults' is clicked again or the tab regains focus, an item added meanwhile too", async () => {
    const NEW = "lighthouse keeper 1887 fog"; // ada's password since the password test
    const DEE = { email: "dee@example.test", password: "dee's own long master password" };
    const sdk = new VaultClient({ baseUrl: server.url });
    await sdk.login(ADA.email, NEW);
    const invite = await sdk.invites.create(DEE.email, "member");
    const deeSdk = new VaultClient({ baseUrl: server.url });
    await deeSdk.register({ email: DEE.email, password: DEE.password, invite: invite.code });
    const deeContext = await browser.newContext({ baseURL: origin });
    try {
      const dee = await newPage(deeContext, "dee");
      await dee.goto("/");
      await dee.getByLabel("Email").fill(DEE.email);
      await dee.getByLabel("Master password").fill(DEE.password);
      await dee.getByRole("button", { name: "Log in" }).click();
      await dee.getByRole("heading", { name: "Your vaults" }).waitFor();
      await dee.getByText("No vaults yet: create one below.").waitFor();

      // Shared while her list is open: clicking "Vaults" again reads it again.
      const first = await sdk.vaults.create("Shared while open");
      await sdk.items.add(first.vaultId, { name: "Printer", fields: { password: "toner" } });
      await sdk.members.share(first.vaultId, deeSdk.account.userId);
      await dee.getByRole("link", { name: "Vaults", exact: true }).click();
      await dee.getByRole("main").getByRole("link", { name: "Shared while open" }).waitFor();

      // Shared while she is elsewhere: the tab regaining focus reads it again.
      const second = await sdk.vaults.create("Shared while away");
      await sdk.members.share(second.vaultId, deeSdk.account.userId);
      await dee.evaluate(`window.dispatchEvent(new Event("focus"))`);
      await dee.getByRole("main").getByRole("link", { name: "Shared while away" }).waitFor();

      // An item added while her vault is open shows when she comes back to the tab.
      await dee.getByRole("main").getByRole("link", { name: "Shared while open" }).click();
      await dee.getByRole("button", { name: "Printer" }).waitFor();
      await sdk.items.add(first.vaultId, { name: "Scanner", fields: { password: "flatbed" } });
      await dee.evaluate(`document.dispatchEvent(new Event("visibilitychange"))`);
      await dee.getByRole("button", { name: "Scanner" }).waitFor();
    } finally {
      await deeContext.close();
    }
  });

  test("on a phone, 390 px wide: no page scrolls sideways (vaults, a shared vault with its members and items, your key, sessions, audit, people)", async () => {
    const NEW = "lighthouse keeper 1887 fog"; // ada's password since the password test
    const phoneContext = await browser.newContext({ baseURL: origin, viewport: { width: 390, height: 800 } });
    try {
      const phone = await newPage(phoneContext, "phone");
      await phone.goto("/");
      await phone.getByLabel("Email").fill(ADA.email);
      await phone.getByLabel("Master password").fill(NEW);
      await phone.getByRole("button", { name: "Log in" }).click();
      await phone.getByRole("heading", { name: "Your vaults" }).waitFor();
      /** Elements reaching past the right edge, named, for a message that says where. */
      const overflow = () =>
        phone.evaluate<string[]>(`(() => {
          const width = document.documentElement.clientWidth;
          if (document.documentElement.scrollWidth <= width) return [];
          return [...document.querySelectorAll("body *")]
            .filter((e) => e.getBoundingClientRect().right > width + 0.5)
            .slice(0, 8)
            .map((e) => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).replace(/ /g, ".") : "") + " " + (e.textContent || "").trim().slice(0, 40));
        })()`);
      const pages: Array<[string, string]> = [
        ["Vaults", "Your vaults"],
        ["Your key", "Your key"],
        ["Sessions", "Where you are signed in"],
        ["Health", "Password health"],
        ["Audit log", "Audit log"],
        ["People", "People"],
      ];
      // On a phone the sidebar folds behind "Menu"; a link followed folds it again.
      const menu = phone.getByRole("button", { name: "Menu" });
      for (const [link, heading] of pages) {
        await menu.click();
        await phone.getByRole("link", { name: link, exact: true }).click();
        await phone.getByRole("heading", { name: heading, exact: true }).first().waitFor();
        await phone.waitForLoadState("networkidle");
        expect({ page: link, overflowing: await overflow() }).toEqual({ page: link, overflowing: [] });
      }
      // A shared vault with members, its roster history and an item open.
      await menu.click();
      await phone.getByRole("link", { name: "Vaults", exact: true }).click();
      await phone.getByRole("main").getByRole("link", { name: "Team" }).click();
      await phone.getByRole("button", { name: "Wifi" }).click();
      await phone.waitForLoadState("networkidle");
      expect({ page: "vault", overflowing: await overflow() }).toEqual({ page: "vault", overflowing: [] });
      await shot(phone, "phone-vault");
      for (const tab of ["Members", "Member history"]) {
        await vaultTab(phone, tab);
        await phone.waitForLoadState("networkidle");
        expect({ page: tab, overflowing: await overflow() }).toEqual({ page: tab, overflowing: [] });
      }
      await menu.click();
      expect({ page: "menu", overflowing: await overflow() }).toEqual({ page: "menu", overflowing: [] });
    } finally {
      await phoneContext.close();
    }
  });

  test("an item as people use it: copy the username, open github.com typed without https://, notes keep their lines; a javascript: address is no link", async () => {
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("main").getByRole("link", { name: "Team" }).click();
    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Name", { exact: true }).fill("GitHub bot");
    await ada.getByLabel("Username").fill("acme-bot");
    await ada.getByLabel("Website").fill("github.com");
    await ada.getByLabel("Notes").fill("Recovery codes in the safe.\nRotate every spring.");
    await ada.getByRole("button", { name: "Save item" }).click();
    // A saved item is shown at once.
    const view = ada.getByRole("region", { name: "Item GitHub bot" });
    await expect(view.getByRole("link", { name: "https://github.com" }).getAttribute("href")).resolves.toBe("https://github.com/");
    await expect(view.getByRole("link", { name: "https://github.com" }).getAttribute("rel")).resolves.toBe("noopener noreferrer");
    await view.getByRole("button", { name: "Copy username" }).click();
    await expect(ada.evaluate<string>(`navigator.clipboard.readText()`)).resolves.toBe("acme-bot");
    await expect(view.getByTestId("notes").innerText()).resolves.toBe("Recovery codes in the safe.\nRotate every spring.");
    await accessible(ada, "item (login)");

    await view.getByRole("button", { name: "Edit" }).click();
    await ada.getByLabel("Website").fill("javascript:alert(document.domain)");
    await ada.getByRole("button", { name: "Save item" }).click();
    const edited = ada.getByRole("region", { name: "Item GitHub bot" });
    await edited.getByText("javascript:alert(document.domain)").waitFor();
    await expect(edited.getByRole("link").count()).resolves.toBe(0);
  });

  test("history and trash: an earlier version made current again; an item deleted to the trash and restored from it", async () => {
    // The item the test before edited: its first version had the github.com link.
    const view = ada.getByRole("region", { name: "Item GitHub bot" });
    await view.waitFor();
    await ada.getByRole("button", { name: "Show history" }).click();
    const history = ada.getByRole("region", { name: "History of GitHub bot" });
    await history.getByTestId("revision-1").waitFor();
    await accessible(ada, "item history");
    await history.getByRole("button", { name: "Restore revision 1" }).click();
    await ada.getByRole("region", { name: "Item GitHub bot" }).getByRole("link", { name: "https://github.com" }).waitFor();
    await ada.getByText("Revision 3 ·").waitFor();

    await ada.getByRole("region", { name: "Item GitHub bot" }).getByRole("button", { name: "Delete", exact: true }).click();
    await ada.getByRole("list", { name: "Items" }).getByRole("button", { name: "GitHub bot" }).waitFor({ state: "detached" });
    await vaultTab(ada, "Trash");
    const trash = ada.getByRole("list", { name: "Trash" });
    await trash.getByText("GitHub bot", { exact: true }).waitFor();
    await accessible(ada, "trash");
    // Restored, it is back in the list and open.
    await trash.getByRole("button", { name: "Restore GitHub bot" }).click();
    await ada.getByRole("list", { name: "Items" }).getByRole("button", { name: "GitHub bot" }).waitFor();
    await ada.getByText("Revision 4 ·").waitFor();
    await vaultTab(ada, "Trash");
    await ada.getByText("The trash is empty.").waitFor();
    await vaultTab(ada, "Items");
  });

  test("item types: a login with two websites, a TOTP seed whose code matches one computed here, a custom field; a card; search across vaults", async () => {
    const seed = "JBSWY3DPEHPK3PXPJBSWY3DP";
    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Name", { exact: true }).fill("Deploy");
    await ada.getByLabel("Username").fill("deployer");
    await ada.getByLabel("Website", { exact: true }).fill("github.com/acme");
    await ada.getByRole("button", { name: "Add a website" }).click();
    await ada.getByLabel("Website 2").fill("gitlab.com");
    await ada.getByLabel("How address 2 matches").selectOption("host");
    await ada.getByLabel("One-time code seed (TOTP)").fill("not a seed");
    await ada.getByText("a TOTP secret is base32").waitFor();
    await ada.getByLabel("One-time code seed (TOTP)").fill(seed.toLowerCase());
    await ada.getByRole("button", { name: "Add a field" }).click();
    await ada.getByLabel("Field 1 name").fill("team");
    await ada.getByLabel("Field 1 value").fill("core");
    await ada.getByLabel("Favourite").check();
    await accessible(ada, "item form (login)");
    await ada.getByRole("button", { name: "Save item" }).click();
    const view = ada.getByRole("region", { name: "Item Deploy" });
    await view.getByTestId("totp").waitFor();
    const before = referenceTotp(fromBase32(seed), Date.now() - 1000);
    const shownCode = await view.getByTestId("totp").innerText();
    expect([before, referenceTotp(fromBase32(seed), Date.now())]).toContain(shownCode);
    await expect(view.getByTestId("totp-remaining").innerText()).resolves.toMatch(/^\d+ s left$/);
    await view.getByRole("link", { name: "https://gitlab.com" }).waitFor();
    await view.getByText("matches: host").waitFor();
    await view.getByText("core").waitFor();
    await view.getByLabel("Favourite").waitFor();
    await accessible(ada, "item (login with a one-time code)");

    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Type").selectOption("card");
    await ada.getByLabel("Name", { exact: true }).fill("Visa");
    await ada.getByLabel("Number").fill("4111111111111111");
    await ada.getByRole("button", { name: "Save item" }).click();
    const card = ada.getByRole("region", { name: "Item Visa" });
    await card.getByText("Card", { exact: true }).waitFor();
    await expect(card.getByTestId("number").innerText()).resolves.not.toContain("4111");
    await card.getByRole("button", { name: "Reveal number" }).click();
    await expect(card.getByTestId("number").innerText()).resolves.toBe("4111111111111111");

    await ada.getByLabel("Search items").fill("visa");
    await ada.getByRole("list", { name: "Items" }).getByRole("button", { name: "Deploy" }).waitFor({ state: "detached" });
    await expect(ada.getByRole("list", { name: "Items" }).getByRole("button").allInnerTexts()).resolves.toEqual(["Visa"]);
    await ada.getByLabel("Search items").fill("");

    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByLabel("Search all items").fill("github");
    const hits = ada.getByRole("list", { name: "Matching items" });
    await hits.getByRole("link", { name: "Deploy" }).waitFor();
    await hits.getByRole("link", { name: "GitHub bot" }).waitFor();
    await accessible(ada, "search all items");
    await hits.getByRole("link", { name: "Deploy" }).click();
    await ada.getByRole("region", { name: "Item Deploy" }).waitFor();
  });

  test("import a Bitwarden export and a KeePass database; export encrypted (it reads back) and, after a loud confirmation, as CSV", async () => {
    await vaultTab(ada, "Import and export");
    const transfer = ada.getByRole("region", { name: "Import and export" });
    await transfer.getByLabel("File to import").setInputFiles(path.join(__dirname, "../fixtures/import/bitwarden.json"));
    await transfer.getByRole("button", { name: "Import", exact: true }).click();
    await ada.getByText("Imported 5 items (1 with parts left out); skipped 1.").waitFor();
    await ada
      .getByRole("list", { name: "Parts left out" })
      .getByText("GitHub: linked field user link: a linked field has no value of its own")
      .waitFor();
    await ada
      .getByRole("list", { name: "Skipped" })
      .getByText("From the future: a Bitwarden item type this service does not have (9)")
      .waitFor();
    await accessible(ada, "import and export");
    await vaultTab(ada, "Items");
    await ada.getByRole("list", { name: "Items" }).getByRole("button", { name: "Wi-Fi" }).waitFor();

    // KeePassXC's own database that needs its password and its key file: the key file is asked for once a .kdbx is chosen.
    await vaultTab(ada, "Import and export");
    await transfer
      .getByLabel("File to import")
      .setInputFiles(path.join(__dirname, "../fixtures/import/keepass/keepassxc-KeyFileProtected.kdbx"));
    await transfer.getByLabel("The file's password").fill("a");
    await transfer.getByRole("button", { name: "Import", exact: true }).click();
    await ada.getByRole("alert").filter({ hasText: "key file" }).waitFor();
    await transfer.getByLabel(/Key file/).setInputFiles(path.join(__dirname, "../fixtures/import/keepass/keepassxc-KeyFileProtected.key"));
    // The password field is emptied after every attempt.
    await transfer.getByLabel("The file's password").fill("a");
    await transfer.getByRole("button", { name: "Import", exact: true }).click();
    await ada.getByText(/^Imported \d+ items? \(/).waitFor();

    await transfer
      .getByLabel("File to import")
      .setInputFiles({ name: "team.kdbx", mimeType: "application/octet-stream", buffer: Buffer.from(await keepassFile("kp-pass")) });
    await transfer.getByLabel("The file's password").fill("kp-pass");
    await transfer.getByRole("button", { name: "Import", exact: true }).click();
    await ada.getByText("Imported 2 items (0 with parts left out); skipped 1.").waitFor();
    await ada.getByText("Attached 1 file to the items imported.").waitFor();
    await vaultTab(ada, "Items");
    await ada.getByRole("list", { name: "Items" }).getByRole("button", { name: "db1" }).click();
    await ada.getByRole("region", { name: "Item db1" }).getByTestId("totp").waitFor();
    await vaultTab(ada, "Import and export");

    await transfer.getByLabel("Export passphrase", { exact: true }).fill("a long export passphrase");
    await transfer.getByLabel("Export passphrase, again").fill("a long export passphrase");
    const [encrypted] = await Promise.all([
      ada.waitForEvent("download"),
      transfer.getByRole("button", { name: "Export", exact: true }).click(),
    ]);
    const file = fs.readFileSync((await encrypted.path())!);
    // Nothing in the clear: the format, the KDF's parameters, and base64 ciphertext. (A short name
    // such as "db1" can occur in random base64 by chance; a hyphen or a space cannot.)
    const { ciphertext, ...clear } = JSON.parse(file.toString()) as Record<string, unknown>;
    expect(Object.keys(clear).sort()).toEqual(["format", "kdf"]);
    expect(ciphertext).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(JSON.stringify(clear)).not.toMatch(/db1|Wi-Fi|Deploy|GitHub bot/);
    expect(file.toString()).not.toMatch(/Wi-Fi|GitHub bot/);
    const back = await readImport(new Uint8Array(file), { password: "a long export passphrase" });
    expect(back.items.map((i) => i.name)).toEqual(expect.arrayContaining(["db1", "Wi-Fi", "Deploy", "GitHub bot"]));

    await transfer.getByLabel("Export as").selectOption("csv");
    await transfer.getByText("A file in the clear holds every password of this vault").waitFor();
    const [csv] = await Promise.all([ada.waitForEvent("download"), transfer.getByRole("button", { name: "Export", exact: true }).click()]);
    expect(fs.readFileSync((await csv.path())!, "utf8").split(/\r?\n/)[0]).toBe(
      "vault,type,name,username,password,urls,totp,notes,favorite,fields",
    );
  });

  test("import with one vault per folder: a real Bitwarden export's five folders become five vaults named after them, each holding its folder's items", async () => {
    const file = path.join(__dirname, "../fixtures/import/bitwarden/pass-import-bitwarden.json");
    const reader = new VaultClient({ baseUrl: server.url });
    await reader.login(ADA.email, "lighthouse keeper 1887 fog"); // ada's password since the password test
    const vaultsBefore = await reader.vaults.list();
    const here = ada.url().match(/#\/vault\/([0-9a-f-]+)/)![1]!;
    const itemsHere = (await reader.items.list(here)).length;

    await vaultTab(ada, "Import and export");
    const transfer = ada.getByRole("region", { name: "Import and export" });
    await transfer.getByLabel("File to import").setInputFiles(file);
    await transfer.getByLabel("One vault per source vault or top-level folder").check();
    await transfer.getByRole("button", { name: "Import", exact: true }).click();
    await ada.getByText("Imported 14 items (0 with parts left out); skipped 0.").waitFor();
    const made = ada.getByRole("list", { name: "Vaults made" });
    await expect(made.getByRole("listitem").allInnerTexts()).resolves.toEqual([
      "Bank (1 item)",
      "Emails (4 items)",
      "CornerCases (4 items)",
      "Social (3 items)",
      "Servers (2 items)",
    ]);
    await accessible(ada, "import with one vault per folder");
    // The sidebar lists them at once.
    // (in its list of vaults: a tag of the same name may show among the tags in use once the items are read.)
    await ada
      .getByRole("navigation", { name: "Main" })
      .getByRole("list", { name: "Vaults", exact: true })
      .getByRole("link", { name: "CornerCases", exact: true })
      .waitFor();

    // Each new vault holds exactly its folder's items; the vault imported into got none (every item of the file has a folder).
    const { items } = await readImport(new Uint8Array(fs.readFileSync(file)));
    const created = (await reader.vaults.listChecked()).filter((v) => !vaultsBefore.some((b) => b.vaultId === v.vaultId));
    const byName = new Map(created.map((v) => [v.nameCheck.name, v.vaultId]));
    expect([...byName.keys()].sort()).toEqual(["Bank", "CornerCases", "Emails", "Servers", "Social"]);
    for (const [name, vaultId] of byName) {
      const stored = (await reader.items.list(vaultId)).map((i) => i.name).sort();
      expect({ name, stored }).toEqual({
        name,
        stored: items
          .filter((i) => i.place === name)
          .map((i) => i.name)
          .sort(),
      });
    }
    expect((await reader.items.list(here)).length).toBe(itemsHere);

    // A link of the report opens the vault, its items listed.
    await made.getByRole("link", { name: "Servers" }).click();
    await ada.getByRole("heading", { name: "Servers", level: 1 }).waitFor();
    const listed = ada.getByRole("list", { name: "Items" }).getByRole("button");
    await listed.nth(1).waitFor();
    await expect(listed.count()).resolves.toBe(2);
  });

  test("a reload keeps the login, locked: the lock screen names the account, and the password opens it (no token in the clear)", async () => {
    const NEW = "lighthouse keeper 1887 fog"; // ada's password since the password test
    await ada.reload();
    await ada.getByRole("heading", { name: "Your vault is locked" }).waitFor();
    await ada.getByText(`Signed in as ${ADA.email}`).waitFor();
    // What is kept holds the session's tokens sealed: none in the clear.
    const kept = await ada.evaluate<string>(`JSON.stringify(Object.assign({}, localStorage, sessionStorage))`);
    expect(kept).not.toMatch(/refreshToken|accessToken|eyJ[\w-]*\.eyJ/);
    await ada.getByLabel("Master password").fill(NEW);
    await ada.getByRole("button", { name: "Unlock", exact: true }).click();
    await ada.getByRole("button", { name: "Lock", exact: true }).waitFor();
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("heading", { name: "Your vaults" }).waitFor();
  });

  test("a protective change: ada says the old password may be known; her keys are replaced, her vaults get new keys, and the page says what is left", async () => {
    const NEW = "lighthouse keeper 1887 fog"; // ada's password since the password test
    const NEWER = "harbour pilot 1911 mist over the quay";
    const reader = new VaultClient({ baseUrl: server.url });
    await reader.login(ADA.email, NEW);
    const keysBefore = (await reader.keys.log(reader.account.userId)).length;
    await ada.getByRole("link", { name: "Password" }).click();
    await ada.getByRole("heading", { name: "Change your master password" }).waitFor();
    await ada.getByLabel("Current master password").fill(NEW);
    await ada.getByLabel("New master password", { exact: true }).fill(NEWER);
    await ada.getByLabel("New master password, again").fill(NEWER);
    await ada.getByLabel(/^Yes, or I am not sure/).check();
    await ada.getByRole("button", { name: "Change master password" }).click();
    const changed = ada.getByRole("status").filter({ hasText: /^Your master password is changed/ });
    await expect(changed.textContent({ timeout: 60_000 })).resolves.toMatch(
      /Your keys are replaced \(your fingerprint is now [0-9a-f ]+\) and \d+ vaults? have new keys(: the old password opens nothing you write from now on\.|; \d+ shared vaults? others manage keep their key \(below\)\.)$/,
    );
    // The account's signed key log has one more step, and every vault still opens with the new password.
    const after = new VaultClient({ baseUrl: server.url });
    await after.login(ADA.email, NEWER);
    expect((await after.keys.log(after.account.userId)).length).toBe(keysBefore + 1);
    for (const v of await after.vaults.listChecked()) await after.items.list(v.vaultId);
    await accessible(ada, "password");
  });

  test("the server stopped mid-action: the page says so instead of failing silently", async () => {
    await ada.getByRole("link", { name: "Vaults", exact: true }).click();
    await ada.getByRole("main").getByRole("link", { name: "Team" }).click();
    await ada.getByRole("button", { name: "Add item" }).click();
    await ada.getByLabel("Name", { exact: true }).fill("Written while the server is down");
    await server.stop();
    await ada.getByRole("button", { name: "Save item" }).click();
    await expect(ada.getByRole("alert").first().textContent()).resolves.toMatch(
      /The server cannot be reached. Check your connection and that the service is running, then try again./,
    );
    expect(cspViolations).toEqual([]);
  });
});
