/**
 * Which refusals each action can throw, read from the code: from the action's handler
 * (services/*.service.ts), every function it calls or passes on, and theirs in turn; a call to a
 * port's method (`store.items.createItem`) reaches every class that implements the port (both
 * stores). What it records: each named refusal (lib/domain/**\/refusals.ts), each helper of
 * lib/errors.ts and each `new AppError("CODE", ...)` met on the way. It reads every branch, so
 * it may name a refusal that no request can bring about; what no handler calls, it cannot name.
 */
import path from "node:path";
import ts from "typescript";
import { ROOT, relative, requireSource, sourceFiles } from "./sources.mjs";

/**
 * What the stores make of a database failure (a lost unique-key race, a lost transaction race, a
 * change too large for one transaction, the database away) can reach any route that reaches a
 * store: the page says so once, instead of listing it under every route. By declaration.
 */
export const STORE_FAILURES = [
  { file: "lib/store/mongo/errors.ts", name: "translateMongoError" },
  { file: "lib/store/sql/context.ts", className: "SqlContext", name: "tx" },
];

/** The gateway's method that checks the access token, before every route that needs one. */
const AUTHENTICATE = { file: "mixins/gateway.mixin.ts", name: "authenticate" };

const isRefusalFile = (file) => /^lib\/domain\/(\w+\/)?refusals\.ts$/.test(file);
const own = (sourceFile) => !sourceFile.isDeclarationFile && !sourceFile.fileName.includes("/node_modules/");
const nameOf = (node) => (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) ? node.name.text : undefined);

function symbolAt(checker, node) {
  const symbol = checker.getSymbolAtLocation(node);
  return symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Every node of a file, depth first, for which `pick` answers something: its answers. */
function collect(sourceFile, pick) {
  const out = [];
  const visit = (node) => {
    const found = pick(node);
    if (found !== undefined) out.push(found);
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return out;
}

/** Interface -> the classes that implement it, or an interface that extends it. */
function implementations(program, checker) {
  const byInterface = new Map();
  const bases = (symbol, seen = new Set()) => {
    if (!symbol || seen.has(symbol)) return seen;
    seen.add(symbol);
    for (const d of symbol.declarations ?? [])
      if (ts.isInterfaceDeclaration(d))
        for (const h of d.heritageClauses ?? []) for (const t of h.types) bases(symbolAt(checker, t.expression), seen);
    return seen;
  };
  for (const sourceFile of program.getSourceFiles().filter(own)) {
    for (const cls of collect(sourceFile, (n) => (ts.isClassDeclaration(n) ? n : undefined))) {
      for (const clause of cls.heritageClauses ?? []) {
        if (clause.token !== ts.SyntaxKind.ImplementsKeyword) continue;
        for (const t of clause.types)
          for (const i of bases(symbolAt(checker, t.expression))) byInterface.set(i, [...(byInterface.get(i) ?? []), cls]);
      }
    }
  }
  return byInterface;
}

const functionLike = (n) =>
  ts.isFunctionDeclaration(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isArrowFunction(n) ||
  ts.isFunctionExpression(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessorDeclaration(n);

/** The reader of a program: what a declaration leads to, and what a walk from some nodes meets. */
export class RefusalReach {
  constructor({ program, checker }) {
    this.program = program;
    this.checker = checker;
    this.implementations = implementations(program, checker);
    this.helpers = errorHelpers();
    this.skipped = new Set(STORE_FAILURES.map((f) => this.declaration(f)));
    this.cache = new Map();
  }

  /** A function or method named in `STORE_FAILURES` or `AUTHENTICATE`; throws when it is gone. */
  declaration({ file, className, name }) {
    const sourceFile = this.program.getSourceFile(path.join(ROOT, file));
    const found = sourceFile
      ? collect(sourceFile, (n) => {
          if (!functionLike(n) || nameOf(n) !== name) return undefined;
          return className === undefined || (ts.isClassDeclaration(n.parent) && nameOf(n.parent) === className) ? n : undefined;
        })
      : [];
    if (found.length !== 1)
      throw new Error(`build/docs/route-errors.mjs names ${className ? `${className}.` : ""}${name} in ${file}: not found once`);
    return found[0];
  }

  /** The functions a declaration leads to: itself, its function value, or a port method's implementations. */
  targets(d) {
    if (functionLike(d)) return [d];
    const init = d.initializer;
    if ((ts.isVariableDeclaration(d) || ts.isPropertyAssignment(d) || ts.isPropertyDeclaration(d)) && init)
      return ts.isArrowFunction(init) || ts.isFunctionExpression(init) ? [init] : [];
    if ((ts.isMethodSignature(d) || ts.isPropertySignature(d)) && ts.isInterfaceDeclaration(d.parent)) {
      const classes = this.implementations.get(symbolAt(this.checker, d.parent.name)) ?? [];
      return classes.flatMap((c) => c.members.filter((m) => nameOf(m) === nameOf(d))).flatMap((m) => this.targets(m));
    }
    if (ts.isClassDeclaration(d)) return d.members.filter(ts.isConstructorDeclaration);
    return [];
  }

  /** What one identifier names: a refusal, a helper of lib/errors.ts, or functions to walk. */
  follow(identifier, found, queue) {
    for (const d of symbolAt(this.checker, identifier)?.declarations ?? []) {
      const sourceFile = d.getSourceFile();
      if (!own(sourceFile)) continue;
      const file = relative(sourceFile.fileName);
      if (isRefusalFile(file) && ts.isVariableDeclaration(d)) found.add(`refusal:${file}:${d.name.getText()}`);
      else if (file === "lib/errors.ts" && ts.isVariableDeclaration(d) && this.helpers.has(d.name.getText()))
        found.add(`code:${this.helpers.get(d.name.getText())}`);
      else for (const t of this.targets(d)) if (!this.skipped.has(t)) queue.push(t);
    }
  }

  /** What one function's own code names (its nested functions included): what it finds, and the functions it leads to. */
  edges(node) {
    let known = this.cache.get(node);
    if (known) return known;
    known = { found: new Set(), next: [] };
    const visit = (n) => {
      if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "AppError") {
        const first = n.arguments?.[0];
        if (first && ts.isStringLiteral(first)) known.found.add(`code:${first.text}`);
      }
      if (ts.isIdentifier(n)) this.follow(n, known.found, known.next);
      ts.forEachChild(n, visit);
    };
    visit(node);
    this.cache.set(node, known);
    return known;
  }

  /** Everything the walk from these nodes meets: `refusal:<file>:<name>` and `code:<CODE>` entries, sorted. */
  reach(starts) {
    const seen = new Set();
    const found = new Set();
    const queue = [...starts];
    while (queue.length > 0) {
      const node = queue.pop();
      if (seen.has(node)) continue;
      seen.add(node);
      const { found: own, next } = this.edges(node);
      for (const f of own) found.add(f);
      queue.push(...next);
    }
    return [...found].sort();
  }

  /** The gateway's token check, for the routes that need a token. */
  authenticate() {
    return this.reach([this.declaration(AUTHENTICATE)]);
  }
}

/** The helpers of lib/errors.ts that make an AppError, by name, with the code they give it. */
function errorHelpers() {
  const errors = requireSource("lib/errors.ts");
  const helpers = new Map();
  for (const [name, value] of Object.entries(errors)) {
    if (typeof value !== "function" || value === errors.AppError) continue;
    let made;
    try {
      made = value("<message>", "<field>");
    } catch {
      continue;
    }
    if (made instanceof errors.AppError) helpers.set(name, made.type);
  }
  return helpers;
}

/**
 * Each action's handler node, by its name (`items.create`): the `actions` entries of the service
 * schemas in services/*.service.ts (an object with `name: "<service>"` and `actions: { ... }`).
 */
export function actionHandlers(program) {
  const handlers = new Map();
  for (const file of sourceFiles("services").filter((f) => f.endsWith(".service.ts"))) {
    const sourceFile = program.getSourceFile(path.join(ROOT, file));
    if (!sourceFile) throw new Error(`${file} is not in the program`);
    for (const schema of collect(sourceFile, (n) => (ts.isObjectLiteralExpression(n) ? n : undefined))) {
      const prop = (key) => schema.properties.find((p) => ts.isPropertyAssignment(p) && nameOf(p) === key);
      const service = prop("name")?.initializer;
      const actions = prop("actions")?.initializer;
      if (!service || !ts.isStringLiteral(service) || !actions || !ts.isObjectLiteralExpression(actions)) continue;
      for (const action of actions.properties) handlers.set(`${service.text}.${nameOf(action)}`, { file, node: action });
    }
  }
  return handlers;
}

/** The roots the reading of routes' errors starts from: every service file and the gateway. */
export const ROUTE_ROOTS = () => [...sourceFiles("services").filter((f) => f.endsWith(".service.ts")), AUTHENTICATE.file];
