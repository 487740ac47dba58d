/**
 * Checks an answer of the API against the OpenAPI document (lib/http/openapi.ts), with ajv: the
 * status must be the route's documented success status or an error status, and the body must
 * match the schema the document gives for it. `test/setup/check-responses.ts` runs it on every
 * answer the tests receive through `fetch`. `requestProblems` checks a request body against the
 * document's schema for it.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { openApiDocument, openApiPath } from "../../lib/http/openapi";
import { API_PREFIX, routesForPath } from "../../lib/http/routes";

const DOC_ID = "https://vault-service.invalid/openapi.json";

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
// The document's root is no schema; only its component schemas are compiled, and `#/components/...` resolves against it.
ajv.addKeyword({ keyword: "components" });
const document = openApiDocument();
ajv.addSchema({ $id: DOC_ID, components: { schemas: document.components.schemas } });

const validators = new Map<string, ValidateFunction>();
function validatorFor(schema: string): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${schema}` });
    validators.set(schema, validate);
  }
  return validate;
}

/** Origins of other servers a test talks to that also have an /api/v1 (Prometheus's HTTP API): not this service. */
const foreignOrigins = new Set<string>();
export function notTheService(url: string): void {
  foreignOrigins.add(new URL(url).origin);
}

/** What is wrong with this answer, by the document: nothing (an empty list) when it conforms. */
export function responseProblems(method: string, url: string, status: number, text: string): string[] {
  const { origin, pathname } = new URL(url);
  if (foreignOrigins.has(origin)) return [];
  if (!pathname.startsWith(`${API_PREFIX}/`) && pathname !== API_PREFIX) return [];
  // OPTIONS and HEAD are answered by the gateway for every path (Allow, no body): not operations of the document.
  if (method === "OPTIONS" || method === "HEAD") return [];
  const route = routesForPath(pathname).find((r) => r.method === method);
  let schema: string | undefined;
  if (status >= 400) schema = "Error";
  else if (!route) return [`${status} on an undocumented route (an unknown route must be 404)`];
  else if (status !== route.reply.status) return [`${status} is not the documented success status ${route.reply.status}`];
  else schema = route.reply.body;

  if (!schema) return text === "" ? [] : [`a ${status} has no body, got ${text.slice(0, 80)}`];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`the body is not JSON: ${text.slice(0, 80)}`];
  }
  const validate = validatorFor(schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${schema}${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`);
}

/** What is wrong with a JSON request body for a route (`POST /vaults`), by the document's schema for it. */
export function requestProblems(route: string, body: unknown): string[] {
  const [method, path] = route.split(" ") as [string, string];
  const operation = (document.paths[openApiPath(path)] as Record<string, any> | undefined)?.[method.toLowerCase()];
  const schema = operation?.requestBody?.content["application/json"].schema;
  if (!schema) return [`${route} takes no JSON body`];
  // The schema is inline in the operation: its references name the document's components.
  const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)));
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "body"} ${e.message}`);
}

const recorded: string[] = [];

/** Checks an answer and keeps what is wrong with it, for the running test to fail on (`takeProblems`). */
export function checkAnswer(method: string, url: string, status: number, text: string): void {
  for (const problem of responseProblems(method, url, status, text))
    recorded.push(`${method} ${new URL(url).pathname} -> ${status}: ${problem}`);
}

/** The problems kept since the last call. */
export function takeProblems(): string[] {
  return recorded.splice(0);
}
