/**
 * Files on items in the web vault, in Debian's Chromium against the real service (its largest file
 * set to 4 MiB): a person attaches files (one of 3 MiB: several chunks, its progress shown, the
 * control off meanwhile), downloads one byte for byte, keeps them through an edit and removes one
 * after a confirmation; the item's history still offers it. A second member downloads a file the
 * first attached, from the item and from the trash. A file past the limit is refused in the
 * server's words; a chunk the server swaps is refused in the app's, and nothing is saved.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Locator, Page, Route } from "playwright-core";
import { webVaultSuite } from "../helpers/web-vault";
import { SCREENSHOTS, vaultTab } from "../helpers/browser";
import { eventually } from "../helpers/wait";

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Clicks `button` and answers the bytes the browser saved, with the name it saved them under. */
async function downloaded(p: Page, button: Locator): Promise<{ name: string; sha: string }> {
  const [download] = await Promise.all([p.waitForEvent("download"), button.click()]);
  const file = await download.path();
  return { name: download.suggestedFilename(), sha: sha256(fs.readFileSync(file)) };
}

/** Holds the page's chunk uploads until `release(index)` lets that chunk's (and `release()` every one's) go. */
async function holdChunkUploads(p: Page) {
  const waiting: Array<{ index: number; route: Route }> = [];
  let open: (index: number) => boolean = () => false;
  await p.route("**/attachments/*/chunks/*", async (route) => {
    const index = Number(route.request().url().split("/").pop());
    if (route.request().method() !== "PUT" || open(index)) return route.continue();
    waiting.push({ index, route });
  });
  const release = async (index?: number) => {
    const before = open;
    open = (i) => before(i) || index === undefined || i === index;
    for (const w of waiting.splice(0)) {
      if (open(w.index)) await w.route.continue();
      else waiting.push(w);
    }
  };
  return { release, waiting: () => waiting.length };
}

describe("the web vault: files on items", () => {
  const suite = webVaultSuite({ env: { ATTACHMENT_MAX_BYTES: String(4 * MiB) } });

  async function logIn(p: Page, address: string) {
    await suite.logIn(p, address);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
  }

  test("the files code is not part of the first page: it loads once an item is shown", async () => {
    const web = path.resolve(__dirname, "../../dist/web");
    const page = fs.readFileSync(path.join(web, "index.html"), "utf8");
    const first = [...page.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(first.length).toBeGreaterThan(0);
    for (const f of first) expect([f, fs.readFileSync(path.join(web, f), "utf8").includes("Attach a file")]).toEqual([f, false]);
    const chunks = fs.readdirSync(path.join(web, "assets")).filter((f) => f.endsWith(".js"));
    expect(chunks.filter((f) => fs.readFileSync(path.join(web, "assets", f), "utf8").includes("Attach a file"))).toHaveLength(1);
  });

  test("attach (progress shown, no second upload meanwhile), download byte for byte, keep through an edit, remove; the history keeps it", async () => {
    const ada = await suite.registered();
    const vault = await ada.vaults.create("Team");
    const item = await ada.items.add(vault.vaultId, { name: "Server", fields: { username: "root", password: "pw-server" } });
    const big = randomBytes(3 * MiB);
    const p = await suite.page();
    await logIn(p, ada.account.email);
    await p.goto(`/#/vault/${vault.vaultId}/${item.itemId}`);
    const detail = p.getByRole("region", { name: "Item Server" });
    const files = detail.getByRole("list", { name: "Files of Server" });

    await detail.getByLabel("Attach a file").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.alloc(2048, 65) });
    await files.getByText("notes.txt").waitFor();
    await files.getByText("2.0 KiB").waitFor();

    // While the 3 MiB file's chunks are held: its progress, the control off, Remove off.
    const held = await holdChunkUploads(p);
    await detail.getByLabel("Attach a file").setInputFiles({ name: "keys.bin", mimeType: "application/octet-stream", buffer: big });
    await detail.getByRole("status").filter({ hasText: "Uploading keys.bin: 0 bytes of 3.0 MiB" }).waitFor();
    await eventually("chunks are held", async () => held.waiting() > 0);
    expect(await detail.getByLabel("Attach a file").isDisabled()).toBe(true);
    expect(await detail.getByRole("button", { name: "Remove notes.txt", exact: true }).isDisabled()).toBe(true);
    await held.release(0);
    await detail.getByRole("status").filter({ hasText: "Uploading keys.bin: 1.0 MiB of 3.0 MiB" }).waitFor();
    await held.release();
    await detail.getByRole("status").filter({ hasText: "Attached keys.bin." }).waitFor();
    await files.getByText("3.0 MiB").waitFor();
    expect(await detail.getByLabel("Attach a file").isDisabled()).toBe(false);
    const [written] = await ada.items.list(vault.vaultId);
    expect(written!.attachments?.map((a) => [a.name, a.size, a.type])).toEqual([
      ["notes.txt", 2048, "text/plain"],
      ["keys.bin", 3 * MiB, "application/octet-stream"],
    ]);

    const before = p.url();
    expect(await downloaded(p, files.getByRole("button", { name: "Download keys.bin", exact: true }))).toEqual({
      name: "keys.bin",
      sha: sha256(big),
    });
    expect(p.url()).toBe(before);
    await suite.accessible(p, "item with files");
    await p.screenshot({ path: path.join(SCREENSHOTS, "item-files.png") });

    // An edit in the form keeps the files.
    await detail.getByRole("button", { name: "Edit" }).click();
    const form = p.getByRole("dialog", { name: "Edit Server" });
    await form.getByLabel("Username").fill("admin");
    await form.getByRole("button", { name: "Save item" }).click();
    await detail.getByTestId("username").getByText("admin").waitFor();
    expect((await ada.items.list(vault.vaultId))[0]!.attachments?.map((a) => a.name)).toEqual(["notes.txt", "keys.bin"]);

    // Remove asks first: Cancel keeps the file, Remove the file takes it off.
    await files.getByRole("button", { name: "Remove keys.bin", exact: true }).click();
    await p.getByRole("dialog", { name: "Remove keys.bin" }).getByRole("button", { name: "Cancel" }).click();
    expect(await ada.items.list(vault.vaultId).then((l) => l[0]!.attachments?.length)).toBe(2);
    await files.getByRole("button", { name: "Remove keys.bin", exact: true }).click();
    await p.getByRole("dialog", { name: "Remove keys.bin" }).getByRole("button", { name: "Remove the file" }).click();
    await eventually("the file is taken off", async () => (await files.getByText("keys.bin").count()) === 0);
    expect((await ada.items.list(vault.vaultId))[0]!.attachments?.map((a) => a.name)).toEqual(["notes.txt"]);

    // The revision before still names it, and it downloads from there.
    await p.getByRole("button", { name: "Show history" }).click();
    const history = p.getByRole("region", { name: "History of Server" });
    const revision = history.getByRole("list", { name: "Files of revision 4" });
    await revision.getByText("keys.bin").waitFor();
    expect(await downloaded(p, revision.getByRole("button", { name: "Download keys.bin", exact: true }))).toEqual({
      name: "keys.bin",
      sha: sha256(big),
    });
    expect(await history.getByRole("list", { name: "Files of revision 1" }).count()).toBe(0);
    await p.screenshot({ path: path.join(SCREENSHOTS, "history-files.png"), fullPage: true });
  });

  test("a second member of the shared vault downloads a file the first attached, from the item and from the trash", async () => {
    const ada = await suite.registered();
    const bob = await suite.registered("member", ada);
    const vault = await ada.vaults.create("Shared", "shared");
    await ada.members.share(vault.vaultId, bob.account.userId, "member");
    const item = await ada.items.add(vault.vaultId, { name: "Contract", type: "note", fields: { notes: "signed copy attached" } });
    const pdf = randomBytes(MiB + 4321);
    await ada.attachments.upload(vault.vaultId, item.itemId, "contract.pdf", pdf, { type: "application/pdf" });

    const p = await suite.page();
    await logIn(p, bob.account.email);
    await p.goto(`/#/vault/${vault.vaultId}/${item.itemId}`);
    const files = p.getByRole("region", { name: "Item Contract" }).getByRole("list", { name: "Files of Contract" });
    await files.getByText("1.0 MiB").waitFor();
    expect(await downloaded(p, files.getByRole("button", { name: "Download contract.pdf" }))).toEqual({
      name: "contract.pdf",
      sha: sha256(pdf),
    });

    await ada.items.delete(vault.vaultId, item.itemId);
    await vaultTab(p, "Trash");
    const trashed = p.getByRole("list", { name: "Files of Contract" });
    expect(await downloaded(p, trashed.getByRole("button", { name: "Download contract.pdf" }))).toEqual({
      name: "contract.pdf",
      sha: sha256(pdf),
    });
    await suite.accessible(p, "trash with files");
    await p.screenshot({ path: path.join(SCREENSHOTS, "trash-files.png") });
  });

  test("a file past the server's limit is refused in its words; a chunk the server swaps is refused, and nothing is saved", async () => {
    const ada = await suite.registered();
    const vault = await ada.vaults.create("Team");
    const item = await ada.items.add(vault.vaultId, { name: "Backup", type: "note", fields: { notes: "keys" } });
    await ada.attachments.upload(vault.vaultId, item.itemId, "a.bin", randomBytes(1000));
    const withB = await ada.attachments.upload(vault.vaultId, item.itemId, "b.bin", randomBytes(1000));
    const p = await suite.page();
    await logIn(p, ada.account.email);
    await p.goto(`/#/vault/${vault.vaultId}/${item.itemId}`);
    const detail = p.getByRole("region", { name: "Item Backup" });

    await detail
      .getByLabel("Attach a file")
      .setInputFiles({ name: "huge.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(4 * MiB + 1) });
    await detail
      .getByRole("alert")
      .filter({
        hasText: `The file was not attached: A file of ${4 * MiB + 1} bytes is larger than the ${4 * MiB} bytes one attachment may hold`,
      })
      .waitFor();
    expect((await ada.items.list(vault.vaultId))[0]!.attachments?.map((a) => a.name)).toEqual(["a.bin", "b.bin"]);

    // The server hands over b.bin's chunk for a.bin's.
    const [a, b] = withB.attachments!;
    await p.route(`**/attachments/${a!.id}/chunks/0`, async (route) => {
      const real = await route.fetch({ url: route.request().url().replace(a!.id, b!.id) });
      await route.fulfill({ response: real });
    });
    let saved = 0;
    p.on("download", () => saved++);
    await detail.getByRole("button", { name: "Download a.bin" }).click();
    await detail.getByRole("alert").filter({ hasText: "A part of this file does not open with the item's key" }).waitFor();
    expect(saved).toBe(0);
  });
});
