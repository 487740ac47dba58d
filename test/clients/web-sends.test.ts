/**
 * Sends in the web vault, in Debian's Chromium against the real service. A member makes sends on
 * the "Sends" page; a browser with no account opens each link: a page load opens nothing, "Open"
 * does (asking for the password, refusing a wrong one), showing the text or downloading the file
 * byte for byte. A one-view send opens once; Delete ends a link; a policy that forbids sends is
 * said so; a server that answers with another send's header is refused and nothing is shown; and
 * no request either browser sends carries the link's secret.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Locator, Page, Request } from "playwright-core";
import { openSend, parseSendLink, type VaultClient } from "../../sdk";
import { toBase64, toBase64Url } from "../../protocol/encoding";
import { webVaultSuite } from "../helpers/web-vault";
import { startDishonestProxy, type DishonestProxy } from "../helpers/dishonest-proxy";
import { SCREENSHOTS } from "../helpers/browser";
import { eventually } from "../helpers/wait";

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const GONE = "This send does not exist any more: it expired, was deleted, or was opened as many times as it allows.";
const TAMPERED = "This send does not open with its link's key: the server handed over something else";
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Clicks `button` and answers the bytes the browser saved, with the name it saved them under. */
async function downloaded(p: Page, button: Locator): Promise<{ name: string; sha: string }> {
  const [download] = await Promise.all([p.waitForEvent("download"), button.click()]);
  return { name: download.suggestedFilename(), sha: sha256(fs.readFileSync(await download.path())) };
}

/** What a send's form is given; a text, or a file. */
interface SendForm {
  text?: string;
  file?: { name: string; mimeType: string; buffer: Buffer };
  title?: string;
  maxViews?: number;
  password?: string;
  showEmail?: boolean;
}

/** Fills the "Make a send" form as a person does (once a page) and answers the link it shows. */
async function makeSend(p: Page, send: SendForm): Promise<string> {
  const form = p.getByRole("form", { name: "Make a send" });
  if (send.file) {
    await form.getByLabel("A file").check();
    await form.getByLabel("File", { exact: true }).setInputFiles(send.file);
  } else await form.getByLabel("Text", { exact: true }).fill(send.text ?? "");
  if (send.title) await form.getByLabel("Title (optional)").fill(send.title);
  if (send.maxViews) await form.getByLabel("Max views (optional)").fill(String(send.maxViews));
  if (send.password) await form.getByLabel("Password (optional)").fill(send.password);
  if (send.showEmail) await form.getByLabel("Show my email to the recipient").check();
  await form.getByRole("button", { name: "Make the send" }).click();
  return (await p.getByTestId("send-link").textContent())!;
}

/** The "Open" button of a send's page. */
const openButton = (p: Page) => p.getByRole("button", { name: "Open", exact: true });

/** The secret of a link in each form a careless client might send it: as in the link, base64 and hex. */
function secretForms(link: string): string[] {
  const secret = parseSendLink(link)!.secret;
  return [toBase64Url(secret), toBase64(secret).replace(/=+$/, ""), Buffer.from(secret).toString("hex")];
}

describe("the web vault: sends", () => {
  const suite = webVaultSuite({ env: { SENDS: "on" } });

  /** A member signed in on the Sends page, reached from the navigation. */
  async function onSendsPage(member: VaultClient, baseURL?: string): Promise<Page> {
    const p = await suite.page(baseURL ? { baseURL } : {});
    await suite.logIn(p, member.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sends", exact: true }).click();
    await p.getByRole("heading", { name: "Sends", level: 1 }).waitFor();
    return p;
  }

  /** A browser of its own with no account, the link opened in it (nothing clicked yet). */
  async function stranger(link: string, baseURL?: string): Promise<Page> {
    const q = await suite.page(baseURL ? { baseURL } : {});
    await q.goto(link);
    await q.getByRole("heading", { name: "Someone sent you a secret" }).waitFor();
    return q;
  }

  test("the send pages are not part of the first page: each loads when it is first shown", () => {
    const web = path.resolve(__dirname, "../../dist/web");
    const page = fs.readFileSync(path.join(web, "index.html"), "utf8");
    const first = [...page.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(first.length).toBeGreaterThan(0);
    const holding = (text: string) =>
      fs
        .readdirSync(path.join(web, "assets"))
        .filter((f) => f.endsWith(".js") && fs.readFileSync(path.join(web, "assets", f), "utf8").includes(text));
    for (const text of ["Someone sent you a secret", "Make the send"]) {
      expect(holding(text)).toHaveLength(1);
      expect(first.filter((f) => holding(text).includes(f.replace(/^assets\//, "")))).toEqual([]);
    }
  });

  test("a text send with a password: the page load opens nothing, the password is asked for, a wrong one refused, the right one shows the text", async () => {
    const ada = await suite.registered();
    const p = await onSendsPage(ada);
    const link = await makeSend(p, {
      text: "The door code is 4711\nthen press #",
      title: "Door code",
      password: "blue kettle 42",
      showEmail: true,
    });
    expect(link.startsWith(`${suite.origin}/#/send/`)).toBe(true);
    await p.getByText("Give the password apart from the link").waitFor();
    await suite.accessible(p, "sends, a send made");
    await p.screenshot({ path: path.join(SCREENSHOTS, "send-made.png"), fullPage: true });

    const q = await stranger(link);
    await q.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.origin });
    await suite.accessible(q, "a send's link, before Open");
    // Loaded and left alone, the page has asked the server nothing about the send.
    await q.waitForLoadState("networkidle");
    expect(await q.getByLabel("Password").count()).toBe(0);
    const [made] = await ada.sends.list();
    expect(made).toMatchObject({ title: "Door code", kind: "text", hasPassword: true, views: 0 });

    await openButton(q).click();
    await q.getByLabel("Password").waitFor();
    // Asked for the password: still no view taken.
    expect((await ada.sends.list())[0]!.views).toBe(0);
    await q.getByLabel("Password").fill("blue kettle 41");
    await openButton(q).click();
    await q.getByRole("alert").filter({ hasText: "That password does not open this send." }).waitFor();
    await q.getByLabel("Password").fill("blue kettle 42");
    await openButton(q).click();

    await q.getByRole("heading", { name: "Door code" }).waitFor();
    await q.getByText(`The sender says they are ${ada.account.email}.`).waitFor();
    const text = q.getByLabel("The text");
    expect(await text.inputValue()).toBe("The door code is 4711\nthen press #");
    expect(await text.isEditable()).toBe(false);
    await q.getByRole("button", { name: "Copy", exact: true }).click();
    await q.getByRole("status").filter({ hasText: "Copied." }).waitFor();
    expect(await q.evaluate("navigator.clipboard.readText()")).toBe("The door code is 4711\nthen press #");
    expect(await q.getByTestId("send-left").textContent()).toMatch(
      /^The server says it expires .+\. Its link opens it again until then\.$/,
    );
    expect((await ada.sends.list())[0]!.views).toBe(1);
    // No login of any kind was made or kept in this browser.
    expect(await q.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('vault.'))")).toEqual([]);
    await suite.accessible(q, "a send, opened");
    await q.screenshot({ path: path.join(SCREENSHOTS, "send-opened.png"), fullPage: true });
  });

  test("a file send opens in a browser with no account and downloads byte for byte", async () => {
    const ada = await suite.registered();
    const p = await onSendsPage(ada);
    const report = randomBytes(2 * MiB + 4321);
    const link = await makeSend(p, { file: { name: "report.pdf", mimeType: "application/pdf", buffer: report } });
    await p.getByText("Anyone who has the link can open it").waitFor();

    const q = await stranger(link);
    await q.waitForLoadState("networkidle");
    expect((await ada.sends.list())[0]!.views).toBe(0);
    await openButton(q).click();
    await q.getByRole("heading", { name: "report.pdf" }).waitFor();
    await q.getByText("The sender did not say who they are.").waitFor();
    await q.getByText("2.0 MiB").waitFor();
    const before = q.url();
    expect(await downloaded(q, q.getByRole("button", { name: "Download report.pdf" }))).toEqual({
      name: "report.pdf",
      sha: sha256(report),
    });
    expect(q.url()).toBe(before);
  });

  test("a one-view send: the first Open shows it; after a reload, Open says it does not exist any more", async () => {
    const ada = await suite.registered();
    const p = await onSendsPage(ada);
    const link = await makeSend(p, { text: "once only", title: "Once", maxViews: 1 });
    await p.getByText(/Its link opens it, 1 time until/).waitFor();

    const q = await stranger(link);
    await openButton(q).click();
    expect(await q.getByLabel("The text").inputValue()).toBe("once only");
    await q.getByTestId("send-left").filter({ hasText: "The server says that was its last view: its link opens nothing more." }).waitFor();

    await q.reload();
    await openButton(q).click();
    await q.getByRole("alert").filter({ hasText: GONE }).waitFor();
    expect(await q.getByLabel("The text").count()).toBe(0);
  });

  test("signed in, a colleague's link opens inside the app and leaves the login as it was; after a reload, before the lock screen", async () => {
    const ada = await suite.registered();
    const bob = await suite.registered("member", ada);
    const sent = await bob.sends.create({ text: "for ada" }, { title: "Hello", showEmail: true });
    const p = await suite.page();
    await suite.logIn(p, ada.account.email);
    await p.getByRole("heading", { name: "Your vaults" }).waitFor();
    const kept = await p.evaluate("localStorage.getItem('vault.session')");
    const toLink = `location.hash = ${JSON.stringify(new URL(sent.link).hash)}`;
    await p.evaluate(toLink);
    await p.getByRole("heading", { name: "Someone sent you a secret" }).waitFor();
    // Inside the app: its header and navigation stay.
    await p.getByRole("button", { name: "Lock", exact: true }).waitFor();
    await openButton(p).click();
    expect(await p.getByLabel("The text").inputValue()).toBe("for ada");
    await p.getByText(`The sender says they are ${bob.account.email}.`).waitFor();
    await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sends", exact: true }).click();
    await p.getByText("No sends yet.").waitFor();

    // A reload keeps the login locked: the link still opens without it, and the lock screen is where it was.
    await p.evaluate(toLink);
    await p.getByRole("heading", { name: "Someone sent you a secret" }).waitFor();
    await p.reload();
    await openButton(p).click();
    expect(await p.getByLabel("The text").inputValue()).toBe("for ada");
    await p.evaluate(`location.hash = "#/vaults"`);
    await p.getByRole("button", { name: "Unlock", exact: true }).waitFor();
    expect(await p.evaluate("localStorage.getItem('vault.session')")).toBe(kept);
    expect((await bob.sends.list())[0]!.views).toBe(2);
  });

  test("the list shows the member's sends (a used-up one so marked); Copy link; Delete asks, then the link opens nothing", async () => {
    const ada = await suite.registered();
    const used = await ada.sends.create({ text: "gone already" }, { title: "Spent", maxViews: 1 });
    await openSend(used.link, { apiUrl: suite.server.url });
    const p = await onSendsPage(ada);
    await p.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.origin });
    const link = await makeSend(p, { text: "wifi: hunter2", title: "Wifi", maxViews: 3, password: "pass phrase" });

    const list = p.getByRole("list", { name: "Your sends" });
    const wifi = list.getByRole("listitem").filter({ hasText: "Wifi" });
    await wifi.waitFor();
    for (const text of ["Text", "0 of 3 views", "Password: yes", "Expires "])
      await wifi.getByText(text, { exact: text !== "Expires " }).waitFor();
    expect(await wifi.getByText("used up").count()).toBe(0);
    const spent = list.getByRole("listitem").filter({ hasText: "Spent" });
    for (const text of ["1 of 1 view", "Password: no", "used up"]) await spent.getByText(text, { exact: true }).waitFor();

    await wifi.getByRole("button", { name: "Copy link of Wifi" }).click();
    await wifi.getByRole("status").filter({ hasText: "Copied." }).waitFor();
    expect(await p.evaluate("navigator.clipboard.readText()")).toBe(link);
    await suite.accessible(p, "sends, the list");
    await p.screenshot({ path: path.join(SCREENSHOTS, "sends.png"), fullPage: true });

    await wifi.getByRole("button", { name: "Delete Wifi" }).click();
    await p.getByRole("dialog", { name: "Delete Wifi" }).getByRole("button", { name: "Cancel" }).click();
    expect((await ada.sends.list()).map((s) => s.title).sort()).toEqual(["Spent", "Wifi"]);
    await wifi.getByRole("button", { name: "Delete Wifi" }).click();
    await p.getByRole("dialog", { name: "Delete Wifi" }).getByRole("button", { name: "Delete the send" }).click();
    await eventually("the send leaves the list", async () => (await wifi.count()) === 0);
    expect((await ada.sends.list()).map((s) => s.title)).toEqual(["Spent"]);

    // Gone before its password is asked for.
    const q = await stranger(link);
    await openButton(q).click();
    await q.getByRole("alert").filter({ hasText: GONE }).waitFor();
    expect(await q.getByLabel("Password").count()).toBe(0);
  });

  test("an organization that forbids sends: the form says so", async () => {
    const ada = await suite.registered();
    const { enforced: _enforced, clientOnly: _clientOnly, ...stored } = await ada.factors.policies();
    await ada.factors.setPolicies({ ...stored, sendsForbidden: true });
    const p = await onSendsPage(ada);
    const form = p.getByRole("form", { name: "Make a send" });
    await form.getByLabel("Text", { exact: true }).fill("not allowed");
    await form.getByRole("button", { name: "Make the send" }).click();
    await form.getByRole("alert").filter({ hasText: "Your organization does not allow sends." }).waitFor();
    expect(await ada.sends.list()).toEqual([]);
  });

  /** `run` against a dishonest server in front of the service; the pages it lists close before that server does. */
  async function behindProxy(run: (proxy: DishonestProxy, pages: Page[]) => Promise<void>): Promise<void> {
    const proxy = await startDishonestProxy(suite.origin);
    const pages: Page[] = [];
    try {
      await run(proxy, pages);
    } finally {
      for (const page of pages) await page.close().catch(() => undefined);
      await proxy.close();
    }
  }

  test("a server that answers the open with another send's header: the page says so and shows nothing of either", async () => {
    await behindProxy(async (proxy, pages) => {
      const ada = await suite.registered();
      const real = await ada.sends.create({ text: "the real secret" }, { title: "Real" });
      const decoy = await ada.sends.create({ text: "the decoy" }, { title: "Decoy" });
      let decoyHeader = "";
      proxy.edit = (_method, path, body) => {
        if (path === `/sends/${decoy.sendId}/open`) decoyHeader = body.header;
        return body;
      };
      await openSend(decoy.link, { apiUrl: proxy.url });
      expect(decoyHeader).not.toBe("");
      proxy.edit = (_method, path, body, status) =>
        status === 200 && path === `/sends/${real.sendId}/open` ? { ...body, header: decoyHeader } : body;

      const atProxy = real.link.replace(suite.origin, proxy.origin);
      const q = await stranger(atProxy, proxy.origin);
      pages.push(q);
      await openButton(q).click();
      await q.getByRole("alert").filter({ hasText: TAMPERED }).waitFor();
      expect(await q.getByLabel("The text").count()).toBe(0);
      for (const text of ["the real secret", "the decoy", "Decoy"]) expect(await q.getByText(text).count()).toBe(0);
    });
  });

  test("neither the sender's browser nor the recipient's sends the link's secret, in any request or to the server", async () => {
    await behindProxy(async (proxy, pages) => {
      const ada = await suite.registered();
      const p = await onSendsPage(ada, proxy.origin);
      pages.push(p);
      const seen: Request[] = [];
      p.on("request", (r) => seen.push(r));
      const link = await makeSend(p, { text: "seen by one", password: "pw for one" });
      expect(link.startsWith(`${proxy.origin}/#/send/`)).toBe(true);
      const q = await suite.page({ baseURL: proxy.origin });
      pages.push(q);
      q.on("request", (r) => seen.push(r));
      await q.goto(link);
      await openButton(q).click();
      await q.getByLabel("Password").fill("pw for one");
      await openButton(q).click();
      expect(await q.getByLabel("The text").inputValue()).toBe("seen by one");
      await p.getByRole("list", { name: "Your sends" }).getByRole("listitem").filter({ hasText: "A secret" }).waitFor();

      const sent = seen.map((r) => [r.url(), r.postDataBuffer()?.toString("latin1") ?? "", JSON.stringify(r.headers())].join("\n"));
      expect(sent.filter((s) => s.includes("/sends")).length).toBeGreaterThan(3);
      const atServer = proxy.sent.map((s) => `${s.method} ${s.path} ${JSON.stringify(s.body ?? null)}`);
      for (const secret of secretForms(link)) {
        expect(sent.filter((s) => s.includes(secret))).toEqual([]);
        expect(atServer.filter((s) => s.includes(secret))).toEqual([]);
      }
    });
  });
});
