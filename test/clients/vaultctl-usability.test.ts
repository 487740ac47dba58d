/**
 * What a newcomer trips on with `vaultctl`, checked on the real binary (`./vaultctl`, the wrapper
 * the README shows) against the real server: help and version, a weak master password, exit
 * codes 1 and 2 with their codes, did-you-mean, confirmation (on a pseudo-terminal) and `--yes`,
 * and why a server cannot be reached.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, "../..");
const PASSWORD = "ivory tiger mango 42";
const NEW_PASSWORD = "lemon harbor violin 97";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("vaultctl for a newcomer", () => {
  let server: TestServer;
  const home = tempDir("vaultctl-newcomer-");

  /** `./vaultctl args`; with `terminal`, under a pseudo-terminal (`script`), `input` typed into it. */
  function run(args: string[], opts: { input?: string; env?: Record<string, string>; terminal?: boolean } = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env = { ...process.env, VAULT_SERVER: server.url, VAULTCTL_HOME: home, ...opts.env };
      const quoted = ["./vaultctl", ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
      const child = opts.terminal
        ? spawn("script", ["-qec", quoted, "/dev/null"], { cwd: ROOT, env })
        : spawn("./vaultctl", args, { cwd: ROOT, env });
      let stdout = "",
        stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      if (opts.terminal) {
        // Type the answer once the question is on the screen.
        const answer = () => (/\[y\/N\]/.test(stdout) ? child.stdin.end(opts.input ?? "") : setTimeout(answer, 50));
        answer();
      } else child.stdin.end(opts.input ?? "");
    });
  }
  const errorOf = (r: Run) => JSON.parse(r.stderr).error as { code: string; message: string };

  beforeAll(async () => {
    server = await startTestServer();
    const reg = await run(["register", "ada@example.test", "--org-name", "Acme"], { input: `${PASSWORD}\n` });
    expect(reg.code).toBe(0);
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  test("./vaultctl reaches vaultctl's own help and version, every flag passed through, nothing from npm", async () => {
    const help = await run(["--help"]);
    expect([help.code, help.stderr]).toEqual([0, ""]);
    expect(help.stdout).toMatch(/^vaultctl: the command line client/);
    const version = await run(["--version"]);
    expect([version.code, version.stderr]).toEqual([0, ""]);
    expect(version.stdout).toMatch(/^vaultctl 0\.1\.0 \(node v24\.\d+\.\d+\)\n$/);
    expect((await run(["vault", "share", "--help"])).stdout).toMatch(/^usage: vaultctl vault share <vault> <user> \[options\]/);
    expect((await run(["item", "add", "--version"])).stdout).toMatch(/^vaultctl 0\.1\.0/);
  });

  test("a weak master password is refused at register, with the reason", async () => {
    const short = await run(["register", "bea@example.test", "--json"], { input: "a\n", env: { VAULT_SERVER: server.url } });
    expect(short.code).toBe(1);
    expect(errorOf(short)).toMatchObject({
      code: "WEAK_PASSWORD",
      message: expect.stringContaining("It has 1 characters; a master password needs at least 12."),
    });
    const guessable = await run(["register", "bea@example.test"], { input: "password1234\n" });
    expect(guessable.code).toBe(1);
    expect(guessable.stderr).toMatch(/too weak: .*It is too easy to guess \(strength \d of 4; at least 3 needed\)\. \[WEAK_PASSWORD\]/);
  });

  test("not found exits 1 with NOT_FOUND and the closest name; usage errors exit 2 with USAGE and a suggestion", async () => {
    await run(["vault", "create", "Team"], { input: `${PASSWORD}\n` });
    const missing = await run(["vault", "members", "Tema", "--json"]);
    expect(missing.code).toBe(1);
    expect(errorOf(missing)).toEqual({
      code: "NOT_FOUND",
      message: `no vault "Tema" among yours; did you mean "Team"? (\`vaultctl vault list\` shows them)`,
    });
    const far = await run(["vault", "members", "Payroll", "--json"]);
    expect([far.code, errorOf(far).message]).toEqual([1, `no vault "Payroll" among yours (\`vaultctl vault list\` shows them)`]);

    const user = await run(["vault", "share", "Team", "ada@exmaple.test", "--json"], { input: `${PASSWORD}\n` });
    expect([user.code, errorOf(user)]).toEqual([
      1,
      { code: "NOT_FOUND", message: `no user ada@exmaple.test in your organization; did you mean "ada@example.test"?` },
    ]);

    const command = await run(["vault", "lst", "--json"]);
    expect([command.code, errorOf(command)]).toEqual([
      2,
      { code: "USAGE", message: "unknown command: vault lst; did you mean vaultctl vault list? (vaultctl --help lists them)" },
    ]);
    const top = await run(["rekee", "Team"]);
    expect([top.code, top.stderr]).toEqual([
      2,
      "error: unknown command: rekee; did you mean vaultctl rekey? (vaultctl --help lists them)\n",
    ]);
    const option = await run(["item", "add", "Team", "x", "--feild", "a=b"]);
    expect([option.code, option.stderr]).toEqual([
      2,
      "error: unknown option --feild for vaultctl item add; did you mean --field? (vaultctl item add --help lists them)\n",
    ]);
    expect((await run(["vault", "create"])).code).toBe(2);
  });

  test("session list names this machine's login and the others; session end stops one, --others the rest", async () => {
    const laptop = tempDir("vaultctl-laptop-");
    try {
      const onLaptop = { env: { VAULTCTL_HOME: laptop } };
      expect((await run(["login", "ada@example.test"], { ...onLaptop, input: `${PASSWORD}\n` })).code).toBe(0);
      const listed = JSON.parse((await run(["session", "list", "--json"])).stdout) as Array<{
        sessionId: string;
        deviceName: string;
        current: boolean;
      }>;
      const here = listed.find((s) => s.current)!;
      expect(here.deviceName).toBe(`vaultctl on ${os.hostname()}`.slice(0, 64).trim());
      const text = (await run(["session", "list"])).stdout;
      expect(text).toMatch(/^SESSION +DEVICE +LAST USED +FROM +SINCE\n/);
      expect(text).toContain(`${here.sessionId} (this one)`);
      const laptopSession = JSON.parse((await run(["session", "list", "--json"], onLaptop)).stdout).find((s: any) => s.current).sessionId;
      expect(listed.map((s) => s.sessionId)).toContain(laptopSession);

      const ended = await run(["session", "end", laptopSession]);
      expect([ended.code, ended.stdout]).toEqual([0, expect.stringContaining(`Ended session ${laptopSession}`)]);
      // The laptop's saved login is over: refused, with the server's reason.
      const after = await run(["whoami", "--json"], onLaptop);
      expect([after.code, errorOf(after).code]).toEqual([1, "UNAUTHORIZED"]);
      expect((await run(["session", "end"])).code).toBe(2);
      expect((await run(["session", "end", laptopSession, "--others"])).code).toBe(2);
      expect((await run(["login", "ada@example.test"], { ...onLaptop, input: `${PASSWORD}\n` })).code).toBe(0);
      expect(JSON.parse((await run(["session", "end", "--others", "--json"])).stdout).ended).toBeGreaterThanOrEqual(1);
      expect((await run(["whoami"], onLaptop)).code).toBe(1);
      expect((await run(["whoami"])).code).toBe(0);
    } finally {
      fs.rmSync(laptop, { recursive: true, force: true });
    }
  });

  test("the server's address works as the web vault's, without /api/v1, as well as the API's", async () => {
    const origin = new URL(server.url).origin;
    const bare = await run(["invite", "check", "abc", "--json", "--server", origin]);
    const api = await run(["invite", "check", "abc", "--json", "--server", `${origin}/api/v1/`]);
    // Both reach the invite route, which refuses the made-up code (a wrong path would be the gateway's bare "Not found").
    expect(errorOf(bare)).toEqual({ code: "NOT_FOUND", message: "Invite token not found" });
    expect(errorOf(api)).toEqual(errorOf(bare));
  });

  test("an unreachable server: the cause, and where the address comes from", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const port = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const refused = await run(["invite", "check", "abc", "--json"], { env: { VAULT_SERVER: `http://127.0.0.1:${closed}/api/v1` } });
    expect(refused.code).toBe(1);
    expect(errorOf(refused)).toEqual({
      code: "UNREACHABLE",
      message: `cannot reach http://127.0.0.1:${closed}/api/v1: connection refused (nothing listens there: is the service running, on that port?); check the server's address: --server or VAULT_SERVER`,
    });
    const unknownHost = await run(["invite", "check", "abc", "--server", "http://no-such-host.invalid/api/v1"]);
    expect(unknownHost.stderr).toContain("cannot reach http://no-such-host.invalid/api/v1: host not found (DNS has no such name)");
  });

  test("destructive commands ask on a terminal, refuse to guess in a script, and take --yes", async () => {
    await run(["vault", "create", "Doomed"], { input: `${PASSWORD}\n` });
    const names = async () => JSON.parse((await run(["vault", "list", "--json"])).stdout).map((v: { vaultName: string }) => v.vaultName);

    const script = await run(["vault", "delete", "Doomed", "--json"]);
    expect([script.code, errorOf(script)]).toEqual([
      2,
      {
        code: "USAGE",
        message: `Delete vault "Doomed" and all its items, for every member: standard input is not a terminal, so vaultctl cannot ask; add --yes`,
      },
    ]);
    const no = await run(["vault", "delete", "Doomed"], { terminal: true, input: "n\n" });
    expect(no.stdout).toContain(`Delete vault "Doomed" and all its items, for every member? [y/N]`);
    expect(no.stdout).toContain("error: cancelled: nothing was changed [CANCELLED]");
    expect(no.code).toBe(1);
    expect(await names()).toContain("Doomed");
    const yes = await run(["vault", "delete", "Doomed"], { terminal: true, input: "y\n" });
    expect([yes.code, yes.stdout]).toEqual([0, expect.stringContaining(`Deleted vault "Doomed".`)]);
    expect(await names()).not.toContain("Doomed");

    const invite = JSON.parse((await run(["invite", "create", "cy@example.test", "--json"], { input: `${PASSWORD}\n` })).stdout);
    expect((await run(["invite", "revoke", invite.inviteId])).code).toBe(2);
    expect((await run(["invite", "revoke", invite.inviteId, "--yes"])).stdout).toContain(`Revoked invite ${invite.inviteId}.`);
  });

  test("item add --generate says it generated a password; --show prints it", async () => {
    const quiet = await run(["item", "add", "Team", "GitHub", "--generate"], { input: `${PASSWORD}\n` });
    expect(quiet.stdout).toMatch(
      /Generated a 24-character password \(not shown; --show prints it, or: vaultctl item get \S+ \S+ --field password\)\./,
    );
    const shown = await run(["item", "add", "Team", "AWS", "--generate", "--show"], { input: `${PASSWORD}\n` });
    const password = /Generated password: (\S{24})\n/.exec(shown.stdout)![1]!;
    expect((await run(["item", "get", "Team", "AWS", "--field", "password"], { input: `${PASSWORD}\n` })).stdout.trim()).toBe(password);
  });

  // Last: it changes ada's password for good.
  test("password change: the current and the new password from standard input; a personal vault opens with the new one, the old one is refused", async () => {
    expect((await run(["vault", "create", "Diary", "--personal"], { input: `${PASSWORD}\n` })).code).toBe(0);
    expect((await run(["item", "add", "Diary", "Entry", "--field", "text=dear diary"], { input: `${PASSWORD}\n` })).code).toBe(0);
    const weak = await run(["password", "change", "--json"], { input: `${PASSWORD}\nshort\n` });
    expect([weak.code, errorOf(weak).code]).toEqual([1, "WEAK_PASSWORD"]);
    const wrong = await run(["password", "change", "--json"], { input: `not my password at all\n${NEW_PASSWORD}\n` });
    expect(wrong.code).toBe(1);
    const changed = await run(["password", "change"], { input: `${PASSWORD}\n${NEW_PASSWORD}\n` });
    expect([changed.code, changed.stderr]).toEqual([0, ""]);
    expect(changed.stdout).toMatch(/^Master password changed \(account version 2\)\.\n\d+ personal vaults? wrapped again;/);
    // This machine's login goes on, under the new password; the old one opens nothing.
    expect((await run(["item", "get", "Diary", "Entry", "--field", "text"], { input: `${NEW_PASSWORD}\n` })).stdout.trim()).toBe(
      "dear diary",
    );
    expect((await run(["item", "get", "Diary", "Entry", "--field", "text"], { input: `${PASSWORD}\n` })).code).not.toBe(0);
    expect((await run(["login", "ada@example.test"], { input: `${PASSWORD}\n` })).code).toBe(1);
    expect((await run(["login", "ada@example.test"], { input: `${NEW_PASSWORD}\n` })).code).toBe(0);
  });
});
