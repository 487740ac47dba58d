/**
 * The API reference (docs/api/reference.md): every route of the OpenAPI document the gateway
 * serves (`openApiDocument`, lib/http/openapi.ts, built from the route table lib/http/routes/),
 * with who may call it, its parameters, its answer, and the error codes it can answer: those its
 * declaration gives (the gateway's checks) and those its action's code can throw
 * (route-errors.mjs), each with its named refusals.
 */
import { RefusalReach, actionHandlers } from "./route-errors.mjs";
import { requireSource } from "./sources.mjs";
import { schemaRows, schemaSection, typeOf } from "./schemas.mjs";

export const REFERENCE_PAGE = "docs/api/reference.md";

/** The refusal a login that may only enrol a second factor gets on every other route (the gateway's `authenticate`). */
const ENROL_ONLY_REFUSAL = "enrolmentRequired";

const METHOD_ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** What the gateway answers by a route's declaration, before its action runs: code -> reasons. */
function declaredErrors(route, operation) {
  const params = operation.parameters ?? [];
  const errors = [];
  if (!route.public) errors.push(["UNAUTHORIZED", "no access token, or one that is malformed, expired or forged"]);
  if (params.some((p) => p.in === "path")) errors.push(["NOT_FOUND", "a path id that is not a UUID"]);
  if (params.some((p) => p.in === "query") || operation.requestBody) errors.push(["INVALID", "the parameter checks"]);
  if (route.streamBody) errors.push(["PAYLOAD_TOO_LARGE", "a body past `REKEY_BODY_LIMIT`"]);
  else if (route.method !== "GET") {
    errors.push(["INVALID", "a body that is not a JSON object"]);
    errors.push(["PAYLOAD_TOO_LARGE", "a body past 1 MiB"]);
  }
  return errors;
}

/** The refusals by file and name, from the catalogue: their feature and answers. */
function refusalIndex(catalogue) {
  const index = new Map();
  for (const { feature, file, refusals } of catalogue) for (const r of refusals) index.set(`${file}:${r.name}`, { ...r, feature });
  return index;
}

/** A route's errors: code -> { reasons, refusals (feature and name), unnamed }. */
function errorsOf(route, operation, traced, refusals) {
  const errors = new Map();
  const entry = (code) => {
    if (!errors.has(code)) errors.set(code, { reasons: [], refusals: [], unnamed: false });
    return errors.get(code);
  };
  for (const [code, reason] of declaredErrors(route, operation)) entry(code).reasons.push(reason);
  for (const found of traced) {
    const [kind, ...rest] = found.split(":");
    if (kind === "code") {
      entry(rest[0]).unnamed = true;
      continue;
    }
    const refusal = refusals.get(rest.join(":"));
    if (!refusal) throw new Error(`${rest.join(":")} is not in the refusal catalogue`);
    if (route.enrolOnly && refusal.name === ENROL_ONLY_REFUSAL) continue;
    for (const answer of refusal.answers) {
      const list = entry(answer.split(" ")[1]).refusals;
      if (!list.some((r) => r.name === refusal.name)) list.push(refusal);
    }
  }
  for (const e of errors.values()) e.refusals.sort((a, b) => (a.name < b.name ? -1 : 1));
  return errors;
}

const whoOf = (route) =>
  route.public
    ? "anyone: no token"
    : route.enrolOnly
      ? "a signed-in user (access token), also one whose login may only enrol a second factor"
      : "a signed-in user (access token)";

/** Every route, with what the page shows of it, grouped by its tag (the service that serves it). */
export function readReference(program, catalogue) {
  const { openApiDocument } = requireSource("lib/http/openapi.ts");
  const { ROUTES, API_PREFIX } = requireSource("lib/http/routes/index.ts");
  const document = openApiDocument();
  const reach = new RefusalReach(program);
  const handlers = actionHandlers(program.program);
  const refusals = refusalIndex(catalogue);
  const authenticate = reach.authenticate();
  const routes = ROUTES.map((route) => {
    const operation = document.paths[route.path.replace(/:(\w+)/g, "{$1}")]?.[route.method.toLowerCase()];
    if (!operation) throw new Error(`${route.method} ${route.path} is not in the OpenAPI document`);
    const handler = handlers.get(route.action);
    if (!handler) throw new Error(`No service declares the action ${route.action} (${route.method} ${route.path})`);
    const traced = [...reach.reach([handler.node]), ...(route.public ? [] : authenticate)];
    return { route, operation, handlerFile: handler.file, errors: errorsOf(route, operation, traced, refusals) };
  });
  const status = requireSource("lib/errors.ts").ERROR_STATUS;
  return { document, routes, status, prefix: API_PREFIX };
}

const code = (text) => `\`${text}\``;
const cell = (text) => String(text).replace(/\|/g, "\\|").replace(/\n/g, " ");
const heading = (route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`;

function parameterTable(operation, document) {
  const rows = (operation.parameters ?? []).map((p) => [p.name, p.in, typeOf(p.schema), p.required ? "yes" : "no"]);
  const body = operation.requestBody?.content["application/json"].schema;
  if (body) for (const [name, type, required] of schemaRows(body, document)) rows.push([name, "body", type, required ? "yes" : "no"]);
  if (rows.length === 0) return ["- **Parameters**: none."];
  return [
    "- **Parameters**:",
    "",
    "  | parameter | in | type | required |",
    "  |---|---|---|---|",
    ...rows.map((r) => `  | ${code(r[0])} | ${r[1]} | ${cell(r[2])} | ${r[3]} |`),
  ];
}

function answerLine(operation) {
  const [status, response] = Object.entries(operation.responses).find(([s]) => /^\d+$/.test(s));
  const schema = response.content?.["application/json"]?.schema;
  return `- **Answer**: \`${status}\`${schema ? `, ${typeOf(schema)}` : ", no body"}.`;
}

function errorLines(errors, status) {
  const codes = [...errors.keys()].sort((a, b) => status[a] - status[b] || (a < b ? -1 : 1));
  return codes.map((c) => {
    const { reasons, refusals, unnamed } = errors.get(c);
    const named = refusals.map((r) => `[${code(r.name)}](refusals.md#${r.feature})`);
    // A code the declaration gives already has its reason: an unnamed refusal is worth saying only where it is the only one.
    const others = unnamed && reasons.length === 0 ? [named.length > 0 ? "others not named" : "not a named refusal"] : [];
    const parts = [...reasons, ...(named.length > 0 ? [named.join(", ")] : []), ...others];
    return `  - \`${status[c]} ${c}\`: ${parts.join("; ")}`;
  });
}

function routeSection({ route, operation, handlerFile, errors }, model) {
  return [
    `### ${heading(route)}`,
    "",
    `${operation.summary}.`.replace(/\.\.$/, "."),
    "",
    `- **Who**: ${whoOf(route)}.`,
    `- **Action**: \`${route.action}\` (\`${handlerFile}\`)${route.streamBody ? "; its body is streamed to it" : ""}.`,
    ...parameterTable(operation, model.document),
    answerLine(operation),
    ...(errors.size > 0 ? ["- **Errors**:", ...errorLines(errors, model.status)] : ["- **Errors**: only those of every route."]),
    "",
  ];
}

/** Tags by name; each tag's routes by path, then method. */
function grouped(routes) {
  const byTag = new Map();
  for (const r of routes) {
    const tag = r.operation.tags[0];
    byTag.set(tag, [...(byTag.get(tag) ?? []), r]);
  }
  const order = (a, b) =>
    a.route.path < b.route.path
      ? -1
      : a.route.path > b.route.path
        ? 1
        : METHOD_ORDER.indexOf(a.route.method) - METHOD_ORDER.indexOf(b.route.method);
  return [...byTag.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([tag, list]) => [tag, list.sort(order)]);
}

const INTRO = (model) => [
  "# API reference: every route",
  "",
  "Generated by `npm run docs:generate` from the OpenAPI document (`lib/http/openapi.ts`, built from the route table `lib/http/routes/`) and the services' code: edit those, not this page.",
  "",
  `For integrators: every route under \`${model.prefix}\` (${model.routes.length} in all), who may call it, its parameters, its`,
  "answer and the errors it can answer. The same document is served at `GET /api/v1/openapi.json`",
  "([the API](README.md#the-openapi-document)); the rules behind each route are in [the contract](contract.md),",
  "and every named refusal in [the refusal catalogue](refusals.md).",
  "",
  "Where a route's errors come from:",
  "",
  "- its declaration (the gateway checks it before the action runs): `401` without a valid access token",
  "  where one is needed, `404` for a path id that is not a UUID, `400` for the parameter checks and a",
  "  body that is not JSON, `413` for a body past its limit;",
  "- its action's code, read from the handler through every function it calls (both stores included):",
  "  each named refusal it can throw. The reading takes every branch, so it may name a refusal no",
  "  request can bring about;",
  "- and on every route: `500 INTERNAL` for a bug, `503 UNAVAILABLE` when a store, service or node",
  "  cannot be reached. What a store makes of a database failure can answer on any route that reaches",
  "  one, and is not repeated below: `409` for a lost unique-key or transaction race (`alreadyExists`,",
  "  `lostRace`), `413` for a change too large for one transaction (`tooLargeForOneTransaction`).",
  "",
  "The body of every error is `{ error: { code, message, field? } }` ([errors](README.md#errors)). In the",
  "tables of parameters and fields, `a.b` is the field `b` of the object `a` (required when `a` is there),",
  "and `a[].b` the field `b` of each object of the list `a`.",
  "",
];

/** The page, whole. */
export function referencePage(model) {
  const groups = grouped(model.routes);
  const schemas = Object.keys(model.document.components.schemas).sort();
  return `${[
    ...INTRO(model),
    ...groups.map(([tag, list]) => `- [The ${tag} service](#the-${tag}-service): ${list.map((r) => code(heading(r.route))).join(", ")}`),
    `- [Schemas](#schemas): the bodies the routes answer.`,
    "",
    ...groups.flatMap(([tag, list]) => [`## The ${tag} service`, "", ...list.flatMap((r) => routeSection(r, model))]),
    "## Schemas",
    "",
    "The bodies the routes answer and the objects their parameters name (`lib/http/api-schemas.ts`); in an answer, a field not required may be absent.",
    "",
    ...schemas.flatMap((name) => schemaSection(name, model.document)),
  ]
    .join("\n")
    .trimEnd()}\n`;
}
