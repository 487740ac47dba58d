/**
 * Sends through the real `vaultctl` (dist/cli/main.js) against the real service, behind a proxy
 * that records every request and can rewrite answers (test/helpers/dishonest-proxy.ts): a text made
 * from standard input and a file with a password, each opened by `vaultctl send open` in a home
 * with no account; the sender's list and delete; a one-view send; what the server is told (never
 * the link's secret, the password or the text); and another send's header in an open's answer,
 * refused with nothing shown.
 */
import fs from "node:fs";
import path from "node:path";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { SDK_PASSWORD } from "../helpers/sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { dishonestSuite, type Edit } from "../helpers/dishonest-proxy";
import { tempDir } from "../helpers/server";
import { vaultctl, type VaultctlRun } from "../helpers/vaultctl";

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const digest = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** A server nobody listens on: `send open` goes where the link says, whatever VAULT_SERVER says. */
const NOWHERE = "http://127.0.0.1:9/api/v1";
const SEND_PW = "granite falls at dawn";

describe("vaultctl: sends", () => {
  const suite = dishonestSuite(SQL_ENGINES[0]![1], { SENDS: "on" });
  const home = tempDir("vaultctl-sends-");
  const work = tempDir("vaultctl-sends-work-");
  let session = "";

  const run = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
    vaultctl(args, { server: suite.proxy.url, home, session, ...opts });
  async function ok(args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<VaultctlRun> {
    const done = await run(args, opts);
    if (done.code !== 0) throw new Error(`vaultctl ${args.join(" ")} exited ${done.code}: ${done.stderr}`);
    return done;
  }
  /** `vaultctl send open` as a stranger runs it: a fresh home with no login, VAULT_SERVER pointing nowhere. */
  const stranger = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) => {
    const empty = path.join(tempDir("vaultctl-sends-stranger-"), "home");
    return vaultctl(["send", "open", ...args], { server: NOWHERE, home: empty, ...opts }).then((done) => ({ ...done, empty }));
  };
  const sendText = async (text: string, args: string[] = [], env?: Record<string, string>) =>
    (await ok(["send", "text", ...args], { input: text, ...(env && { env }) })).stdout.trim();
  const listed = async () => (await ok(["send", "list", "--json"])).json as any[];

  beforeAll(async () => {
    await ok(["register", `ada-${randomUUID().slice(0, 8)}@example.test`, "--org-name", "Acme", "--kdf", "pbkdf2"], {
      input: `${SDK_PASSWORD}\n`,
    });
    session = (await ok(["unlock", "--raw"], { input: `${SDK_PASSWORD}\n` })).stdout.trim();
  });
  afterAll(() => {
    for (const dir of [home, work]) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a text from standard input: the link alone on stdout, opened with no account, the text exactly on stdout", async () => {
    const text = "the recovery phrase:\n  correct horse battery staple\n";
    const made = await ok(["send", "text", "--title", "Recovery", "--show-email"], { input: text });
    expect(made.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#\/send\/[0-9a-f-]{36}\/[A-Za-z0-9_-]{43}\n$/);
    expect(made.stdout.startsWith(suite.proxy.origin)).toBe(true);
    expect(made.stderr).toMatch(/The link is its key/);

    const opened = await stranger([made.stdout.trim()]);
    expect([opened.code, opened.stdout]).toEqual([0, text]);
    expect(opened.stderr).toMatch(/^"Recovery" from ada-[0-9a-f]{8}@example\.test \(as the sender sealed it\)/);
    // Nothing kept: no login, no state directory made.
    expect(fs.existsSync(opened.empty)).toBe(false);
    const asJson = await stranger([made.stdout.trim(), "--json"]);
    expect(asJson.json).toMatchObject({ kind: "text", title: "Recovery", text: text.replace(/\n$/, ""), viewsLeft: null });

    const noText = await run(["send", "text"], { input: "" });
    expect([noText.code, noText.stderr]).toEqual([2, expect.stringMatching(/no text on standard input/)]);
    // Standard input holds the text: it cannot hold the master password as well.
    const locked = await vaultctl(["send", "text"], { server: suite.proxy.url, home, input: `${SDK_PASSWORD}\nsecret` });
    expect([locked.code, locked.stderr]).toEqual([2, expect.stringMatching(/standard input carries the text/)]);
  });

  test("a file with a password, byte for byte; no password or a wrong one opens nothing; a file in the way is kept", async () => {
    const data = new Uint8Array(randomBytes(2 * MiB + 333));
    const file = path.join(work, "dump.sql");
    fs.writeFileSync(file, data);
    const env = { SEND_PW };
    const link = (await ok(["send", "file", file, "--send-password-env", "SEND_PW"], { env })).stdout.trim();

    const out = tempDir("vaultctl-sends-out-");
    const bare = await stranger([link, "-o", out]);
    expect([bare.code, bare.stderr]).toEqual([
      1,
      expect.stringMatching(/this send has a password: give it with --password-env.*\[UNAUTHORIZED\]/),
    ]);
    const wrong = await stranger([link, "-o", out, "--password-env", "SEND_PW"], { env: { SEND_PW: "not it" } });
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringMatching(/that password does not open this send/)]);
    expect(fs.readdirSync(out)).toEqual([]);

    const opened = await stranger([link, "-o", out, "--password-env", "SEND_PW"], { env });
    expect(opened.code).toBe(0);
    expect(opened.stdout).toMatch(/^Saved "dump\.sql" \(2\.0 MiB\) to .*dump\.sql\.\n$/);
    expect(digest(fs.readFileSync(path.join(out, "dump.sql")))).toBe(digest(data));
    // From standard input too; a name in use is not lost after the view is taken: "dump (2).sql".
    expect((await stranger([link, "-o", out], { input: `${SEND_PW}\n` })).code).toBe(0);
    expect(digest(fs.readFileSync(path.join(out, "dump (2).sql")))).toBe(digest(data));

    // A path named outright is checked before the open: refused, and no view taken.
    const before = (await listed()).find((s) => link.includes(s.sendId)).views;
    const inWay = await stranger([link, "-o", path.join(out, "dump.sql"), "--password-env", "SEND_PW"], { env });
    expect([inWay.code, inWay.stderr]).toEqual([
      2,
      expect.stringMatching(/dump\.sql exists: --force replaces it \(the send was not opened\)/),
    ]);
    expect((await listed()).find((s) => link.includes(s.sendId)).views).toBe(before);
  });

  test("the sender's list; a deleted send's link opens nothing", async () => {
    const link = await sendText("delete me soon\n", ["--title", "Short-lived", "--views", "5", "--expires", "2d"]);
    const send = (await listed()).find((s) => link.includes(s.sendId));
    expect(send).toMatchObject({ title: "Short-lived", kind: "text", link, views: 0, maxViews: 5, hasPassword: false, complete: true });
    const table = (await ok(["send", "list"])).stdout;
    expect(table.split("\n")[0]).toMatch(/^ID\s+TITLE\s+KIND\s+VIEWS\s+EXPIRES\s+PASSWORD\s+STATE\s+LINK$/);
    expect(table).toMatch(new RegExp(`${send.sendId}\\s+Short-lived\\s+text\\s+0/5\\s+\\S+\\s+no\\s+open\\s+${escaped(link)}`));

    const unasked = await run(["send", "delete", send.sendId]);
    expect([unasked.code, unasked.stderr]).toEqual([2, expect.stringMatching(/add --yes/)]);
    await ok(["send", "delete", send.sendId, "--yes"]);
    expect((await listed()).some((s) => s.sendId === send.sendId)).toBe(false);
    const gone = await stranger([link]);
    expect([gone.code, gone.stdout]).toEqual([1, ""]);
    expect(gone.stderr).toMatch(/this send is gone: it expired, was deleted, or its views are used up/);
    const again = await run(["send", "delete", send.sendId, "--yes"]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringMatching(/no send .* of yours/)]);
  });

  test("a one-view send opens once; the second open finds it gone, and the list says it is used up", async () => {
    const link = await sendText("read once\n", ["--views", "1"]);
    const first = await stranger([link]);
    expect([first.code, first.stdout]).toEqual([0, "read once\n"]);
    expect(first.stderr).toMatch(/the server says that was its last view/);
    const second = await stranger([link]);
    expect([second.code, second.stdout]).toEqual([1, ""]);
    expect(second.stderr).toMatch(/this send is gone.*\[NOT_FOUND\]/);
    const table = (await ok(["send", "list"])).stdout;
    expect(table).toMatch(/1\/1\s+\S+\s+no\s+used up/);
  });

  test("the server is told neither the link's secret, the password nor the text", async () => {
    const text = "the vault door code is 7-4-1-9";
    suite.proxy.sent.length = 0;
    const link = await sendText(text, ["--send-password-env", "SEND_PW"], { SEND_PW });
    const opened = await stranger([link, "--password-env", "SEND_PW"], { env: { SEND_PW } });
    expect([opened.code, opened.stdout]).toEqual([0, `${text}\n`]);

    const secret = link.split("/").at(-1)!;
    const seen = JSON.stringify(suite.proxy.sent);
    expect(suite.proxy.sent.some((s) => s.path.endsWith("/open"))).toBe(true);
    for (const hidden of [secret, Buffer.from(secret, "base64url").toString("base64"), SEND_PW, text, "7-4-1-9"])
      expect(seen).not.toContain(hidden);
  });

  test("another send's header in the open's answer: exit 3 with SEND_TAMPERED, nothing shown", async () => {
    const real = await sendText("the real secret\n");
    const other = await sendText("the server's choice\n");
    const idOf = (link: string) => link.split("/").at(-2)!;
    let otherHeader = "";
    const capture: Edit = (method, p, body, status) => {
      if (method === "POST" && p === `/sends/${idOf(other)}/open` && status === 200) otherHeader = body.header;
      return body;
    };
    suite.proxy.edit = capture;
    expect((await stranger([other])).stdout).toBe("the server's choice\n");

    suite.proxy.edit = (method, p, body, status) =>
      method === "POST" && p === `/sends/${idOf(real)}/open` && status === 200 ? { ...body, header: otherHeader } : body;
    const refused = await stranger([real]);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("This send does not open with its link's key: the server handed over something else");
    expect(refused.stderr).toContain("[SEND_TAMPERED]");
    expect(refused.stderr).not.toMatch(/real secret|server's choice/);
  });

  test("a file's name is the sender's word: unprintable and direction-override characters dropped, cut to fit the file system", async () => {
    // 227 bytes: a name this machine keeps, but not with the temporary name a save writes first.
    const name = `in\u202Egnp.exe-${"é".repeat(105)}.pdf`;
    const dir = path.join(work, "long");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, name), Buffer.from("%PDF-1.7 hello"));
    const link = (await ok(["send", "file", path.join(dir, name)])).stdout.trim();
    const into = path.join(work, "received");
    fs.mkdirSync(into);
    const opened = await stranger([link, "-o", into]);
    expect(opened.code).toBe(0);
    const [saved] = fs.readdirSync(into);
    expect(saved).not.toMatch(/[\u202E\p{Cc}\p{Cf}]/u);
    expect(Buffer.byteLength(saved!, "utf8")).toBeLessThanOrEqual(200);
    expect(saved!.startsWith("ingnp.exe-é")).toBe(true);
    expect(saved!.endsWith(".pdf")).toBe(true);
    expect(fs.readFileSync(path.join(into, saved!), "utf8")).toBe("%PDF-1.7 hello");
  });

  test("a link naming something other than a web vault (another scheme, credentials, a query) is refused before anything is sent", async () => {
    const id = randomUUID();
    const secret = Buffer.from(randomBytes(32)).toString("base64url");
    for (const base of ["ftp://files.example", "http://user:pw@vault.example", "http://127.0.0.1:9/x?y=1"]) {
      const refused = await stranger([`${base}/#/send/${id}/${secret}`]);
      expect([refused.code, refused.stderr]).toEqual([2, expect.stringMatching(/not a web vault's address/)]);
    }
  });
});
