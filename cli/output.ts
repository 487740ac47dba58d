/** How the CLI answers: text for people, `--json` for scripts, and exit codes both can rely on. */
import { ApiError, printable, SecurityError, UnlockError, WeakPasswordError, type RekeyProgress } from "../sdk";

export const EXIT = {
  ok: 0,
  /** The server refused, could not be reached, or the password was wrong. */
  error: 1,
  /** The command line was wrong. */
  usage: 2,
  /** A check failed: a signature, a pinned key, an item's integrity, or `verify`. */
  security: 3,
} as const;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Something the command line named does not exist (a vault, an item): like the server's 404, exit 1. */
export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
}

/** The person answered no to "are you sure?": nothing was done, exit 1. */
export class CancelledError extends Error {
  override readonly name = "CancelledError";
}

/** What a command produced: `json` for `--json`, `text` for a person. */
export interface Output {
  json: unknown;
  text: string;
  /** A non-zero exit with the output still printed (e.g. `verify` finding problems). */
  exitCode?: number;
}

export function printOutput(out: Output, json: boolean): void {
  process.stdout.write(
    json ? JSON.stringify(out.json, null, 2) + "\n" : out.text.endsWith("\n") || out.text === "" ? out.text : out.text + "\n",
  );
}

/** Prints the error to stderr and returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  const { code, message, field, exit } = describe(err);
  if (json) process.stderr.write(JSON.stringify({ error: { code, message, ...(field ? { field } : {}) } }) + "\n");
  // A server's words (any server: a send's link names its own) are printed with no control character that could act on the terminal.
  else
    process.stderr.write(
      `error: ${printable(message)}${field ? ` (field ${printable(field)})` : ""}${code !== "ERROR" && code !== "USAGE" ? ` [${printable(code)}]` : ""}\n`,
    );
  return exit;
}

function describe(err: unknown): { code: string; message: string; field?: string; exit: number } {
  if (err instanceof UsageError) return { code: "USAGE", message: err.message, exit: EXIT.usage };
  if (err instanceof NotFoundError) return { code: "NOT_FOUND", message: err.message, exit: EXIT.error };
  if (err instanceof CancelledError) return { code: "CANCELLED", message: err.message, exit: EXIT.error };
  if (err instanceof WeakPasswordError) return { code: err.code, message: err.message, exit: EXIT.error };
  if (err instanceof SecurityError) return { code: err.code, message: err.message, exit: EXIT.security };
  if (err instanceof UnlockError) return { code: err.code, message: err.message, exit: EXIT.error };
  if (err instanceof ApiError) {
    const hint = err.status === 429 && err.retryAfter ? ` (retry in ${err.retryAfter} s)` : "";
    if (err.code === "UNREACHABLE") {
      return { code: err.code, message: `${err.message}; check the server's address: --server or VAULT_SERVER`, exit: EXIT.error };
    }
    return { code: err.code, message: err.message + hint, field: err.field, exit: EXIT.error };
  }
  return { code: "ERROR", message: (err as Error)?.message ?? String(err), exit: EXIT.error };
}

/** A long operation's progress: a rekey's phases, or an import's (`seal`, `upload`, `files`), or an export's files. */
type Progress = { phase: RekeyProgress["phase"] | "seal" | "files"; done: number; total: number };

/**
 * A progress bar on stderr for long operations. On a terminal it redraws one line; elsewhere
 * (with `--progress`) it prints a line at every tenth of each phase.
 */
export function progressBar(enabled: boolean): ((p: Progress) => void) & { end(): void } {
  const tty = process.stderr.isTTY === true;
  const label = {
    items: "re-encrypting items",
    wraps: "wrapping the new key",
    upload: "sending",
    seal: "encrypting items",
    files: "files",
  } as const;
  let lastLine = "";
  let lastTenth = -1;
  let lastPhase = "";
  const render = (p: Progress) => {
    if (!enabled) return;
    const fraction = p.total === 0 ? 1 : p.done / p.total;
    if (tty) {
      const width = 30;
      const filled = Math.round(fraction * width);
      const line = `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${label[p.phase]} ${p.done}/${p.total}`;
      if (line !== lastLine) process.stderr.write(`\r${line}\x1b[K`);
      lastLine = line;
      return;
    }
    const tenth = Math.floor(fraction * 10);
    if (p.phase !== lastPhase) lastTenth = -1;
    if (tenth !== lastTenth) process.stderr.write(`${label[p.phase]}: ${p.done}/${p.total} (${tenth * 10}%)\n`);
    lastPhase = p.phase;
    lastTenth = tenth;
  };
  return Object.assign(render, {
    end: () => {
      if (enabled && tty && lastLine) process.stderr.write("\n");
    },
  });
}

/** Rows as aligned columns; what a cell holds that would not print (a server's escape sequence, a direction override) shows as U+FFFD. */
export function table(headers: string[], cells: string[][]): string {
  if (cells.length === 0) return "(none)";
  const rows = cells.map((r) => r.map(printable));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ");
  return [line(headers), ...rows.map(line)].join("\n");
}
