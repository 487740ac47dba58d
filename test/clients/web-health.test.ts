/**
 * The web vault's "Password health" page, in Debian's Chromium (playwright-core) against the real
 * service: items made through the SDK in two vaults, the report computed in the page with zxcvbn,
 * read as a person sees it, each listed login a link to its item, and no password on the page.
 * axe-core checks the page.
 */
import type { Page } from "playwright-core";
import { webVaultSuite } from "../helpers/web-vault";

jest.setTimeout(180_000);

const WEAK = "abc123";
const SHARED = "Tundra-Lantern-48-Quiver-Mosaic";
const UNIQUE = "Orbit-Velvet-93-Canyon-Whistle";
const OTHER = "Saffron-Glacier-17-Paddle-Ember";

describe("the web vault: password health", () => {
  const suite = webVaultSuite();
  async function logIn(p: Page, address: string) {
    await suite.logIn(p, address);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
  }
  const page = () => suite.page();

  test("weak and reused passwords listed per vault with why, each a link to its item; old ones past the age the browser is set to", async () => {
    const ada = await suite.registered();
    const team = await ada.vaults.create("Team");
    const home = await ada.vaults.create("Home", "personal");
    const router = await ada.items.add(team.vaultId, { name: "Router", fields: { username: "admin", password: WEAK } });
    await ada.items.add(team.vaultId, { name: "Mail", fields: { username: "ada", password: SHARED } });
    const wiki = await ada.items.add(team.vaultId, { name: "Wiki", fields: { username: "ada", password: UNIQUE } });
    await ada.items.add(team.vaultId, { name: "Door code", type: "note", fields: { notes: WEAK } });
    await ada.items.add(home.vaultId, { name: "Forum", fields: { username: "ada", password: SHARED } });
    await ada.items.add(home.vaultId, { name: "Library", fields: { username: "ada", password: OTHER } });

    const p = await page();
    await logIn(p, ada.account.email);
    await p.getByRole("link", { name: "Health" }).click();
    await p.getByRole("heading", { name: "Password health" }).waitFor();
    expect(await p.getByText(/^In all:/).textContent()).toBe("In all: 5 logins checked: 1 weak, 2 reused, 0 not changed in 365 days.");

    const teamList = p.getByRole("list", { name: "Logins to fix in Team" });
    expect(await p.getByRole("region", { name: "Team" }).locator("p").first().textContent()).toBe(
      "3 logins checked: 1 weak, 1 reused, 0 not changed in 365 days.",
    );
    expect(await teamList.getByRole("listitem").allTextContents()).toEqual([
      "Router weak (strength 0 of 4)",
      "Mail reused with Forum (in Home)",
    ]);
    expect(await p.getByRole("list", { name: "Logins to fix in Home" }).getByRole("listitem").allTextContents()).toEqual([
      "Forum reused with Mail (in Team)",
    ]);
    expect(await p.locator("main").textContent()).not.toMatch(new RegExp([WEAK, SHARED, UNIQUE, OTHER].join("|")));
    await suite.accessible(p, "health");

    await teamList.getByRole("link", { name: "Router" }).click();
    expect(new URL(p.url()).hash).toBe(`#/vault/${team.vaultId}/${router.itemId}`);
    await p.getByRole("region", { name: "Item Router" }).waitFor();

    // Every password written before now is old at an age of 0 days: the item's own date is given.
    await p.evaluate(`localStorage.setItem("vault.oldPasswordDays", "0")`);
    await p.getByRole("link", { name: "Health" }).click();
    await p.getByText("In all: 5 logins checked: 1 weak, 2 reused, 5 not changed in 0 days.").waitFor();
    const changed = await p.evaluate<string>(`new Date(${JSON.stringify(wiki.updatedAt)}).toLocaleDateString()`);
    expect(await teamList.getByRole("listitem").allTextContents()).toEqual([
      `Router weak (strength 0 of 4); not changed since ${changed}`,
      `Mail reused with Forum (in Home); not changed since ${changed}`,
      `Wiki not changed since ${changed}`,
    ]);
  });
});
