/**
 * Names people give things (a vault, an organization): one rule, applied by the server to what it
 * stores (lib/domain/names.ts), by the roster to the names its links sign (protocol/formats/roster.ts), and by
 * clients before they send one.
 */
export const MAX_NAME = 256;

/** Why `name` is not a name, in words that follow its field's name; undefined when it is one. */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || name.length > MAX_NAME) return `must be 1 to ${MAX_NAME} characters`;
  if (name.trim() === "") return "must not be blank";
  return undefined;
}

/** The most characters a session's device name keeps: enough for "Ada's laptop (Firefox on Linux)". */
export const MAX_DEVICE_NAME = 64;

/** Control characters, and the format characters that reorder or hide text (bidi overrides, zero-width), and line separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/**
 * Why `name` (trimmed, NFC) is not a device name, or undefined: 1 to 64 characters, all printable
 * (it is shown back in a list of sessions, where a bidi override or a newline could make one
 * session pass for another).
 */
export function deviceNameProblem(name: string): string | undefined {
  if (name.length === 0 || [...name].length > MAX_DEVICE_NAME) return `must be 1 to ${MAX_DEVICE_NAME} characters`;
  if (new RegExp(UNPRINTABLE.source, "u").test(name))
    return "must hold only printable characters (no control or direction-override characters)";
  return undefined;
}

/** Text a server sent, safe to print on a terminal or in a list: each unprintable character becomes U+FFFD. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, "\uFFFD");
}
