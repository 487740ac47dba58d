/** JSON Schemas of the OpenAPI document as the API reference writes them: a type in words, an object as rows of fields. */
import { requireSource } from "./sources.mjs";

const code = (text) => `\`${text}\``;
const cell = (text) => String(text).replace(/\|/g, "\\|");

/** The name of a `$ref` (`#/components/schemas/Item` -> Item). */
const refName = (ref) => ref.split("/").at(-1);

/** The pattern of canonical base64 (lib/domain/encoding.ts), named rather than shown. */
let canonicalBase64;
function isCanonicalBase64(pattern) {
  canonicalBase64 ??= requireSource("lib/domain/encoding.ts").CANONICAL_BASE64.source;
  return pattern === canonicalBase64;
}

function stringType(s) {
  const parts = [s.format ?? (s.contentEncoding === "base64" ? "base64" : "string")];
  if (s.pattern) parts[0] = isCanonicalBase64(s.pattern) ? "canonical base64" : `string matching ${code(s.pattern)}`;
  if (s.minLength !== undefined && s.minLength === s.maxLength) parts.push(`${s.maxLength} characters`);
  else if (s.minLength !== undefined && s.maxLength !== undefined) parts.push(`${s.minLength} to ${s.maxLength} characters`);
  else if (s.maxLength !== undefined) parts.push(`at most ${s.maxLength} characters`);
  else if (s.minLength !== undefined) parts.push(`at least ${s.minLength} characters`);
  return parts.join(", ");
}

function numberType(type, s) {
  const lower = s.minimum !== undefined ? `${s.minimum}` : s.exclusiveMinimum !== undefined ? `more than ${s.exclusiveMinimum}` : undefined;
  if (lower !== undefined && s.maximum !== undefined)
    return `${type}, ${lower}${s.minimum !== undefined ? " to" : ", at most"} ${s.maximum}`;
  if (lower !== undefined) return `${type}, ${s.minimum !== undefined ? `at least ${lower}` : lower}`;
  return s.maximum !== undefined ? `${type}, at most ${s.maximum}` : type;
}

/** A schema's type in a few words; a named schema as a link to its section. */
export function typeOf(s) {
  if (s.$ref) return `[${code(refName(s.$ref))}](#${refName(s.$ref).toLowerCase()})`;
  const described = (text) => [text, s.default !== undefined ? `default ${s.default}` : "", s.description ?? ""].filter(Boolean).join(", ");
  if (s.const !== undefined) return described(code(JSON.stringify(s.const)));
  if (s.oneOf) return described(`one of: ${s.oneOf.map(typeOf).join("; ")}`);
  if (s.enum) return described(`one of ${s.enum.map((v) => code(v)).join(", ")}`);
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const words = types.map((type) => {
    if (type === "string") return stringType(s);
    if (type === "integer" || type === "number") return numberType(type, s);
    if (type === "array")
      return `array of ${s.items?.properties ? "objects" : typeOf(s.items ?? {})}${s.minItems ? ` (at least ${s.minItems})` : ""}`;
    if (type === "object") return "object";
    if (type === undefined) return "any JSON value";
    return type;
  });
  return described(words.join(" or "));
}

/** An object schema's fields as rows (name, type, required), nested objects' fields with dotted names. */
export function schemaRows(s, document, prefix = "") {
  if (!s.properties) return [];
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties).flatMap(([name, field]) => {
    const own = [`${prefix}${name}`, typeOf(field), required.has(name)];
    if (field.properties) return [own, ...schemaRows(field, document, `${prefix}${name}.`)];
    if (field.type === "array" && field.items?.properties) return [own, ...schemaRows(field.items, document, `${prefix}${name}[].`)];
    return [own];
  });
}

function fieldTable(s, document) {
  return [
    "| field | type | required |",
    "|---|---|---|",
    ...schemaRows(s, document).map(([name, type, required]) => `| ${code(name)} | ${cell(type)} | ${required ? "yes" : "no"} |`),
  ];
}

/** One schema's section: its fields, or each of its forms, or its type. */
export function schemaSection(name, document) {
  const s = document.components.schemas[name];
  const body = s.properties
    ? fieldTable(s, document)
    : s.oneOf
      ? s.oneOf.flatMap((form, i) => [
          `One of ${s.oneOf.length}, form ${i + 1}:`,
          "",
          ...(form.properties ? fieldTable(form, document) : [typeOf(form)]),
          "",
        ])
      : [`${typeOf(s)}.`];
  return [`### ${name}`, "", ...body, ""];
}
