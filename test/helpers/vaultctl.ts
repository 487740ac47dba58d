/** The real `vaultctl` binary (dist/cli/main.js) as a process, as a user or a script runs it. */
import { spawn } from "node:child_process";
import path from "node:path";

const CLI = path.resolve(__dirname, "../../dist/cli/main.js");

export interface VaultctlRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as JSON, when it is. */
  json: any;
  /** The error body `--json` prints on stderr, when there is one. */
  error?: { code: string; message: string };
}

export interface VaultctlOptions {
  server: string;
  home: string;
  session?: string;
  /** Typed on standard input (a password, an answer). */
  input?: string;
  env?: Record<string, string>;
}

export function vaultctl(args: string[], opts: VaultctlOptions): Promise<VaultctlRun> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      VAULT_SERVER: opts.server,
      VAULTCTL_HOME: opts.home,
      VAULT_SESSION: opts.session,
      ...opts.env,
    };
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "",
      stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const parse = (text: string) => {
        try {
          return JSON.parse(text);
        } catch {
          return undefined;
        }
      };
      resolve({ code, stdout, stderr, json: parse(stdout), error: parse(stderr)?.error });
    });
    child.stdin.end(opts.input ?? "");
  });
}
