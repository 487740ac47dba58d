/** The one canonical encoding every signed or hashed value of the protocol uses (roster links, statements). */

/**
 * JSON Canonicalization Scheme (RFC 8785) on the values a link holds: objects (keys sorted by
 * UTF-16 code units, undefined members left out), arrays, strings and safe integers. No
 * whitespace. Anything else (floats, null, booleans) cannot occur in a link and is refused.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError("canonicalJson: only safe integers");
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new TypeError(`canonicalJson: unsupported ${value === null ? "null" : typeof value}`);
}
