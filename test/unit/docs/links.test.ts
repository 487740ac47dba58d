/**
 * The documentation keeps its links: every relative Markdown link in the README, the root files
 * and docs/ names a file or folder of the repository (and, with an anchor, a heading of that
 * page); no page refers to an issue by number (history is told by what changed, in
 * CHANGELOG.md); and the README stays short.
 */
import fs from "node:fs";
import path from "node:path";

/** The repository's root: the nearest folder above this file that holds package.json. */
function findRoot(dir: string): string {
  return fs.existsSync(path.join(dir, "package.json")) ? dir : findRoot(path.dirname(dir));
}
const ROOT = findRoot(__dirname);
const ROOT_FILES = ["README.md", "CHANGELOG.md", "SECURITY.md", "CONTRIBUTING.md", "BENCHMARKS.md"];

function markdownUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return markdownUnder(rel);
    return e.name.endsWith(".md") ? [rel] : [];
  });
}

const PAGES = [...ROOT_FILES, ...markdownUnder("docs")];
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");

/** The text outside fenced code blocks and inline code: links there are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of read(file)
    .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "")
    .matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every link target of a page: `[text](target)` and `![alt](target)`, titles left out. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const target of links(read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http(s), mailto: not fetched
    const [rawPath, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = rawPath === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(rawPath)));
    if (resolved.startsWith("..") || !fs.existsSync(path.join(ROOT, resolved))) {
      broken.push(`${file}: ${target} (no ${resolved})`);
      continue;
    }
    if (anchor && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor})`);
  }
  return broken;
}

test("the documentation is where these checks look for it", () => {
  for (const file of ROOT_FILES) expect(fs.existsSync(path.join(ROOT, file))).toBe(true);
  expect(PAGES.length).toBeGreaterThan(30);
});

test("every relative link resolves to a file or folder of the repository, and every anchor to a heading", () => {
  expect(PAGES.flatMap(brokenLinks)).toEqual([]);
});

test("the checks catch a broken link and a missing heading", () => {
  expect(links("see [a](docs/nowhere.md) and `[b](c.md)`")).toEqual(["docs/nowhere.md"]);
  expect(slug("Walkthrough: from `register` to `rekey`")).toBe("walkthrough-from-register-to-rekey");
});

test("no page refers to an issue by its number", () => {
  const pattern = /\bissues? #?\d+|\(#\d+\)|(?:^|[\s(])#\d+\b/gim;
  const found = PAGES.flatMap((file) =>
    read(file)
      .split("\n")
      .flatMap((line, i) => [...line.matchAll(pattern)].map((m) => `${file}:${i + 1}: ${m[0].trim()}`)),
  );
  expect(found).toEqual([]);
});

test("the README is at most 250 lines", () => {
  expect(read("README.md").split("\n").length - 1).toBeLessThanOrEqual(250);
});
