/**
 * A backup restores completely: authenticator apps keep working. The key that seals their secrets
 * (DATA_DIR/seal-secret, SEAL_SECRET unset) travels in the backup and is put back by `restore`; a
 * configured SEAL_SECRET is checked instead; a backup whose key is missing is refused in a sentence
 * naming it. Real processes (`npm run admin`, the built server), real TOTP codes computed here.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { Api, registerUser, type TestUser } from "../helpers/client";
import { killAllServers, spawnServer } from "../helpers/process";
import { tempDir } from "../helpers/server";
import { fromBase32, referenceTotp } from "../helpers/totp";

jest.setTimeout(120_000);
afterAll(() => killAllServers());

const run = promisify(execFile);
const ADMIN = path.resolve(__dirname, "../../dist/bin/admin.js");
const admin = (env: Record<string, string>, ...args: string[]) =>
  run(process.execPath, [ADMIN, ...args], { env: { ...process.env, SEAL_SECRET: "", ...env } });

const codeAt = (secret: string, offsetSteps = 0) => referenceTotp(fromBase32(secret), Date.now() + offsetSteps * 30_000);

/** A user with an authenticator app: its secret and recovery codes. */
async function withTotp(api: Api): Promise<{ user: TestUser; secret: string; recoveryCodes: string[] }> {
  const user = await registerUser(api);
  const setup = await api.post("/users/me/factors/totp/setup", { token: user.token });
  const enrolled = await api.post("/users/me/factors/totp", {
    token: user.token,
    body: { name: "Phone", setupToken: setup.body.setupToken, code: codeAt(setup.body.secret), authHash: user.bundle.authHash },
  });
  expect(enrolled.status).toBe(201);
  return { user, secret: setup.body.secret, recoveryCodes: enrolled.body.recoveryCodes };
}

/** Password, then a second step: its status. */
async function signIn(api: Api, user: TestUser, answer: { totpCode?: string; recoveryCode?: string }): Promise<number> {
  const first = await api.post("/auth/login", { body: { email: user.email, authHash: user.bundle.authHash } });
  expect(first.body).toMatchObject({ secondFactorRequired: true });
  return (await api.post("/auth/login/second-factor", { body: { stepToken: first.body.stepToken, ...answer } })).status;
}

/** A server with a TOTP user on `env`, backed up online into a folder that does not exist yet; then stopped. */
async function backedUp(env: Record<string, string>) {
  const dataDir = tempDir();
  const server = await spawnServer({ SEAL_SECRET: "", ...env, DATA_DIR: dataDir, REGISTRATION_MODE: "open" });
  const totp = await withTotp(new Api(server.url));
  const file = path.join(tempDir("vault-backup-"), "not", "yet", "there", "vault.backup");
  const { stdout } = await admin({ ...env, DATA_DIR: dataDir }, "backup", file);
  expect(stdout).toMatch(/written by the running server/);
  expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  await server.kill("SIGTERM");
  return { ...totp, file, dataDir };
}

test("the generated seal key travels in the backup: restored into a fresh DATA_DIR, the authenticator app signs in", async () => {
  const { user, secret, file, dataDir } = await backedUp({});
  const fresh = tempDir();
  expect((await admin({ DATA_DIR: fresh }, "restore", file)).stdout).toMatch(/Restored/);
  const copy = await spawnServer({ DATA_DIR: fresh, SEAL_SECRET: "" });
  expect(await signIn(new Api(copy.url), user, { totpCode: codeAt(secret, 1) })).toBe(200);
  await copy.kill("SIGTERM");
  // The key is back as a file of its own, owner-only; the restored store does not hold it.
  const key = path.join(fresh, "seal-secret");
  expect(fs.readFileSync(key, "utf8")).toBe(fs.readFileSync(path.join(dataDir, "seal-secret"), "utf8"));
  expect(fs.statSync(key).mode & 0o777).toBe(0o600);
  const store = new DatabaseSync(path.join(fresh, "vault.sqlite"), { readOnly: true });
  expect(store.prepare("SELECT name FROM sqlite_master WHERE name = 'backup_secrets'").all()).toEqual([]);
  store.close();
});

test("a backup without its key is refused, naming it; --without-seal-key restores, and recovery codes sign in", async () => {
  const { user, file, recoveryCodes } = await backedUp({});
  // As a backup from before backups carried the key: the same file, without it.
  const old = path.join(path.dirname(file), "old.backup");
  fs.copyFileSync(file, old);
  const db = new DatabaseSync(old);
  db.exec("DROP TABLE backup_secrets");
  db.close();
  const fresh = tempDir();
  await expect(admin({ DATA_DIR: fresh }, "restore", old)).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringMatching(
      /^admin: The backup's 1 authenticator app secret\(s\) are sealed with the key of the server it was made on .*--without-seal-key/m,
    ),
  });
  expect(fs.existsSync(path.join(fresh, "vault.sqlite"))).toBe(false);
  // A SEAL_SECRET other than the key the backup carries: refused too.
  await expect(admin({ DATA_DIR: tempDir(), SEAL_SECRET: randomBytes(32).toString("base64") }, "restore", file)).rejects.toMatchObject({
    stderr: expect.stringMatching(/carries the key that seals its 1 authenticator app secret\(s\), and SEAL_SECRET is another key/),
  });

  expect((await admin({ DATA_DIR: fresh }, "restore", old, "--without-seal-key")).stdout).toMatch(/Restored/);
  const copy = await spawnServer({ DATA_DIR: fresh, SEAL_SECRET: "" });
  expect(await signIn(new Api(copy.url), user, { recoveryCode: recoveryCodes[0]! })).toBe(200);
  await copy.kill("SIGTERM");
});

test("a configured SEAL_SECRET stays the operator's: the backup names it by id; restored with it, the app signs in; without it, refused", async () => {
  const SEAL_SECRET = randomBytes(32).toString("base64");
  const { user, secret, file } = await backedUp({ SEAL_SECRET });
  expect(fs.readFileSync(file).includes(Buffer.from(SEAL_SECRET))).toBe(false);
  await expect(admin({ DATA_DIR: tempDir() }, "restore", file)).rejects.toMatchObject({
    stderr: expect.stringMatching(/sealed with the key with id [\w-]{16}, which this backup does not carry .*set SEAL_SECRET to that key/),
  });
  const fresh = tempDir();
  expect((await admin({ DATA_DIR: fresh, SEAL_SECRET }, "restore", file)).stdout).toMatch(/Restored/);
  const copy = await spawnServer({ DATA_DIR: fresh, SEAL_SECRET });
  expect(await signIn(new Api(copy.url), user, { totpCode: codeAt(secret, 1) })).toBe(200);
  await copy.kill("SIGTERM");
});

test("a backup into a folder that cannot be made is refused in a sentence, not an errno", async () => {
  const dataDir = tempDir();
  const server = await spawnServer({ DATA_DIR: dataDir });
  const blocker = path.join(tempDir("vault-backup-"), "a-file");
  fs.writeFileSync(blocker, "");
  await expect(admin({ DATA_DIR: dataDir }, "backup", path.join(blocker, "vault.backup"))).rejects.toMatchObject({
    code: 1,
    stderr: `admin: The backup cannot be written into ${blocker}: it is a file, not a folder\n`,
  });
  await server.kill("SIGTERM");
});
