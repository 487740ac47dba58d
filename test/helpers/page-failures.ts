/**
 * What a browser test's pages showed when it failed, added to its failure (jest's hooks, so not
 * in browser.ts, which the benchmarks' build compiles too).
 */
import type { Page } from "playwright-core";
import { records } from "./browser";
import { UNANSWERED, within } from "./wait";

/**
 * After a failed test, a second error saying what each page showed: its address, its visible
 * text, its last requests with their answers and times (one never answered says so), and its
 * script errors. A browser test's failure on a loaded CI machine then tells what the page was
 * doing, not only which element never came.
 */
export function describePagesOnFailure(pages: () => Record<string, Page | undefined>): void {
  afterEach(async () => {
    if (!(globalThis as { __testFailed?: boolean }).__testFailed) return;
    const parts: string[] = [];
    for (const [name, page] of Object.entries(pages())) {
      if (!page || page.isClosed()) continue;
      parts.push(await describePage(name, page));
    }
    if (parts.length)
      throw new Error(`What the pages showed when the test failed (at ${new Date().toISOString()}):\n\n${parts.join("\n\n")}`);
  });
}

async function describePage(name: string, page: Page): Promise<string> {
  const text = await within(page.evaluate<string>("document.body ? document.body.innerText : ''"), 3000).catch(
    (e: Error) => `(unread: ${e.message})`,
  );
  const shown = text === UNANSWERED ? "(the page did not answer within 3 s)" : text.replace(/\s+/g, " ").trim().slice(0, 1200);
  const now = Date.now();
  const record = records.get(page);
  const requests = (record?.requests ?? []).map((r) =>
    r.ended === undefined ? `  ${r.line}: no answer after ${now - r.started} ms` : `  ${r.line}: ${r.outcome} in ${r.ended - r.started} ms`,
  );
  const errors = (record?.errors ?? []).map((e) => `  ${e.slice(0, 300)}`);
  return [
    `${name} at ${page.url()}`,
    `  shows: ${shown}`,
    `  last requests (${requests.length}):`,
    ...requests,
    ...(errors.length ? ["  script errors:", ...errors] : []),
  ].join("\n");
}
