/**
 * The web vault as an app, in Debian's Chromium against the real service: the sidebar's lists
 * across vaults (all, favourites, a type, a tag, archived), a list beside the item chosen, the
 * vault's tabs on their own addresses, add and edit in a dialog, the keyboard shortcuts, and the
 * light and dark themes (axe-core on each).
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { webVaultSuite } from "../helpers/web-vault";
import { SCREENSHOTS, vaultTab } from "../helpers/browser";

jest.setTimeout(180_000);

describe("the web vault as an app", () => {
  const suite = webVaultSuite();
  async function logIn(p: Page, address: string) {
    await suite.logIn(p, address);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
  }
  const sidebar = (p: Page) => p.getByRole("navigation", { name: "Main" });
  const shot = (p: Page, name: string) => p.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  const listed = (p: Page) => p.getByRole("list", { name: "Items" }).locator("button .name").allInnerTexts();
  /** What this browser pinned for `userId` (the SDK's pin store in localStorage), if anything. */
  const pinned = async (p: Page, userId: string) =>
    JSON.parse((await p.evaluate<string | null>(`localStorage.getItem("vault.pins")`)) ?? "{}")[userId];

  test("the sidebar lists items across vaults (all, favourites, a type, a tag, archived); the one chosen shows beside the list", async () => {
    const ada = await suite.registered();
    const team = await ada.vaults.create("Team");
    const home = await ada.vaults.create("Home", "personal");
    await ada.items.add(team.vaultId, { name: "Router", fields: { username: "admin", password: "pw1" }, tags: ["Work/Servers"] });
    await ada.items.add(team.vaultId, { name: "Mail", fields: { username: "ada", password: "pw2" }, favorite: true });
    await ada.items.add(home.vaultId, { name: "Visa", type: "card", fields: { number: "4111111111111111" } });
    await ada.items.add(home.vaultId, { name: "Old wifi", type: "note", fields: { notes: "gone" }, archived: true });

    const p = await suite.page();
    await logIn(p, ada.account.email);
    await sidebar(p).getByRole("link", { name: "All items" }).click();
    await p.getByRole("heading", { name: "All items" }).waitFor();
    await p.getByRole("list", { name: "Items" }).getByText("Visa").waitFor();
    // Favourites first, then by name; the archived note apart.
    expect(await listed(p)).toEqual(["★ Mail", "Router", "Visa"]);
    await suite.accessible(p, "all items");

    // A secret revealed on one item is masked again on the next one chosen.
    const list = p.getByRole("list", { name: "Items" });
    await list.getByRole("button", { name: /Mail/ }).click();
    await p.getByRole("region", { name: "Item Mail" }).getByRole("button", { name: "Reveal password" }).click();
    await p.getByRole("region", { name: "Item Mail" }).getByTestId("password").getByText("pw2").waitFor();
    await list.getByRole("button", { name: /Router/ }).click();
    const detail = p.getByRole("region", { name: "Item Router" });
    await detail.getByTestId("username").getByText("admin").waitFor();
    expect(await detail.getByTestId("password").textContent()).not.toContain("pw1");
    await detail.getByRole("link", { name: "Work/Servers" }).waitFor();
    await shot(p, "all-items");
    // The list stays beside the item.
    expect(await p.getByRole("list", { name: "Items" }).isVisible()).toBe(true);
    await detail.getByRole("link", { name: "Open in Team" }).click();
    await p.getByRole("heading", { name: "Team" }).waitFor();
    // An edit keeps the tags (and a tag added in the form shows in the sidebar).
    await p.getByRole("region", { name: "Item Router" }).getByRole("button", { name: "Edit" }).click();
    const form = p.getByRole("dialog", { name: "Edit Router" });
    expect(await form.getByLabel("Tags, one a line").inputValue()).toBe("Work/Servers");
    await form.getByLabel("Username").fill("root");
    await form.getByLabel("Tags, one a line").fill("Work/Servers\nNetwork, office");
    await form.getByRole("button", { name: "Save item" }).click();
    await p.getByRole("region", { name: "Item Router" }).getByRole("link", { name: "Network, office" }).waitFor();
    await sidebar(p).getByRole("link", { name: "Network, office" }).waitFor();

    const lists: Array<[string, string, string[]]> = [
      ["Favourites", "Favourites", ["★ Mail"]],
      ["Cards", "Cards", ["Visa"]],
      ["Work/Servers", "Tag: Work/Servers", ["Router"]],
      ["Archived", "Archived", ["Old wifi"]],
    ];
    for (const [link, heading, names] of lists) {
      await sidebar(p).getByRole("link", { name: link }).click();
      await p.getByRole("heading", { name: heading }).waitFor();
      // The list redrawn for it (the heading can come a frame before its rows).
      await p.getByRole("list", { name: "Items" }).locator("button .name", { hasText: names[0]! }).first().waitFor();
      expect({ list: link, names: await listed(p) }).toEqual({ list: link, names });
    }
    // The list's own search.
    await sidebar(p).getByRole("link", { name: "All items" }).click();
    await p.getByLabel("Search all items").fill("rout");
    await p.getByRole("list", { name: "Items" }).getByText("Mail").waitFor({ state: "detached" });
    expect(await listed(p)).toEqual(["Router"]);
  });

  test("a vault's tabs have their own addresses; 'n' adds an item in a dialog that Escape closes; '/' goes to the search", async () => {
    const ada = await suite.registered();
    const team = await ada.vaults.create("Team");
    await ada.items.add(team.vaultId, { name: "Router", fields: { username: "admin", password: "pw1" } });
    const p = await suite.page();
    await logIn(p, ada.account.email);

    // An address names a tab: opened directly (a bookmark, a reload), it shows that tab.
    await p.goto(`/#/vault/${team.vaultId}/history`);
    await p.getByRole("heading", { name: "Member history" }).waitFor();
    expect(
      await p.getByRole("navigation", { name: "This vault" }).getByRole("link", { name: "Member history" }).getAttribute("aria-current"),
    ).toBe("page");
    await vaultTab(p, "Items");
    await p.getByRole("list", { name: "Items" }).getByText("Router").waitFor();

    await p.locator("body").press("n");
    const dialog = p.getByRole("dialog", { name: "New item" });
    await dialog.waitFor();
    expect(await p.evaluate("Boolean(document.activeElement.closest('dialog'))")).toBe(true);
    await suite.accessible(p, "new item dialog");
    await shot(p, "item-dialog");
    await p.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });

    await p.getByRole("button", { name: "Add item" }).click();
    await dialog.getByLabel("Name", { exact: true }).fill("Printer");
    await dialog.getByLabel("Password", { exact: true }).fill("toner");
    await dialog.getByRole("button", { name: "Save item" }).click();
    await dialog.waitFor({ state: "detached" });
    await p.getByRole("region", { name: "Item Printer" }).waitFor();

    await p.getByRole("region", { name: "Item Printer" }).getByRole("button", { name: "Edit" }).click();
    await p.getByRole("dialog", { name: "Edit Printer" }).getByLabel("Name", { exact: true }).fill("Printer 2");
    await p.getByRole("dialog", { name: "Edit Printer" }).getByRole("button", { name: "Save item" }).click();
    await p.getByRole("region", { name: "Item Printer 2" }).waitFor();

    await p.locator("body").press("/");
    expect(await p.evaluate("document.activeElement.id")).toBe("item-search");
    // Typed into a field, the letters are the field's, not shortcuts.
    await p.keyboard.type("n");
    expect(await p.getByRole("dialog").count()).toBe(0);
  });

  test("Your key lists each colleague's key: a member compares one, a wrong fingerprint pins nothing, the right one is pinned as checked", async () => {
    const ada = await suite.registered();
    const bob = await suite.registered("member", ada);
    const p = await suite.page();
    await logIn(p, bob.account.email);
    await sidebar(p).getByRole("link", { name: "Your key" }).click();
    const state = p.getByTestId(`trust-${ada.account.email}`);
    await state.waitFor();
    expect(await state.textContent()).toMatch(/not compared/);
    await suite.accessible(p, "your key with colleagues");

    const { current } = await bob.keys.fingerprint(ada.account.userId);
    const field = p.getByLabel(`Fingerprint ${ada.account.email} reads to you`);
    await field.fill(current.replace(/^..../, "ffff"));
    await p.getByRole("button", { name: `Mark ${ada.account.email} as checked` }).click();
    await p.getByRole("alert").filter({ hasText: "That is not the fingerprint the server shows" }).waitFor();
    expect((await pinned(p, ada.account.userId))?.via).not.toBe("checked");

    await field.fill(current);
    await p.getByRole("button", { name: `Mark ${ada.account.email} as checked` }).click();
    await state.getByText("checked: you compared it").waitFor();
    expect(await pinned(p, ada.account.userId)).toMatchObject({ fingerprint: current, via: "checked" });
  });

  test("People shows each colleague's key fingerprint and whether this device checked it: a wrong one typed pins nothing, the right one marks it checked", async () => {
    const ada = await suite.registered();
    const bob = await suite.registered("member", ada);
    const who = bob.account.email;
    const p = await suite.page();
    await logIn(p, ada.account.email);
    await sidebar(p).getByRole("link", { name: "People" }).click();
    const row = p.getByRole("row").filter({ hasText: who });
    const state = row.getByTestId(`trust-${who}`);
    await state.waitFor();
    const { current } = await ada.keys.fingerprint(bob.account.userId);
    await row.getByTestId(`fingerprint-${who}`).getByText(current, { exact: true }).waitFor();
    expect(await state.textContent()).toMatch(/not compared/);
    await suite.accessible(p, "people with their keys");

    // One digit off, as a misheard fingerprint would be: refused, and nothing pinned as checked.
    const misheard = current.replace(/^./, current.startsWith("0") ? "1" : "0");
    await row.getByLabel(`Fingerprint ${who} reads to you`).fill(misheard);
    await row.getByRole("button", { name: `Mark ${who} as checked` }).click();
    await row.getByRole("alert").filter({ hasText: "That is not the fingerprint the server shows" }).waitFor();
    expect((await pinned(p, bob.account.userId))?.via).not.toBe("checked");
    expect(await state.textContent()).toMatch(/not compared/);

    await row.getByLabel(`Fingerprint ${who} reads to you`).fill(current);
    await row.getByRole("button", { name: `Mark ${who} as checked` }).click();
    await state.getByText("checked: you compared it").waitFor();
    expect(await pinned(p, bob.account.userId)).toMatchObject({ fingerprint: current, via: "checked" });
    // Checked, there is nothing left to compare; "Your key" says the same of bob.
    expect(await row.getByRole("button", { name: `Mark ${who} as checked` }).count()).toBe(0);
    await sidebar(p).getByRole("link", { name: "Your key" }).click();
    await p.getByTestId(`trust-${who}`).getByText("checked: you compared it").waitFor();
  });

  test("the Trash page: every vault's trash under its name, readable (axe); an item restored from it opens in its vault", async () => {
    const ada = await suite.registered();
    const team = await ada.vaults.create("Team");
    const home = await ada.vaults.create("Home", "personal");
    const router = await ada.items.add(team.vaultId, { name: "Router", fields: { username: "admin", password: "pw1" } });
    await ada.items.add(team.vaultId, { name: "Mail", fields: { username: "ada", password: "pw2" } });
    const visa = await ada.items.add(home.vaultId, { name: "Visa", type: "card", fields: { number: "4111111111111111" } });
    await ada.items.delete(team.vaultId, router.itemId);
    await ada.items.delete(home.vaultId, visa.itemId);

    const p = await suite.page();
    await logIn(p, ada.account.email);
    await sidebar(p).getByRole("link", { name: "Trash", exact: true }).click();
    await p.getByRole("heading", { name: "Trash", level: 1 }).waitFor();
    const teamTrash = p.getByRole("list", { name: "Trash of Team" });
    await teamTrash.getByText("Router", { exact: true }).waitFor();
    await p.getByRole("list", { name: "Trash of Home" }).getByText("Visa", { exact: true }).waitFor();
    expect(await teamTrash.getByRole("listitem").count()).toBe(1);
    await suite.accessible(p, "trash");

    await teamTrash.getByRole("button", { name: "Restore Router" }).click();
    await p.getByRole("region", { name: "Item Router" }).waitFor();
    expect((await ada.items.list(team.vaultId)).map((i) => i.name).sort()).toEqual(["Mail", "Router"]);
  });

  test("dark theme: chosen in the header, kept after a reload, and readable (axe); 'Like the system' follows the system", async () => {
    const ada = await suite.registered();
    const team = await ada.vaults.create("Team");
    await ada.items.add(team.vaultId, { name: "Router", fields: { username: "admin", password: "pw1" } });
    const p = await suite.page();
    await logIn(p, ada.account.email);
    const background = () => p.evaluate<string>("getComputedStyle(document.body).backgroundColor");
    expect(await background()).toBe("rgb(255, 255, 255)");

    await p.getByLabel("Theme").selectOption("dark");
    expect(await background()).toBe("rgb(20, 23, 28)");
    await sidebar(p).getByRole("link", { name: "Team" }).click();
    await p
      .getByRole("list", { name: "Items" })
      .getByRole("button", { name: /Router/ })
      .click();
    await p.getByRole("region", { name: "Item Router" }).waitFor();
    await suite.accessible(p, "vault, dark");
    await shot(p, "vault-dark");
    await p.reload();
    expect(await background()).toBe("rgb(20, 23, 28)");
    await suite.accessible(p, "login or unlock, dark");

    // "Like the system": the system says dark, so dark.
    await p.evaluate(`localStorage.removeItem("vault.theme")`);
    await p.emulateMedia({ colorScheme: "dark" });
    await p.reload();
    expect(await background()).toBe("rgb(20, 23, 28)");
    await p.emulateMedia({ colorScheme: "light" });
    expect(await background()).toBe("rgb(255, 255, 255)");
  });
});
