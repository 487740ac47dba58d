/**
 * Debian's Chromium driven by playwright-core (no browser download), headless, for the web vault's
 * end-to-end tests; and axe-core run inside a page.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { checkAnswer } from "./openapi-check";
import { within } from "./wait";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Every test browser's switches: no sandbox or GPU on this machine, and no reaching out to Google's services (the network is closed). */
export const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/**
 * Checks every answer the page receives against the OpenAPI document, as the tests' own `fetch`
 * is (test/setup/check-responses.ts); the running test fails on a wrong one. Returns a promise
 * that settles once every answer seen so far has been checked.
 */
export function checkApiAnswers(page: Page): () => Promise<void> {
  recordForFailures(page);
  const pending = new Set<Promise<void>>();
  page.on("response", (res) => {
    const check = res
      .text()
      .then((text) => checkAnswer(res.request().method(), res.url(), res.status(), text))
      .catch(() => undefined) // the page went away before the body was read
      .finally(() => pending.delete(check));
    pending.add(check);
  });
  // An answer whose body never arrives (its server stopped under it, or the page never read a
  // refusal's body, which Chromium then holds until the page closes) has nothing to check: it is
  // waited for this long after the test, not for ever.
  return async () => {
    await within(Promise.all([...pending]), UNREAD_ANSWER_MS);
  };
}

/** How long after a test an answer's body is waited for before it counts as never read. */
const UNREAD_ANSWER_MS = 10_000;

const AXE_SOURCE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * axe-core's WCAG 2.1 A/AA and best-practice rules on the page as it is; the serious and critical
 * violations. Evaluated through the DevTools protocol, so the page's CSP (no inline script) stays on.
 */
export async function seriousAxeViolations(page: Pick<Page, "evaluate">): Promise<AxeViolation[]> {
  const violations = (await page.evaluate(`${AXE_SOURCE};
    axe.run(document, { resultTypes: ["violations"], runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } })
      .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`)) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Where the web tests put their screenshots: the README's (docs/screenshots) with
 * UPDATE_SCREENSHOTS=1, else a temporary folder, so that a test run leaves the tree clean (dates
 * and ids change on every run).
 */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(__dirname, "../../docs/screenshots")
  : path.join(os.tmpdir(), "vault-web-screenshots");

/** Opens one of a vault page's tabs (Members, Member history, Import and export, Trash, Settings, or Items). */
export async function vaultTab(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "This vault" }).getByRole("link", { name, exact: true }).click();
}

/** What a page did lately, kept to describe a failed test: its last requests and script errors. */
export interface PageRecord {
  requests: Array<{ line: string; started: number; ended?: number; outcome?: string }>;
  errors: string[];
}
/** Each recorded page's record (`describePagesOnFailure`, test/helpers/page-failures.ts, reads them). */
export const records = new WeakMap<Page, PageRecord>();
const KEPT = 12;

/** Starts keeping `page`'s last requests and script errors, for describing a failed test (test/helpers/page-failures.ts). */
export function recordForFailures(page: Page): void {
  if (records.has(page)) return;
  const record: PageRecord = { requests: [], errors: [] };
  records.set(page, record);
  const keep = <T>(list: T[], entry: T) => {
    list.push(entry);
    if (list.length > KEPT) list.shift();
  };
  const byRequest = new Map<unknown, PageRecord["requests"][number]>();
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (!url.protocol.startsWith("http")) return;
    const entry = { line: `${r.method()} ${url.pathname}`, started: Date.now() };
    byRequest.set(r, entry);
    keep(record.requests, entry);
  });
  const ended = (r: unknown, outcome: string) => {
    const entry = byRequest.get(r);
    byRequest.delete(r);
    if (entry) Object.assign(entry, { ended: Date.now(), outcome });
  };
  page.on("response", (res) => ended(res.request(), String(res.status())));
  page.on("requestfailed", (r) => ended(r, `failed (${r.failure()?.errorText ?? "?"})`));
  page.on("pageerror", (e) => keep(record.errors, `uncaught: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") keep(record.errors, `console: ${m.text()}`);
  });
}
