/**
 * Passkeys on logins in the web vault, in Debian's Chromium against the real service: a login
 * holding a passkey (made by the SDK's authenticator) shows its site and account and never its
 * private key; an edit of the item keeps the passkey byte for byte; the form's Remove takes it off.
 */
import type { Page } from "playwright-core";
import { webVaultSuite } from "../helpers/web-vault";
import { eventually } from "../helpers/wait";
import { createPasskey } from "../../sdk/passkeys";

jest.setTimeout(180_000);

describe("the web vault: passkeys on logins", () => {
  const suite = webVaultSuite();

  async function madePasskey() {
    const { passkey } = await createPasskey(
      {
        origin: "https://login.example.com",
        rp: { id: "example.com", name: "Example" },
        user: { id: new Uint8Array([7, 7, 7]), name: "ada@example.com", displayName: "Ada" },
        challenge: new Uint8Array(32).fill(1),
        pubKeyCredParams: [{ type: "public-key", alg: -7 }],
      },
      [],
    );
    return passkey;
  }

  const openItem = async (p: Page, vaultId: string, itemId: string, name: string) => {
    await p.goto(`/#/vault/${vaultId}/${itemId}`);
    return p.getByRole("region", { name: `Item ${name}` });
  };

  test("shown by its site and account, never its key; an edit keeps it; Remove takes it off", async () => {
    const ada = await suite.registered();
    const vault = await ada.vaults.create("Team");
    const passkey = await madePasskey();
    const item = await ada.items.add(vault.vaultId, {
      name: "Example",
      fields: { username: "ada@example.com", password: "pw-example" },
      urls: [{ url: "https://example.com", match: "domain" }],
      passkeys: [passkey],
    });
    const p = await suite.page();
    await suite.logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();

    let detail = await openItem(p, vault.vaultId, item.itemId, "Example");
    await detail.getByText("ada@example.com at example.com").waitFor();
    expect(await detail.textContent()).toMatch(/used 0 times/);
    expect(await p.content()).not.toContain(passkey.privateKey.slice(10, 40));
    await suite.accessible(p, "item with a passkey");

    await detail.getByRole("button", { name: "Edit" }).click();
    let form = p.getByRole("dialog", { name: "Edit Example" });
    await form.getByRole("group", { name: "Passkeys" }).getByText("ada@example.com at example.com").waitFor();
    await form.getByLabel("Name", { exact: true }).fill("Example account");
    await form.getByRole("button", { name: "Save item" }).click();
    detail = p.getByRole("region", { name: "Item Example account" });
    await detail.getByText("ada@example.com at example.com").waitFor();
    const [edited] = await ada.items.list(vault.vaultId);
    expect(edited!.name).toBe("Example account");
    expect(edited!.passkeys).toEqual([passkey]);

    await detail.getByRole("button", { name: "Edit" }).click();
    form = p.getByRole("dialog", { name: "Edit Example account" });
    await form.getByRole("button", { name: "Remove the passkey for ada@example.com at example.com" }).click();
    await form.getByRole("button", { name: "Save item" }).click();
    await eventually("the passkey is removed", async () => (await ada.items.list(vault.vaultId))[0]!.revision === 3);
    expect((await ada.items.list(vault.vaultId))[0]!.passkeys).toBeUndefined();
    await eventually(
      "the item shows no passkey",
      async () => (await p.getByRole("region", { name: "Item Example account" }).getByText("at example.com").count()) === 0,
    );
  });
});
