/**
 * Files on items through the real `vaultctl` (dist/cli/main.js) against the real service, behind a
 * proxy that can break or tamper with what passes (test/helpers/dishonest-proxy.ts): attach, list,
 * download (to a file, to standard output), detach; an attach broken off and finished with
 * `--resume`; a download whose chunk the server changed, refused with nothing left on disk; and a
 * KeePass database's attachment imported, carried by the encrypted export into another vault.
 */
import fs from "node:fs";
import path from "node:path";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { SDK_PASSWORD } from "../helpers/sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { dishonestSuite } from "../helpers/dishonest-proxy";
import { keepassFile } from "../helpers/keepass";
import { tempDir } from "../helpers/server";
import { vaultctl, type VaultctlRun } from "../helpers/vaultctl";

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const EXPORT_PASS = "a long export passphrase 7";
/** A file's digest: what two copies are compared by (jest compares large arrays byte by byte, slowly). */
const digest = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const digestOf = (file: string) => digest(fs.readFileSync(file));

describe("vaultctl: files on items", () => {
  const suite = dishonestSuite(SQL_ENGINES[0]![1]);
  const home = tempDir("vaultctl-files-");
  const work = tempDir("vaultctl-files-work-");
  let session = "";
  const big = new Uint8Array(randomBytes(2.5 * MiB));
  const bigPath = path.join(work, "report.bin");

  const run = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
    vaultctl(args, { server: suite.proxy.url, home, session, ...opts });
  async function ok(args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<VaultctlRun> {
    const done = await run(args, opts);
    if (done.code !== 0) throw new Error(`vaultctl ${args.join(" ")} exited ${done.code}: ${done.stderr}`);
    return done;
  }
  const files = async (vault: string, item: string) => (await ok(["files", vault, item, "--json"])).json as any[];

  beforeAll(async () => {
    fs.writeFileSync(bigPath, big);
    await ok(["register", `ada-${randomUUID().slice(0, 8)}@example.test`, "--org-name", "Acme", "--kdf", "pbkdf2"], {
      input: `${SDK_PASSWORD}\n`,
    });
    session = (await ok(["unlock", "--raw"], { input: `${SDK_PASSWORD}\n` })).stdout.trim();
    await ok(["vault", "create", "Files"]);
    await ok(["item", "add", "Files", "scan", "--type", "note"]);
  });
  afterAll(() => {
    for (const dir of [home, work]) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("attach 2.5 MiB, list, download to a file and to standard output, never over a file without --force, detach", async () => {
    const attached = (await ok(["attach", "Files", "scan", bigPath, "--json"])).json;
    expect(attached).toMatchObject({ name: "report.bin", size: big.length });
    fs.writeFileSync(path.join(work, "notes.txt"), "rotate the keys in spring\n");
    await ok(["attach", "Files", "scan", path.join(work, "notes.txt"), "--name", "notes"]);
    expect(fs.existsSync(path.join(home, "attach.json"))).toBe(false);

    const listed = await files("Files", "scan");
    expect(listed).toEqual([
      { id: attached.attachmentId, name: "report.bin", size: big.length },
      { id: expect.any(String), name: "notes", size: 26 },
    ]);
    const text = (await ok(["files", "Files", "scan"])).stdout;
    expect(text).toMatch(/report\.bin\s+2\.5 MiB/);
    expect(text).not.toMatch(/key/i);

    const out = tempDir("vaultctl-files-out-");
    await ok(["download", "Files", "scan", "report.bin", "-o", out]);
    expect(digestOf(path.join(out, "report.bin"))).toBe(digest(big));
    const again = await run(["download", "Files", "scan", attached.attachmentId, "-o", path.join(out, "report.bin")]);
    expect([again.code, again.stderr]).toEqual([2, expect.stringMatching(/report\.bin exists: --force replaces it/)]);
    fs.writeFileSync(path.join(out, "report.bin"), "old");
    await ok(["download", "Files", "scan", attached.attachmentId, "--out", path.join(out, "report.bin"), "--force"]);
    expect(digestOf(path.join(out, "report.bin"))).toBe(digest(big));
    expect(fs.readdirSync(out)).toEqual(["report.bin"]);
    expect((await ok(["download", "Files", "scan", "notes", "-o", "-"])).stdout).toBe("rotate the keys in spring\n");

    await ok(["detach", "Files", "scan", "report.bin", "--yes"]);
    expect((await files("Files", "scan")).map((f) => f.name)).toEqual(["notes"]);
    const gone = await run(["download", "Files", "scan", "report.bin", "-o", out]);
    expect([gone.code, gone.stderr]).toEqual([1, expect.stringMatching(/no file "report\.bin" on item "scan"/)]);
  });

  test("an attach the server breaks off says how to finish it; attach --resume sends only the chunks missing", async () => {
    await ok(["item", "add", "Files", "resumed", "--type", "note"]);
    suite.proxy.rewrite = (method, p, body) => (method === "PUT" && /\/chunks\/2$/.test(p) ? { data: "!" } : body);
    const broken = await run(["attach", "Files", "resumed", bigPath]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/The upload is kept: `vaultctl attach --resume` finishes it/);
    expect(fs.statSync(path.join(home, "attach.json")).mode & 0o777).toBe(0o600);
    expect(await files("Files", "resumed")).toEqual([]);

    suite.proxy.rewrite = undefined;
    suite.proxy.sent.length = 0;
    expect((await ok(["attach", "--resume"])).stdout).toMatch(/^Attached "report\.bin" \(2\.5 MiB\) to "resumed"/);
    expect(
      suite.proxy.sent
        .filter((s) => s.method === "PUT" && s.path.includes("/chunks/"))
        .map((s) => s.path.replace(/^.*\/chunks\//, "chunk ")),
    ).toEqual(["chunk 2"]);
    expect(fs.existsSync(path.join(home, "attach.json"))).toBe(false);
    const out = tempDir("vaultctl-files-out-");
    await ok(["download", "Files", "resumed", "report.bin", "-o", path.join(out, "copy")]);
    expect(digestOf(path.join(out, "copy"))).toBe(digest(big));
    const nothing = await run(["attach", "--resume"]);
    expect([nothing.code, nothing.stderr]).toEqual([2, expect.stringMatching(/no upload to resume/)]);
  });

  test("a download whose chunk the server changed exits 3 with what happened, and leaves no file", async () => {
    await ok(["item", "add", "Files", "tampered", "--type", "note"]);
    await ok(["attach", "Files", "tampered", bigPath]);
    suite.proxy.edit = (method, p, body, status) => {
      if (method !== "GET" || status !== 200 || !/\/attachments\/[^/]+\/chunks\/1$/.test(p)) return body;
      const data = Buffer.from(body.data, "base64");
      data[100]! ^= 1;
      return { ...body, data: data.toString("base64") };
    };
    const out = tempDir("vaultctl-files-out-");
    const refused = await run(["download", "Files", "tampered", "report.bin", "-o", out]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("A part of this file does not open with the item's key");
    expect(refused.stderr).toContain("[ATTACHMENT_TAMPERED]");
    expect(fs.readdirSync(out)).toEqual([]);
  });

  test("a KeePass attachment comes in as a file; the encrypted export carries it to another vault, the JSON one names it only", async () => {
    const kdbx = path.join(work, "team.kdbx");
    fs.writeFileSync(kdbx, await keepassFile("kp-pass"));
    await ok(["vault", "create", "KeePass"]);
    const imported = await ok(["import", "KeePass", kdbx, "--password-env", "KP_PASS"], { env: { KP_PASS: "kp-pass" } });
    expect(imported.stdout).toContain('Imported 2 items (0 with parts left out) into "KeePass" from a keepass file');
    expect(imported.stdout).toContain("Attached 1 file to the items imported.");
    const [pdf] = await files("KeePass", "scan");
    expect(pdf).toMatchObject({ name: "passport.pdf", size: 8 });
    expect((await ok(["download", "KeePass", "scan", "passport.pdf", "-o", "-"])).stdout).toBe("%PDF-1.4");

    const encrypted = path.join(work, "backup.json");
    const env = { EXPORT_PASS };
    expect((await ok(["export", "KeePass", "--out", encrypted, "--passphrase-env", "EXPORT_PASS", "--json"], { env })).json).toMatchObject({
      carried: 1,
      leftOut: [],
    });
    await ok(["vault", "create", "Restored"]);
    const restored = await ok(["import", "Restored", encrypted, "--password-env", "EXPORT_PASS", "--json"], { env });
    expect(restored.json).toMatchObject({ imported: 2, files: 1, filesFailed: [] });
    const [copy] = await files("Restored", "scan");
    expect(copy).toMatchObject({ name: "passport.pdf", size: 8 });
    expect(copy.id).not.toBe(pdf.id);
    expect((await ok(["download", "Restored", "scan", "passport.pdf", "-o", "-"])).stdout).toBe("%PDF-1.4");

    const clear = path.join(work, "clear.json");
    await ok(["export", "KeePass", "--format", "json", "--out", clear, "--yes"]);
    const text = fs.readFileSync(clear, "utf8");
    expect(text).not.toContain(pdf.id);
    const scan = JSON.parse(text).vaults[0].items.find((i: any) => i.name === "scan");
    expect(scan.attachments).toEqual([{ name: "passport.pdf", size: 8 }]);
  });
});
