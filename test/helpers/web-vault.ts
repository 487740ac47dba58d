/**
 * What the web vault's Chromium suites share: the service (open registration) and Chromium for the
 * suite, one browser context per page with every API answer checked against the OpenAPI document,
 * users made through the SDK, and the login form filled as a person fills it. Called once in a
 * describe block, it registers that block's beforeAll, afterEach and afterAll.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { MemoryPinStore, VaultClient } from "../../sdk";
import { checkApiAnswers, launchChromium, seriousAxeViolations } from "./browser";
import { describePagesOnFailure } from "./page-failures";
import { SDK_PASSWORD, TEST_KDF } from "./sdk";
import { startTestServer, type TestServer } from "./server";

/** `env`: settings the service starts with besides open registration (ATTACHMENT_MAX_BYTES...). */
export function webVaultSuite(opts: { localhost?: boolean; env?: Record<string, string> } = {}) {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let origin = "";
  const contexts: BrowserContext[] = [];
  const pages: Page[] = [];
  const answersChecked: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    if (!fs.existsSync(path.resolve(__dirname, "../../dist/web/index.html")))
      throw new Error("the web vault is not built: run npm run build");
    server = await startTestServer({ REGISTRATION_MODE: "open", ...opts.env });
    // Browsers take security keys on localhost, not on 127.0.0.1.
    origin = new URL(server.url).origin;
    if (opts.localhost) origin = origin.replace("127.0.0.1", "localhost");
    browser = await launchChromium();
  });
  afterEach(async () => {
    for (const settled of answersChecked.splice(0)) await settled();
  });
  describePagesOnFailure(() => Object.fromEntries(pages.map((p, i) => [`page ${i + 1}`, p])));
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await server?.stop().catch(() => undefined);
  });

  const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.test`;

  return {
    get server(): TestServer {
      return server!;
    },
    /** Where the pages are opened: the server's origin, at localhost with `localhost`. */
    get origin(): string {
      return origin;
    },
    email,

    /** A page in a context of its own (a browser of its own), 1100 px wide; `acceptDialogs` answers every confirm() with yes. */
    async page(options: { baseURL?: string; acceptDialogs?: boolean } = {}): Promise<Page> {
      const context = await browser!.newContext({ baseURL: options.baseURL ?? origin, viewport: { width: 1100, height: 900 } });
      context.setDefaultTimeout(15_000);
      contexts.push(context);
      const p = await context.newPage();
      pages.push(p);
      answersChecked.push(checkApiAnswers(p));
      if (options.acceptDialogs) p.on("dialog", (d) => void d.accept());
      return p;
    },

    /** The login form filled and sent; what follows (the vault list, a second step, an error) is the caller's to wait for. */
    async logIn(p: Page, address: string, password = SDK_PASSWORD): Promise<void> {
      await p.goto("/");
      await p.getByLabel("Email").fill(address);
      await p.getByLabel("Master password").fill(password);
      await p.getByRole("button", { name: "Log in" }).click();
    },

    /** A user registered through the SDK: the first of a new organization, or invited by `by` as `role`. */
    async registered(role?: "admin" | "member", by?: VaultClient): Promise<VaultClient> {
      const address = email(role ?? "owner");
      const c = new VaultClient({ baseUrl: server!.url, pins: new MemoryPinStore() });
      if (by && role) {
        const { code } = await by.invites.create(address, role);
        await c.register({ email: address, password: SDK_PASSWORD, invite: code, kdf: TEST_KDF, rsaBits: 2048 });
      } else await c.register({ email: address, password: SDK_PASSWORD, orgName: "Acme", kdf: TEST_KDF, rsaBits: 2048 });
      return c;
    },

    /** No serious or critical axe finding on the page as it is. */
    async accessible(p: Page, name: string): Promise<void> {
      expect({ page: name, violations: await seriousAxeViolations(p) }).toEqual({ page: name, violations: [] });
    },
  };
}
