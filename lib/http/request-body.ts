/**
 * Request parts the gateway and the streamed rekey route both check, in the contract's order:
 * the body (400 not JSON, 413 too large), then path ids (404), then the fields (400).
 */
import type { Readable } from "node:stream";
import { AppError, invalid, tooLarge } from "../errors";
import { isUuid } from "../domain/ids";

/** JSON bodies are read for these content types, as body-parser's `json()` does; others count as no body. */
export function isJsonContentType(contentType: unknown): boolean {
  if (typeof contentType !== "string") return false;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^application\/[^/]+\+json$/.test(type);
}

/** Path ids are UUIDs in any case, stored lower-case; a malformed one is a resource that does not exist. */
export function checkPathIds(params: Record<string, unknown> | undefined): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    if (typeof value !== "string" || !isUuid(value)) throw new AppError("NOT_FOUND", "Not found");
    ids[name] = value.toLowerCase();
  }
  return ids;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deeper than any body of the contract (the rekey's is 3): refused before validation, which would walk it. */
export const MAX_JSON_DEPTH = 16;

/**
 * Refuses a value nested deeper than `max` arrays and objects (400), without recursion: 400,000
 * nested arrays fit in 800 KB of JSON, and walking them recursively, as a validator's message
 * building does, ends in a 500.
 */
export function assertShallowJson(value: unknown, max = MAX_JSON_DEPTH): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth >= max) throw invalid(`The request body is nested deeper than ${max} levels`);
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
}

/** The body's fields: a JSON object of reasonable depth, or nothing. */
export function bodyFields(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (!isPlainObject(body)) throw invalid("The request body must be a JSON object");
  assertShallowJson(body);
  return body;
}

/**
 * Reads a streamed JSON body of at most `limit` bytes. Past the limit it fails with 413 at once and
 * discards the rest (so the client still gets the answer, not a reset); unreadable JSON is 400.
 * The body's text is never part of an error.
 */
export function readJsonStream(stream: Readable, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    stream.on("data", (chunk: Buffer | string) => {
      if (over) return;
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(buf);
    });
    stream.once("error", (err) => reject(over ? tooLarge() : err));
    stream.once("end", () => {
      if (over) return;
      try {
        resolve(parseJson(Buffer.concat(chunks, size).toString("utf8")));
      } catch (err) {
        reject(err);
      }
    });
  });
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  if (!/^[\s\uFEFF]*[{[]/.test(text)) throw invalid("Request body is not valid JSON"); // strict, as body-parser's
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw invalid("Request body is not valid JSON");
  }
  assertShallowJson(value);
  return value;
}
