/**
 * The refusal catalogue (docs/api/refusals.md): every named refusal, the exported constructors of
 * lib/domain/refusals.ts and lib/domain/<feature>/refusals.ts. Each constructor is called with
 * placeholder arguments (one call per value of a literal or boolean parameter) and the AppError it
 * returns gives the status, code and field; the source gives its doc comment; the imports of
 * every source and test file give where it is thrown and which tests name it.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { ROOT, docComment, readSource, requireSource, sourceFiles } from "./sources.mjs";

export const REFUSALS_PAGE = "docs/api/refusals.md";

/** The files of named refusals, shared first, then each feature's, by folder name. */
export function refusalFiles() {
  const features = fs
    .readdirSync(path.join(ROOT, "lib/domain"), { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(ROOT, "lib/domain", e.name, "refusals.ts")))
    .map((e) => e.name)
    .sort();
  return [
    { feature: "shared", title: "Shared", file: "lib/domain/refusals.ts" },
    ...features.map((feature) => ({
      feature,
      title: feature[0].toUpperCase() + feature.slice(1),
      file: `lib/domain/${feature}/refusals.ts`,
    })),
  ];
}

/** A refusals file's exported constructors: name, parameters and doc comment, as declared. */
function constructorsOf(sourceFile) {
  const out = [];
  const exported = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of sourceFile.statements) {
    if (ts.isFunctionDeclaration(statement) && exported(statement) && statement.name) {
      out.push({ name: statement.name.text, params: statement.parameters, doc: docComment(statement) });
    } else if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          out.push({ name: d.name.getText(), params: init.parameters, doc: docComment(statement) });
      }
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The values a parameter is called with: each member of a union of string literals, both
 * booleans, or one placeholder (`<name>` for text, 0, an empty list or object).
 */
function valuesOf(param, checker) {
  const name = param.name.getText();
  const type = checker.getTypeAtLocation(param);
  const members = type.isUnion() ? type.types : [type];
  if (members.every((t) => t.isStringLiteral())) return members.map((t) => t.value);
  if (members.every((t) => t.flags & ts.TypeFlags.BooleanLike)) return [true, false];
  if (type.flags & ts.TypeFlags.NumberLike) return [0];
  const node = param.type && ts.isTypeOperatorNode(param.type) ? param.type.type : param.type;
  if (node && ts.isArrayTypeNode(node)) return [[]];
  if (node && ts.isTypeLiteralNode(node)) return [{}];
  return [`<${name}>`];
}

/** Every combination of the parameters' values. */
const combinations = (lists) => lists.reduce((acc, values) => acc.flatMap((args) => values.map((v) => [...args, v])), [[]]);

/** What a constructor answers, from the AppErrors it returns: its statuses with codes, and its fields. */
function answersOf(file, refusal, checker) {
  const { AppError } = requireSource("lib/errors.ts");
  const make = requireSource(file)[refusal.name];
  const answers = new Set();
  const fields = new Set();
  for (const args of combinations(refusal.params.map((p) => valuesOf(p, checker)))) {
    const err = make(...args);
    if (!(err instanceof AppError)) throw new Error(`${file}: ${refusal.name}(...) does not return an AppError`);
    answers.add(`${err.code} ${err.type}`);
    fields.add(typeof err.data?.field === "string" ? err.data.field : undefined);
  }
  return { answers: [...answers].sort(), fields: [...fields] };
}

const IMPORTS = /import\s+(?!type\s)(?:\{([^}]*)\}|\*\s+as\s+(\w+))\s+from\s+["']([^"']+)["']/g;

/** A relative import's file, from the root (`../../domain/items/refusals` -> lib/domain/items/refusals.ts). */
function resolveImport(from, specifier) {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, "");
  return [`${base}.ts`, `${base}/index.ts`].find((f) => fs.existsSync(path.join(ROOT, f)));
}

/** Which files import each refusal, by its file: file -> name -> importing files. */
function importersOf(refusalFiles) {
  const index = new Map(refusalFiles.map((f) => [f, new Map()]));
  const add = (target, name, file) => {
    const names = index.get(target);
    if (!names.has(name)) names.set(name, new Set());
    names.get(name).add(file);
  };
  for (const file of ["lib", "services", "mixins", "app", "bin", "test"].flatMap(sourceFiles)) {
    const text = readSource(file);
    for (const [, named, namespace, specifier] of text.matchAll(IMPORTS)) {
      const target = resolveImport(file, specifier);
      if (!index.has(target) || target === file) continue;
      if (named) {
        for (const part of named.split(",")) {
          const m = /^\s*(\w+)(?:\s+as\s+\w+)?\s*$/.exec(part);
          if (m) add(target, m[1], file);
        }
      } else for (const [, name] of text.matchAll(new RegExp(`\\b${namespace}\\.(\\w+)`, "g"))) add(target, name, file);
    }
  }
  return index;
}

/** Every named refusal, by feature, with what the page shows of it. */
export function readRefusals({ program, checker }) {
  const files = refusalFiles();
  const importers = importersOf(files.map((f) => f.file));
  return files.map(({ feature, title, file }) => {
    const sourceFile = program.getSourceFile(path.join(ROOT, file));
    if (!sourceFile) throw new Error(`${file} is not in the program`);
    const refusals = constructorsOf(sourceFile).map((refusal) => {
      const users = [...(importers.get(file).get(refusal.name) ?? [])].sort();
      return {
        name: refusal.name,
        doc: refusal.doc,
        ...answersOf(file, refusal, checker),
        thrownIn: users.filter((f) => !f.startsWith("test/")),
        testedIn: users.filter((f) => f.startsWith("test/")),
      };
    });
    return { feature, title, file, refusals };
  });
}

const cell = (text) => text.replace(/\|/g, "\\|");
const code = (text) => `\`${text}\``;
const files = (list) => (list.length > 0 ? list.map(code).join(", ") : "none");

function fieldCell(fields) {
  const named = fields.filter((f) => f !== undefined).map(code);
  if (named.length === 0) return "none";
  return fields.includes(undefined) ? `${named.join(", ")} or none` : named.join(", ");
}

function featureSection({ title, file, refusals }) {
  return [
    `## ${title}`,
    "",
    `${refusals.length} refusal${refusals.length === 1 ? "" : "s"}, in \`${file}\`.`,
    "",
    "| refusal | answer | field | when | thrown in | tests |",
    "|---|---|---|---|---|---|",
    ...refusals.map(
      (r) =>
        `| \`${r.name}\` | ${r.answers.join(", ")} | ${fieldCell(r.fields)} | ${cell(r.doc)} | ${files(r.thrownIn)} | ${files(r.testedIn)} |`,
    ),
  ];
}

/** The page, whole. */
export function refusalsPage(catalogue) {
  const total = catalogue.reduce((n, f) => n + f.refusals.length, 0);
  return `${[
    "# Refusals: every named refusal, by feature",
    "",
    "Generated by `npm run docs:generate` from `lib/domain/refusals.ts` and `lib/domain/<feature>/refusals.ts`: edit those, not this page.",
    "",
    "For integrators who meet a refusal and want its cause, and for contributors who add a rule: every",
    `named refusal the server answers with (${total} in all), by feature. Each is a constructor, the one place its`,
    "code, message and field are written; the error body is `{ error: { code, message, field? } }`",
    "([the API](README.md#errors)). How a new one is added: [adding a rule](../developer/adding-a-rule.md).",
    "",
    "- **answer**: the status and code of the error the constructor returns (`lib/errors.ts` maps each",
    "  code to its status).",
    "- **field**: the input it blames; `<name>` stands for what the caller passes as that argument.",
    "- **when**: the constructor's doc comment.",
    "- **thrown in**: the source files that import it (`lib/`, `services/`, `mixins/`); **tests**: the",
    "  test files that import it. Which routes can answer it: [the API reference](reference.md).",
    "",
    ...catalogue.map((f) => `- [${f.title}](#${f.feature}): ${f.refusals.length}, \`${f.file}\``),
    "",
    ...catalogue.flatMap((f) => [...featureSection(f), ""]),
  ]
    .join("\n")
    .trimEnd()}\n`;
}
