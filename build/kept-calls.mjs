// A check of build/bundle-server.mjs: the server pack still makes every call its compiled modules
// make to a built-in that throws on bad input. The minifier takes some of those (decodeURIComponent
// among them) for free of effects, and drops a call whose result is unused: a check written as
// "call it, and catch what it throws" then passes everything in the pack while it holds in the
// compiled files the tests load. The build fails here instead, naming the function and the
// modules that call it; the fix is to use the call's result (mixins/gateway.mixin.ts `decodedPath`).
// Plain JavaScript, run after tsc.
import { parseAst } from "rolldown/parseAst";

/** Built-ins that throw on some input, by the name a call gives them (`new URL(...)` is "URL"). */
export const THROWING_BUILTINS = [
  "decodeURI",
  "decodeURIComponent",
  "encodeURI",
  "encodeURIComponent",
  "JSON.parse",
  "JSON.stringify",
  "atob",
  "btoa",
  "BigInt",
  "structuredClone",
  "URL",
];

/** How many calls (and `new`s) of each of THROWING_BUILTINS `code` makes. */
export function countCalls(code) {
  const counts = new Map(THROWING_BUILTINS.map((n) => [n, 0]));
  const nameOf = (callee) => {
    if (callee.type === "Identifier") return callee.name;
    if (callee.type === "MemberExpression" && !callee.computed && callee.object.type === "Identifier")
      return `${callee.object.name}.${callee.property.name}`;
    return undefined;
  };
  const walk = (node) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== "object") return;
    if (node.type === "CallExpression" || node.type === "NewExpression") {
      const name = nameOf(node.callee);
      if (counts.has(name)) counts.set(name, counts.get(name) + 1);
    }
    for (const key of Object.keys(node)) if (key !== "type" && typeof node[key] === "object") walk(node[key]);
  };
  // Parsing is the cost: a module that names none of them calls none.
  if (THROWING_BUILTINS.some((n) => code.includes(n.split(".").pop()))) walk(parseAst(code));
  return counts;
}

/**
 * The built-ins the pack calls fewer times than its modules do: each with both counts and the
 * modules that call it. `modules` maps a module's name to its compiled code.
 */
export function droppedCalls(modules, pack) {
  const inPack = countCalls(pack);
  const inModules = new Map(THROWING_BUILTINS.map((n) => [n, { count: 0, callers: [] }]));
  for (const [name, code] of modules) {
    for (const [builtin, count] of countCalls(code)) {
      if (count === 0) continue;
      const seen = inModules.get(builtin);
      seen.count += count;
      seen.callers.push(name);
    }
  }
  return THROWING_BUILTINS.filter((n) => inPack.get(n) < inModules.get(n).count).map((n) => ({
    builtin: n,
    inModules: inModules.get(n).count,
    inPack: inPack.get(n),
    callers: inModules.get(n).callers,
  }));
}

/** Throws, naming each call the pack lost, when it makes fewer calls of any of THROWING_BUILTINS than its modules. */
export function checkKeptCalls(modules, pack, packName = "the pack") {
  const dropped = droppedCalls(modules, pack);
  if (dropped.length === 0) return;
  const lines = dropped.map((d) => `  ${d.builtin}: ${d.inModules} call(s) in ${d.callers.join(", ")}; ${d.inPack} in ${packName}`);
  throw new Error(
    `${packName} dropped calls that can throw (the minifier took them for free of effects, their result being unused):\n` +
      `${lines.join("\n")}\nUse each call's result, so that a check relying on what it throws stays in the build.`,
  );
}
