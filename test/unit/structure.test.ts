/**
 * The code map keeps its word: every path the code map (docs/developer/code-map.md) names exists
 * (its table and its tree), and no file of the clients (sdk/, cli/, web/src/) grows past 400 lines, as the
 * server's files stay under 500, one concern each.
 */
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
 * Paths the map names: backticked words with a slash (`lib/domain/items.ts`); a bare file name
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

test("no file of sdk/, cli/ or web/src/ is over 400 lines", () => {
  const long = ["sdk", "cli", "web/src"]
    .flatMap(filesUnder)
    .map((file) => [file, fs.readFileSync(path.join(ROOT, file), "utf8").split("\n").length - 1] as const)
    .filter(([, lines]) => lines > 400);
  expect(long).toEqual([]);
});
