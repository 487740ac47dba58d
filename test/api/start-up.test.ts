/**
 * The built server's start, as an operator sees it (dist/bin/server.js, a process): a DATA_DIR it
 * cannot use fails at once in one line that names it, whatever is wrong with it (a path under /proc
 * once hung for as long as anyone waited); and the start-up line names the web vault at the
 * address where security keys work (http://localhost:PORT/, not the IP address it listens on).
 */
import fs from "node:fs";
import path from "node:path";
import { execFile } from "node:child_process";
import { Api } from "../helpers/client";
import { freePort } from "../helpers/ports";
import { tempDir } from "../helpers/server";
import { eventually } from "../helpers/wait";

jest.setTimeout(60_000);

const SERVER = path.resolve(__dirname, "../../dist/bin/server.js");

/** Starts the built server with `env`; its exit code, output and time to exit, or code null after 10 s. */
function start(env: Record<string, string>): Promise<{ code: number | null; out: string; ms: number }> {
  const began = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [SERVER],
      { env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env }, timeout: 10_000 },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, out: stdout + stderr, ms: Date.now() - began }),
    );
  });
}

describe("a DATA_DIR the server cannot use", () => {
  const file = path.join(tempDir(), "a-file");
  fs.writeFileSync(file, "");
  const because = (dir: string, reason: string) =>
    `Failed to start: Setting DATA_DIR (${dir}) cannot be used: ${reason}; point DATA_DIR at a folder this process may write`;

  test.each([
    [
      "a folder to make under /proc",
      "/proc/nope",
      "/proc/nope cannot be made: its file system takes no new folders or files (is it under /proc or /sys?)",
    ],
    [
      "two folders to make under /proc",
      "/proc/nope/deeper",
      "/proc/nope cannot be made: its file system takes no new folders or files (is it under /proc or /sys?)",
    ],
    ["an existing folder that takes no files", "/proc/self", "its file system takes no new folders or files (is it under /proc or /sys?)"],
    ["a file", file, "it is a file, not a folder"],
    ["a path through a file", path.join(file, "data"), "a part of the path is a file, not a folder"],
  ])("%s (%s): one line naming it, and an exit within seconds", async (_what, dir, reason) => {
    const { code, out, ms } = await start({ DATA_DIR: dir });
    expect(code).toBe(1);
    expect(
      out
        .trim()
        .split("\n")
        .filter((l) => !/ INFO /.test(l)),
    ).toEqual([because(dir, reason)]);
    expect(ms).toBeLessThan(5_000);
  });

  test("a DATA_DIR whose folders do not exist yet is made, owner-only, and the server serves", async () => {
    const dir = path.join(tempDir(), "not", "yet");
    const port = String(await freePort());
    const child = execFile(process.execPath, [SERVER], { env: { ...process.env, PORT: port, DATA_DIR: dir, LOG_LEVEL: "warn" } });
    try {
      await eventually(
        "the server to answer",
        async () => (await new Api(`http://127.0.0.1:${port}/api/v1`).get("/health")).status === 200,
      );
      expect([fs.statSync(dir).mode & 0o777, fs.statSync(path.dirname(dir)).mode & 0o777]).toEqual([0o700, 0o700]);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith(".write-probe"))).toEqual([]);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("the start-up line", () => {
  /** The line naming the web vault, once the server printed it; `meanwhile` runs before the server stops. */
  async function webVaultLine(env: Record<string, string>, meanwhile?: (line: string) => Promise<void>): Promise<string> {
    const child = execFile(process.execPath, [SERVER], { env: { ...process.env, DATA_DIR: tempDir(), LOG_LEVEL: "info", ...env } });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    try {
      const line = await eventually("the web vault's line", () => /Web vault: .*/.exec(out)?.[0]);
      await meanwhile?.(line);
      return line;
    } finally {
      child.kill("SIGTERM");
    }
  }

  test("on a local address it names http://localhost:PORT/, where security keys work, and that address serves", async () => {
    const port = String(await freePort());
    const served = async () => expect((await fetch(`http://localhost:${port}/`)).status).toBe(200);
    expect(await webVaultLine({ PORT: port }, served)).toBe(`Web vault: open http://localhost:${port}/ in a browser`);
    const anyInterface = String(await freePort());
    expect(await webVaultLine({ PORT: anyInterface, HOST: "0.0.0.0" })).toBe(
      `Web vault: open http://localhost:${anyInterface}/ in a browser`,
    );
  });

  test("behind a configured origin (WEBAUTHN_ORIGINS) it names that origin", async () => {
    const line = await webVaultLine({
      PORT: String(await freePort()),
      WEBAUTHN_RP_ID: "vault.example.com",
      WEBAUTHN_ORIGINS: "https://vault.example.com",
    });
    expect(line).toBe("Web vault: open https://vault.example.com/ in a browser");
  });
});
