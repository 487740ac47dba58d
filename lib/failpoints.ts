/**
 * Failpoints: named places where a test makes the process die, to prove what survives a crash
 * there (the outbox: test/durability/outbox.test.ts). Off unless VAULT_FAILPOINTS lists the name (a
 * comma-separated list, read once at start); never set in a deployment.
 */
const ARMED = new Set(
  (process.env.VAULT_FAILPOINTS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

export type FailpointName =
  | "outbox-before-publish"
  | "outbox-after-publish"
  | "password-change-before-commit"
  | "key-rotation-before-commit"
  | "key-rotation-after-commit"
  | "password-change-after-commit"
  /** The embedded store, about to commit a group of two or more transactions (lib/store/sql/sqlite.ts). */
  | "group-commit-before-commit";

/** Kills this process at once (SIGKILL: no cleanup, as a crash) when `name` is armed. */
export function failpoint(name: FailpointName): void {
  if (ARMED.has(name)) process.kill(process.pid, "SIGKILL");
}
