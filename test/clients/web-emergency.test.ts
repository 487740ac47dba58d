/**
 * Emergency access in the web vault, in Debian's Chromium against the real service, its clock
 * moved past each wait. A grantor grants read access on the "Emergency access" page to a colleague
 * whose key they compare there (one not compared is refused); the grantee asks; the grantor's
 * browser shows the request in a banner on every page and refuses it from there, and the grantee is
 * offered nothing to open; asked again and the wait over, the grantee opens the grantor's vaults
 * read-only. A takeover grant opened in the page sets a new master password, which then signs in
 * as the grantor, while the grantee's own login stays as it was.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { VaultClient } from "../../sdk";
import { webVaultSuite } from "../helpers/web-vault";
import { SCREENSHOTS } from "../helpers/browser";
import { describePagesOnFailure } from "../helpers/page-failures";
import { eventually } from "../helpers/wait";

jest.setTimeout(120_000);

const HOUR = 3_600_000;
const NEW_PASSWORD = "a brand new horse staple battery";
const UNVERIFIED = "You have not checked this person's keys yet: compare fingerprints with them (and trust them)";

describe("the web vault: emergency access", () => {
  /** The pages a test opened. */
  const pages: Page[] = [];
  // What they showed, when a test fails: said before they are closed below.
  describePagesOnFailure(() => Object.fromEntries(pages.map((p, i) => [`page ${i + 1}`, p])));
  // Closed after each test, before the suite's afterEach (declared after this one, so run after it)
  // waits for every API answer to be read: the SDK leaves the body of a 401 unread (an access token
  // that expired as the server's clock moved on), and Chromium holds such an answer until its page goes.
  afterEach(async () => {
    for (const p of pages.splice(0)) await p.close();
  });
  const suite = webVaultSuite();
  let ada: VaultClient;
  let bob: VaultClient;
  let carol: VaultClient;

  /** A member signed in on the Emergency access page, reached from the navigation. */
  async function onEmergencyPage(member: VaultClient): Promise<Page> {
    const p = await suite.page({ acceptDialogs: true });
    pages.push(p);
    await suite.logIn(p, member.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Emergency access", exact: true }).click();
    await p.getByRole("heading", { name: "Emergency access", level: 1 }).waitFor();
    return p;
  }

  /** The window gets focus (the page reads the grants again then) until `done` holds; the reads are spaced by the page. */
  const refocusedUntil = (p: Page, what: string, done: () => Promise<boolean>) =>
    eventually(
      what,
      async () => {
        await p.evaluate("dispatchEvent(new Event('focus'))");
        return done();
      },
      { everyMs: 500, timeoutMs: 20_000 },
    );

  /** `who`'s fingerprint typed into the comparison the page shows for them, as they would read it out. */
  async function compareKey(p: Page, who: VaultClient): Promise<void> {
    const key = p.getByRole("region", { name: `${who.account.email}'s key` });
    await key.getByLabel(`Fingerprint ${who.account.email} reads to you`).fill(await who.keys.own());
    await key.getByRole("button", { name: `Mark ${who.account.email} as checked` }).click();
  }

  /** The grantee's row for the grant `grantor` made. */
  const receivedRow = (p: Page, grantor: VaultClient) =>
    p.getByRole("list", { name: "Emergency access granted to you" }).getByRole("listitem").filter({ hasText: grantor.account.email });

  beforeAll(async () => {
    ada = await suite.registered();
    [bob, carol] = [await suite.registered("member", ada), await suite.registered("member", ada)];
    const vault = await bob.vaults.create("Bob's own", "personal");
    await bob.items.add(vault.vaultId, { name: "bank", fields: { username: "bob.b", password: "s3cret-4711" } });
  });

  test("read access: granted to a compared colleague only; asked, refused from the banner, asked again, opened read-only", async () => {
    const erin = await suite.registered("member", ada);
    const [p, q] = [await onEmergencyPage(bob), await onEmergencyPage(carol)];
    const form = p.getByRole("form", { name: "Grant emergency access" });
    // A colleague whose key this browser knows only from the server: refused, nothing granted.
    await form.getByLabel("Colleague").selectOption({ label: erin.account.email });
    await form.getByLabel("Wait in days").fill("2");
    await form.getByRole("button", { name: "Grant emergency access" }).click();
    await form.getByRole("alert").filter({ hasText: UNVERIFIED }).waitFor();
    expect((await bob.emergency.list()).granted).toEqual([]);

    // Carol's key compared on the page (the comparison People and Your key show), then granted.
    await form.getByLabel("Colleague").selectOption({ label: carol.account.email });
    await compareKey(p, carol);
    await p
      .getByRole("region", { name: `${carol.account.email}'s key` })
      .getByText("checked: you compared it")
      .waitFor();
    await form.getByRole("radio", { name: /^Read:/ }).check();
    await form.getByRole("button", { name: "Grant emergency access" }).click();
    await form
      .getByRole("status")
      .filter({ hasText: `${carol.account.email} may ask for emergency access (read)` })
      .waitFor();
    const granted = p
      .getByRole("list", { name: "Emergency access you granted" })
      .getByRole("listitem")
      .filter({ hasText: carol.account.email });
    await granted.getByText("Not asked for.").waitFor();
    expect((await bob.emergency.list()).granted).toMatchObject([{ level: "read", waitHours: 48, status: "idle" }]);

    // Carol asks in her browser; Bob's shows the request above every page.
    const row = receivedRow(q, bob);
    await refocusedUntil(q, "the grant reaches carol's page", async () => (await row.count()) > 0);
    await row.getByRole("button", { name: "Ask for access" }).click();
    await row.getByText(/^Waiting until .+\.$/).waitFor();
    const banner = p.getByRole("region", { name: "Emergency access requests" });
    await refocusedUntil(p, "the banner", async () => (await banner.count()) > 0);
    await banner
      .getByText(new RegExp(`^${carol.account.email} asked for emergency access to your account\\. It opens .+ unless you refuse\\.`))
      .waitFor();
    await suite.accessible(p, "emergency access, a request waiting");
    await p.screenshot({ path: path.join(SCREENSHOTS, "emergency-access.png"), fullPage: true });
    await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "All items", exact: true }).click();
    await banner.getByRole("button", { name: "Refuse" }).click();
    await eventually("the banner goes", async () => (await banner.count()) === 0);
    expect((await bob.emergency.list()).granted).toMatchObject([{ status: "idle" }]);

    // Refused: Carol is offered to ask again, nothing to open, even once the wait would have passed.
    await refocusedUntil(
      q,
      "carol's page shows the refusal",
      async () => (await row.getByText("They refused your last request").count()) > 0,
    );
    suite.server.clock.advance(48 * HOUR + 60_000);
    await refocusedUntil(
      q,
      "a read after the clock moved",
      async () => (await row.getByRole("button", { name: "Ask for access" }).count()) > 0,
    );
    expect(await row.getByRole("button", { name: "Open", exact: true }).count()).toBe(0);

    // Asked again, and the wait over: opened once Carol compared Bob's key too, read-only, the password revealed.
    await row.getByRole("button", { name: "Ask for access" }).click();
    await row.getByText(/^Waiting until/).waitFor();
    suite.server.clock.advance(48 * HOUR + 60_000);
    await refocusedUntil(q, "the grant released", async () => (await row.getByRole("button", { name: "Open", exact: true }).count()) > 0);
    await row.getByRole("button", { name: "Open", exact: true }).click();
    await q.getByRole("alert").filter({ hasText: "before you open their account. Nothing was opened." }).waitFor();
    await compareKey(q, bob);
    await eventually("bob's key checked", async () => (await row.getByRole("region").count()) === 0);
    await row.getByRole("button", { name: "Open", exact: true }).click();
    await q.getByRole("heading", { name: `${bob.account.email}'s account` }).waitFor();
    const vault = q.getByRole("region", { name: "Vault Bob's own" });
    await vault.getByRole("button", { name: /bank/ }).click();
    const item = vault.getByRole("region", { name: "Item bank" });
    await item.getByTestId("username").filter({ hasText: "bob.b" }).waitFor();
    await item.getByRole("button", { name: "Reveal password" }).click();
    expect(await item.getByTestId("password").textContent()).toBe("s3cret-4711");
    // Nothing to edit, and Carol is still herself in her own browser.
    expect(await item.getByRole("button", { name: "Edit" }).count()).toBe(0);
    expect(await q.locator("header .who").textContent()).toContain(carol.account.email);
    await suite.accessible(q, "emergency access, opened read-only");
    await q.getByRole("button", { name: "Back to emergency access" }).click();
  });

  test("the banner reads the grants each minute and when the tab is shown again, never while it is hidden", async () => {
    const p = await suite.page();
    pages.push(p);
    const reads: string[] = [];
    p.on("request", (r) => {
      if (new URL(r.url()).pathname === "/api/v1/emergency/grants") reads.push(r.method());
    });
    // The page's timers and clock are moved by the test (the server's are not).
    await p.clock.install();
    await suite.logIn(p, carol.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await eventually("the grants are read once signed in", () => reads.length > 0);
    const settled = async () => {
      await p.waitForTimeout(1_000);
      return reads.length;
    };
    let seen = await settled();
    // Shown: a minute on, the banner asks again, once.
    await p.clock.runFor(61_000);
    await eventually("the minute's read", () => reads.length === seen + 1);
    seen = await settled();
    expect(reads.length).toBe(seen);
    // Hidden: neither the minute's poll nor a focus asks.
    const setVisibility = (state: "hidden" | "visible") =>
      p.evaluate(`Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "${state}" });
        document.dispatchEvent(new Event("visibilitychange"))`);
    await setVisibility("hidden");
    await p.clock.runFor(3 * 61_000);
    await p.evaluate("dispatchEvent(new Event('focus'))");
    expect(await settled()).toBe(seen);
    // Shown again: it asks at once.
    await setVisibility("visible");
    await eventually("the read once shown", () => reads.length === seen + 1);
    expect(reads.every((m) => m === "GET")).toBe(true);
  });

  test("a takeover opened in the page sets a new master password that signs in as the grantor", async () => {
    const dave = await suite.registered("member", ada);
    const vault = await dave.vaults.create("Dave's", "personal");
    await dave.items.add(vault.vaultId, { name: "mail", fields: { password: "dave-pw-1" } });
    await dave.keys.trust(carol.account.userId, await carol.keys.own(), carol.account.email);
    const made = await dave.emergency.grant(carol.account.userId, { level: "takeover", waitHours: 24 });
    await carol.emergency.request(made.grantId);
    suite.server.clock.advance(24 * HOUR + 60_000);

    const q = await onEmergencyPage(carol);
    const row = receivedRow(q, dave);
    await refocusedUntil(
      q,
      "the takeover released",
      async () => (await row.getByRole("button", { name: "Open", exact: true }).count()) > 0,
    );
    await compareKey(q, dave);
    await row.getByRole("button", { name: "Open", exact: true }).click();
    const form = q.getByRole("form", { name: "Take the account over" });
    // The strength rule of a password change holds here too.
    await form.getByLabel("New master password", { exact: true }).fill("dave");
    await form.getByLabel("New master password, again").fill("dave");
    await form.getByRole("button", { name: `Take over ${dave.account.email}'s account` }).click();
    await form.getByRole("alert").filter({ hasText: "That master password is too weak." }).waitFor();
    await form.getByLabel("New master password", { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel("New master password, again").fill(NEW_PASSWORD);
    await form.getByRole("button", { name: `Take over ${dave.account.email}'s account` }).click();
    await q
      .getByRole("status")
      .filter({ hasText: `${dave.account.email}'s account is yours now` })
      .waitFor({ timeout: 60_000 });

    const again = new VaultClient({ baseUrl: suite.server.url });
    await again.login(dave.account.email, NEW_PASSWORD);
    expect((await again.items.list(vault.vaultId)).map((i) => i.fields.password)).toEqual(["dave-pw-1"]);
    // Carol's own login is untouched: still hers, and the spent grant gone from her list.
    await q.getByRole("button", { name: "Back to emergency access" }).click();
    await eventually("the spent grant leaves the list", async () => (await row.count()) === 0);
    expect(await q.locator("header .who").textContent()).toContain(carol.account.email);
    expect((await carol.emergency.list()).received.map((g) => g.grantorId)).not.toContain(dave.account.userId);
  });
});
