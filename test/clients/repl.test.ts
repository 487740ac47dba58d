/**
 * The developers' REPL (`npm run dev`), driven in a pseudo-terminal as a person would type into
 * it: the built server with `--repl` under `script`, on a data dir where a user and a vault exist.
 * `as <email> <action>` calls an action as that user; refusals print as one line, no stack.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { VaultClient } from "../../sdk";
import { startTestServer, tempDir } from "../helpers/server";

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, "../..");
const NODE = path.join(ROOT, "node_modules/node/bin/node");

/** Types each line once the REPL shows its prompt again; resolves with everything it printed. */
function driveRepl(dataDir: string, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", `${NODE} dist/bin/server.js --repl`, "/dev/null"], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn", TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    let typed = 0;
    const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const prompts = output.split("mol $").length - 1;
      if (prompts > typed && typed < lines.length) child.stdin.write(`${lines[typed++]}\n`);
      else if (prompts > typed && typed === lines.length) {
        typed++;
        child.stdin.write("quit\n");
      }
    });
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(timer);
      // eslint-disable-next-line no-control-regex -- ANSI colour codes start with ESC
      resolve(output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, ""));
    });
  });
}

test("`as <email> <action>` calls an action as that user; a refusal is one readable line", async () => {
  const dataDir = tempDir("repl-");
  const server = await startTestServer({ DATA_DIR: dataDir });
  const ada = new VaultClient({ baseUrl: server.url });
  await ada.register({
    email: "ada@example.test",
    password: "ivory tiger mango 42",
    orgName: "Acme",
    kdf: { algorithm: "pbkdf2-sha256", iterations: 600_000 },
    rsaBits: 2048,
  });
  const vault = await ada.vaults.create("Repl vault", "shared");
  const { userId, orgId } = ada.account;
  await server.stop();
  try {
    const out = await driveRepl(dataDir, [
      "as ada@example.test vaults.list",
      `as ada@example.test vaults.get --vaultId ${vault.vaultId}`,
      "as ada@example.test vaults.get --vaultId 00000000-0000-4000-8000-000000000000",
      "as ada@example.test vaults.rename --vaultId 00000000-0000-4000-8000-000000000000",
      "as nobody@example.test vaults.list",
      // The built-in call with the caller spelled out, as the README shows it.
      `call vaults.list --#user.userId ${userId} --#user.orgId ${orgId} --#user.role owner`,
    ]);
    expect(out.split("Repl vault").length - 1).toBeGreaterThanOrEqual(3);
    expect(out).toContain("404 NOT_FOUND: Vault not found");
    expect(out).toContain("400 INVALID: The 'name' field is required. (field name)");
    expect(out).toContain("no user with the email nobody@example.test");
    expect(out).not.toMatch(/\n\s+at /);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
