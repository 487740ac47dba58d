/**
 * The project's TypeScript sources, for the generated pages: loaded as modules (each file
 * transpiled as it is required, as jest does, so no build is needed), and read as a TypeScript
 * program (the declarations, their doc comments and what each function calls).
 */
import fs from "node:fs";
import Module, { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The repository's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

const require = createRequire(import.meta.url);

/** A path from the root, with forward slashes, as the pages write it. */
export const relative = (file) => path.relative(ROOT, file).split(path.sep).join("/");

const COMPILE = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  isolatedModules: true,
};

let hooked = false;

/** `require` takes the project's .ts files, each transpiled to CommonJS as it loads. */
function hookTypeScript() {
  if (hooked) return;
  hooked = true;
  Module._extensions[".ts"] = (module, filename) => {
    const { outputText } = ts.transpileModule(fs.readFileSync(filename, "utf8"), { fileName: filename, compilerOptions: COMPILE });
    module._compile(outputText, filename);
  };
}

/** A module of the project, by its path from the root (`lib/errors.ts`). */
export function requireSource(file) {
  hookTypeScript();
  return require(path.join(ROOT, file));
}

/** Every .ts file under a folder of the repository, sorted, as paths from the root. */
export function sourceFiles(dir) {
  const full = path.join(ROOT, dir);
  if (!fs.existsSync(full)) return [];
  return fs
    .readdirSync(full, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith(".ts") ? [`${dir}/${e.name}`] : []))
    .sort();
}

export const readSource = (file) => fs.readFileSync(path.join(ROOT, file), "utf8");

const PROGRAM_OPTIONS = {
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  noLib: true,
  types: [],
  noEmit: true,
};

/**
 * The program of the server's sources from the given roots and all they import. Packages are
 * left out (each an empty module): what the pages read is the project's own declarations.
 */
export function sourceProgram(roots) {
  const host = ts.createCompilerHost(PROGRAM_OPTIONS);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    file.includes("/node_modules/") ? ts.createSourceFile(file, "export {};", language) : read(file, language, ...rest);
  const program = ts.createProgram(
    roots.map((file) => path.join(ROOT, file)),
    PROGRAM_OPTIONS,
    host,
  );
  return { program, checker: program.getTypeChecker() };
}

/** A declaration's doc comment (`/** ... *\/` just before it), as one line of Markdown; "" when it has none. */
export function docComment(node) {
  const text = node.getSourceFile().getFullText();
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const doc = ranges.filter((r) => text.startsWith("/**", r.pos)).at(-1);
  if (!doc) return "";
  return text
    .slice(doc.pos + 3, doc.end - 2)
    .split("\n")
    .map((line) => line.replace(/^\s*\*?\s?/, "").trim())
    .filter(Boolean)
    .join(" ");
}
