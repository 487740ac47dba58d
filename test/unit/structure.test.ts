/**
 * The code map keeps its word: every path the code map (docs/developer/code-map.md) names exists
 * (its table and its tree). And the size rules reach every source folder: ESLint's `max-lines`
 * and `max-lines-per-function`, counting neither blank lines nor comments (eslint.config.mjs).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.join(__dirname, "../..");
const CODE_MAP = "docs/developer/code-map.md";

/** The code map's page, whole: its table and its tree. */
function codeMap(): string {
  const page = fs.readFileSync(path.join(ROOT, CODE_MAP), "utf8");
  if (!page.startsWith("# Code map\n")) throw new Error(`${CODE_MAP} is not the code map`);
  return page;
}

/**
 * Paths the map names: backticked words with a slash (`lib/domain/items/decisions.ts`); a bare file name
 * (`items.ts`) in the same line, in the folder of the path named before it there; and the tree's
 * first column.
 */
function namedPaths(map: string): string[] {
  const paths = new Set<string>();
  for (const line of map.split("\n")) {
    let folder: string | undefined;
    for (const [, word] of line.matchAll(/`([^`\s]+)`/g)) {
      if (/[<*>]|^\.|:/.test(word!)) continue; // a pattern, a relative import or a URL, not a path
      if (word!.includes("/")) {
        paths.add(word!.replace(/\/$/, ""));
        folder = word!.endsWith("/") ? word! : path.posix.dirname(word!) + "/";
      } else if (folder && /^[\w.-]+\.tsx?$/.test(word!)) paths.add(folder + word!);
    }
  }
  const tree = map.slice(map.indexOf("```\n") + 4, map.indexOf("\n```", map.indexOf("```\n") + 4));
  for (const line of tree.split("\n")) {
    for (const entry of line.match(/^((?:[\w./-]+, )*[\w./-]+)(?=\s)/)?.[1]?.split(", ") ?? []) {
      if (entry.includes("/") || entry.endsWith(".ts")) paths.add(entry.replace(/\/$/, ""));
    }
  }
  return [...paths].sort();
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(rel);
    return /\.(ts|tsx)$/.test(e.name) ? [rel] : [];
  });
}

test("every path the code map names exists", () => {
  const named = namedPaths(codeMap());
  expect(named.length).toBeGreaterThan(40);
  expect(named.filter((p) => !fs.existsSync(path.join(ROOT, p)))).toEqual([]);
});

/** Each file's size rules as ESLint resolves them from eslint.config.mjs. */
function sizeRulesOf(files: readonly string[]): Record<string, unknown> {
  const script = `
    import { ESLint } from "eslint";
    import { SOURCE_FOLDERS } from "./eslint.config.mjs";
    const eslint = new ESLint();
    const rules = {};
    for (const file of ${JSON.stringify(files)}) {
      const config = await eslint.calculateConfigForFile(file);
      rules[file] = { lines: config?.rules?.["max-lines"], perFunction: config?.rules?.["max-lines-per-function"] };
    }
    console.log(JSON.stringify({ rules, folders: SOURCE_FOLDERS }));`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" }));
}

test("every source folder is held to files of 400 counted lines and functions of 60", () => {
  // Every top-level folder with TypeScript outside tests, docs and builds is a source folder.
  const topLevel = fs
    .readdirSync(ROOT, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !/^(\.|node_modules$|dist$|test$|docs$|examples$|web$)/.test(e.name))
    .filter((e) => filesUnder(e.name).length > 0)
    .map((e) => e.name);
  const sample = [...topLevel, "web/src"].map((dir) => filesUnder(dir).find((f) => !f.includes("migrations"))!);
  const { rules, folders } = sizeRulesOf(sample) as { rules: Record<string, { lines: unknown; perFunction: unknown }>; folders: string[] };
  expect([...topLevel, "web/src"].filter((dir) => !folders.includes(dir))).toEqual([]);
  for (const file of sample) {
    const counted = { skipBlankLines: true, skipComments: true };
    expect([file, rules[file]!.perFunction]).toEqual([file, [2, { max: 60, ...counted }]]);
    const max = file.startsWith("services/") ? 250 : 400;
    expect([file, rules[file]!.lines]).toEqual([file, [2, { max, ...counted }]]);
  }
});
