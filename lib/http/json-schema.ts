/** The vocabulary the API's bodies are written in (lib/http/api-schemas.ts): JSON Schema 2020-12, objects closed. */
export type JsonSchema = { [key: string]: unknown };

export const string: JsonSchema = { type: "string" };
export const uuid: JsonSchema = { type: "string", format: "uuid" };
export const timestamp: JsonSchema = { type: "string", format: "date-time" };
export const base64: JsonSchema = { type: "string", contentEncoding: "base64" };
export const hex64: JsonSchema = { type: "string", pattern: "^[0-9a-f]{64}$" };
export const integer = (minimum: number): JsonSchema => ({ type: "integer", minimum });
export const oneOfValues = (values: readonly string[]): JsonSchema => ({ type: "string", enum: [...values] });

/** A closed object: `required` fields, then `optional` ones. */
export function object(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: "object",
    required: Object.keys(required),
    properties: { ...required, ...optional },
    additionalProperties: false,
  };
}

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: "array", items });

/** A reference to another schema of the API (lib/http/api-schemas.ts), as the OpenAPI document holds them (typed for routes by `bodyOf`). */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
