/**
 * The OpenAPI 3.1 document of the API, built from the route table (lib/http/routes/) and the
 * answer schemas (lib/http/api-schemas.ts): served at /api/v1/openapi.json, linted and checked
 * against every answer by the tests (test/api/openapi.test.ts, test/helpers/openapi-check.ts).
 */
import { UUID } from "../domain/ids";
import { SCHEMAS, bodyOf, type JsonSchema } from "./api-schemas";
import { API_PREFIX, pathParamsOf, ROUTES, type ParamSchema, type RouteDef } from "./routes";

type Rule = Record<string, unknown>;

/** One fastest-validator rule as JSON Schema: the rule kinds the route table uses, and no other. */
export function ruleToJsonSchema(rule: Rule): JsonSchema {
  if (rule.openapi) return rule.openapi as JsonSchema;
  switch (rule.type) {
    case "string": {
      const out: JsonSchema = { type: "string" };
      if (rule.pattern === UUID) return { type: "string", format: "uuid" };
      if (typeof rule.length === "number") out.minLength = out.maxLength = rule.length;
      if (typeof rule.min === "number") out.minLength = rule.min;
      if (typeof rule.max === "number") out.maxLength = rule.max;
      if (rule.pattern instanceof RegExp) {
        if (rule.pattern.flags !== "") throw new Error(`A pattern with flags has no JSON Schema form: ${rule.pattern}`);
        out.pattern = rule.pattern.source;
      }
      return out;
    }
    case "number": {
      const out: JsonSchema = { type: rule.integer ? "integer" : "number" };
      if (rule.positive) out.exclusiveMinimum = 0;
      if (typeof rule.min === "number") out.minimum = rule.min;
      if (typeof rule.max === "number") out.maximum = rule.max;
      return out;
    }
    case "enum":
      return { type: "string", enum: rule.values };
    case "object":
      return rule.props ? objectSchema(rule.props as ParamSchema) : { type: "object" };
    case "array": {
      const out: JsonSchema = { type: "array", items: ruleToJsonSchema(rule.items as Rule) };
      if (typeof rule.min === "number") out.minItems = rule.min;
      return out;
    }
    case "boolean":
      return { type: "boolean" };
    case "any":
      return {};
    default:
      throw new Error(`No JSON Schema form for the rule type ${String(rule.type)}`);
  }
}

/** Parameters as an object schema: unknown fields are dropped by the server, so they are allowed. */
function objectSchema(params: ParamSchema, leaveOut: readonly string[] = []): JsonSchema {
  const entries = Object.entries(params).filter(([key]) => !key.startsWith("$$") && !leaveOut.includes(key)) as Array<[string, Rule]>;
  const required = entries.filter(([, rule]) => !rule.optional).map(([key]) => key);
  return {
    type: "object",
    ...(required.length > 0 ? { required } : {}),
    properties: Object.fromEntries(entries.map(([key, rule]) => [key, ruleToJsonSchema(rule)])),
  };
}

const retryAfter = (when: string) => ({
  description: `Seconds to wait before trying again (on ${when})`,
  schema: { type: "integer", minimum: 0 },
});

const json = (schema: JsonSchema) => ({ "application/json": { schema } });

/** The Moleculer service that serves a route: its operations' tag. */
const serviceOf = (route: RouteDef) => route.action.split(".")[0]!;

const operationId = (action: string) => action.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());

/** A route's path as the document writes it: `/vaults/:vaultId` -> `/vaults/{vaultId}`. */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: JsonSchema;
}

function operation(route: RouteDef) {
  const pathParams = pathParamsOf(route);
  const params = route.params ?? {};
  const rest = Object.keys(params).filter((key) => !key.startsWith("$$") && !pathParams.includes(key));
  const parameters: Parameter[] = pathParams.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string", format: "uuid" },
  }));
  if (route.method === "GET") {
    for (const name of rest) {
      const rule = params[name] as Rule;
      parameters.push({ name, in: "query", required: !rule.optional, schema: ruleToJsonSchema(rule) });
    }
  }
  const body = route.method !== "GET" && rest.length > 0 ? objectSchema(params, pathParams) : undefined;
  const success = route.reply.body
    ? { description: route.summary, content: json(bodyOf(route.reply.body)) }
    : { description: `${route.summary}: done, no body` };
  return {
    operationId: operationId(route.action),
    summary: route.summary,
    tags: [serviceOf(route)],
    ...(route.public ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    // DELETE's body is optional (a signed vault's roster link); every other method's is the JSON object.
    ...(body ? { requestBody: { required: route.method !== "DELETE", content: json(body) } } : {}),
    responses: {
      [String(route.reply.status)]: success,
      "4XX": { $ref: "#/components/responses/ClientError" },
      "5XX": { $ref: "#/components/responses/ServerError" },
    },
  };
}

/** The version of the interface under /api/v1. */
const API_VERSION = "1.0.0";

/** The document (a new object each call: callers may hold it). */
export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const tags = [...new Set(ROUTES.map(serviceOf))];
  return {
    openapi: "3.1.0",
    info: {
      title: "Vault and invite service",
      version: API_VERSION,
      // As package.json says: not licensed for use by others.
      license: { name: "UNLICENSED" },
      summary: "The server half of a zero-knowledge password manager for teams",
      description:
        "The server stores only ciphertext, wrapped keys and signatures. Every error answers `{ error: { code, message, field? } }` " +
        "(see the Error schema); a missing or invalid access token is 401 on every route that needs one.",
    },
    servers: [{ url: API_PREFIX }],
    security: [{ bearer: [] }],
    tags: tags.map((name) => ({ name, description: `Served by the ${name} service` })),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: SCHEMAS,
      responses: {
        ClientError: {
          description: "The request was refused: the contract's error body",
          headers: { "Retry-After": retryAfter("429 RATE_LIMITED") },
          content: json(bodyOf("Error")),
        },
        ServerError: {
          description: "The server failed or is not available now: a generic error body",
          headers: { "Retry-After": retryAfter("503 UNAVAILABLE, when the wait is known") },
          content: json(bodyOf("Error")),
        },
      },
    },
  };
}
