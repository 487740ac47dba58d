/**
 * Names people give things (a vault, an organization): one rule, applied by the server to what it
 * stores (lib/domain/names.ts), by the roster to the names its links sign (sdk/roster.ts), and by
 * clients before they send one.
 */
export const MAX_NAME = 256;

/** Why `name` is not a name, in words that follow its field's name; undefined when it is one. */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || name.length > MAX_NAME) return `must be 1 to ${MAX_NAME} characters`;
  if (name.trim() === "") return "must not be blank";
  return undefined;
}
