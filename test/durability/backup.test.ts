/**
 * Backup and restore, as an operator runs them, under concurrent writes:
 * - the embedded store: `admin backup` asks the running server for an online snapshot, `admin
 *   restore` puts it into a fresh DATA_DIR;
 * - PostgreSQL: the documented pg_dump / pg_restore path.
 * After the restore, a server on the copy serves every item acknowledged before the backup began
 * (each decrypts with the vault key the owner unwraps), every item it holds decrypts (none is
 * half-written), and the audit chain verifies.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { randomBytes, randomUUID } from "node:crypto";
import { Api, registerUser, sharedVault } from "../helpers/client";
import { decryptItem, encryptItem, unb64, unwrapShared } from "../helpers/crypto";
import { createTestDatabase } from "../helpers/postgres";
import { killAllServers, spawnServer, type ServerProcess } from "../helpers/process";
import { tempDir } from "../helpers/server";
import { itemWriters, writtenSecret } from "../helpers/writers";
import { sleep } from "../helpers/wait";

jest.setTimeout(120_000);
afterAll(() => killAllServers());

const run = promisify(execFile);
const ADMIN = path.resolve(__dirname, "../../dist/bin/admin.js");
const admin = (env: Record<string, string>, ...args: string[]) =>
  run(process.execPath, [ADMIN, ...args], { env: { ...process.env, ...env } });

/**
 * Writes go on while `backup` runs; then `restored()` starts a server on the copy, where every
 * item acknowledged before the backup began must be, and everything must check out.
 */
async function backupUnderWrites(server: ServerProcess, backup: () => Promise<void>, restored: () => Promise<ServerProcess>) {
  const api = new Api(server.url);
  const owner = await registerUser(api);
  const { vaultId, vaultKey } = await sharedVault(api, owner);
  const load = itemWriters([api], owner, vaultId, vaultKey);
  await sleep(1_000);
  const backupStarted = Date.now();
  await backup();
  const backupEnded = Date.now();
  await sleep(500);
  await load.stop();
  expect(load.writes.every((w) => w.status === 201)).toBe(true);
  const before = load.writes.filter((w) => w.ended < backupStarted);
  const during = load.writes.filter((w) => w.started < backupEnded && w.ended >= backupStarted);
  expect(before.length).toBeGreaterThan(10);
  expect(during.length).toBeGreaterThan(0); // the backup really ran under writes
  await server.kill("SIGTERM");

  const copy = await restored();
  const capi = new Api(copy.url);
  // The signing key is not in a backup: the owner signs in again, with the same credentials.
  const login = await capi.post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } });
  expect(login.status).toBe(200);
  const token = login.body.accessToken;
  const vault = (await capi.get(`/vaults/${vaultId}`, { token })).body;
  const key = unwrapShared(unb64(vault.encryptedVaultKey), owner.keys.rsaPrivate);
  expect(key).toEqual(vaultKey);
  const items: any[] = (await capi.get(`/vaults/${vaultId}/items`, { token })).body.items;
  const held = new Map(items.map((i) => [i.itemId, i]));
  for (const w of before) {
    expect(held.has(w.itemId)).toBe(true);
  }
  for (const item of items) expect(decryptItem(key, item).data).toBe(writtenSecret(item.itemId));
  // Nothing the clients never sent; nothing written after the backup ended.
  const sent = new Set(load.writes.map((w) => w.itemId));
  expect(items.every((i) => sent.has(i.itemId))).toBe(true);
  const late = new Set(load.writes.filter((w) => w.started > backupEnded).map((w) => w.itemId));
  expect(items.some((i) => late.has(i.itemId))).toBe(false);
  const verify = await capi.get(`/audit/verify?orgId=${owner.orgId}`, { token });
  expect(verify.body).toMatchObject({ ok: true });
  expect(verify.body.count).toBeGreaterThan(0);
  await copy.kill("SIGTERM");
}

describe("the embedded store", () => {
  test("an online backup under concurrent writes, restored into a fresh DATA_DIR, serves every item acknowledged before it", async () => {
    const dataDir = tempDir();
    const fresh = tempDir();
    const file = path.join(tempDir("vault-backup-"), "vault.backup");
    const server = await spawnServer({ DATA_DIR: dataDir, REGISTRATION_MODE: "open" });
    await backupUnderWrites(
      server,
      async () => {
        const { stdout } = await admin({ DATA_DIR: dataDir }, "backup", file);
        expect(stdout).toMatch(/written by the running server/);
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      },
      async () => {
        const { stdout } = await admin({ DATA_DIR: fresh }, "restore", file);
        expect(stdout).toMatch(/Restored/);
        return spawnServer({ DATA_DIR: fresh });
      },
    );
  });

  test("an online backup is private from its first byte: nothing under the target's folder is ever open to other users while it is written", async () => {
    const dataDir = tempDir();
    const dir = tempDir("vault-backup-");
    fs.chmodSync(dir, 0o755); // a folder others may list and enter, as /var/backups is
    const server = await spawnServer({ DATA_DIR: dataDir, REGISTRATION_MODE: "open" });
    const api = new Api(server.url);
    const owner = await registerUser(api);
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    // About 40 MB, so that the copy takes a while to write.
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => {
          const itemId = randomUUID();
          const data = `${batch}-${i}-`.padEnd(190_000, "x");
          return api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, data, "n") });
        }),
      );
    }
    const file = path.join(dir, "vault.backup");
    // Everything that appears under `dir`, with its mode, as often as it can be looked at.
    const seen = new Map<string, number>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const look = (folder: string) => {
          for (const name of fs.readdirSync(folder)) {
            const full = path.join(folder, name);
            try {
              const st = fs.lstatSync(full);
              seen.set(full, (seen.get(full) ?? 0) | (st.mode & 0o777)); // every permission it ever had
              if (st.isDirectory() && (st.mode & 0o005) !== 0) look(full);
            } catch {
              // gone meanwhile
            }
          }
        };
        try {
          look(dir);
        } catch {
          // gone meanwhile
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    await admin({ DATA_DIR: dataDir }, "backup", file);
    watching = false;
    await watcher;
    await server.kill("SIGTERM");
    expect(seen.size).toBeGreaterThan(1); // the partial copy was seen, not only the result
    // Every entry ever seen, whatever its moment: closed to group and others.
    for (const [name, mode] of seen) expect([name, (mode & 0o077).toString(8)]).toEqual([name, "0"]);
    expect(fs.statSync(file).size).toBeGreaterThan(30_000_000);
  });

  test("the refusals: an existing backup file, a restore over a store or under a running server, a file that is not a backup", async () => {
    const dataDir = tempDir();
    const dir = tempDir("vault-backup-");
    const file = path.join(dir, "vault.backup");
    const server = await spawnServer({ DATA_DIR: dataDir });
    await admin({ DATA_DIR: dataDir }, "backup", file);
    await expect(admin({ DATA_DIR: dataDir }, "backup", file)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/exists already/),
    });
    await expect(admin({ DATA_DIR: dataDir }, "restore", file, "--force")).rejects.toMatchObject({
      stderr: expect.stringMatching(/server is running/),
    });
    await server.kill("SIGTERM");

    // Offline: the command opens the store itself.
    const offline = path.join(dir, "offline.backup");
    expect((await admin({ DATA_DIR: dataDir }, "backup", offline)).stdout).toMatch(/Backup written: /);
    await expect(admin({ DATA_DIR: dataDir }, "restore", offline)).rejects.toMatchObject({
      stderr: expect.stringMatching(/holds a store already/),
    });
    expect((await admin({ DATA_DIR: dataDir }, "restore", offline, "--force")).stdout).toMatch(/Restored/);

    const junk = path.join(dir, "junk");
    fs.writeFileSync(junk, "not a database at all, just some bytes ".repeat(200));
    await expect(admin({ DATA_DIR: tempDir() }, "restore", junk)).rejects.toMatchObject({
      stderr: expect.stringMatching(/not a SQLite database|not a readable/),
    });
    await expect(admin({ DATA_DIR: dataDir, DATABASE_URL: "postgres://x@127.0.0.1/db" }, "backup", file)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/pg_dump/),
    });
    // A DATA_DIR with no store and no server is a wrong path, not an empty backup.
    const empty = tempDir();
    await expect(admin({ DATA_DIR: empty }, "backup", path.join(dir, "empty.backup"))).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/holds no store .* nothing to back up/),
    });
    expect(fs.existsSync(path.join(dir, "empty.backup"))).toBe(false);
    // The restored store serves.
    const again = await spawnServer({ DATA_DIR: dataDir });
    expect((await new Api(again.url).get("/health")).status).toBe(200);
    await again.kill("SIGTERM");
  });
});

test("after a restore, a cursor from before it is a full read, even once new writes bring the counter back up to it", async () => {
  const dataDir = tempDir();
  const file = path.join(tempDir("vault-backup-"), "vault.backup");
  // One signing key for both servers (a backup holds no key): the owner's token works on the copy.
  const JWT_SECRET = randomBytes(32).toString("base64");
  let server = await spawnServer({ DATA_DIR: dataDir, REGISTRATION_MODE: "open", JWT_SECRET });
  let api = new Api(server.url);
  const owner = await registerUser(api);
  const { vaultId, vaultKey } = await sharedVault(api, owner);
  const create = (a: Api, id = randomUUID()) =>
    a.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, id, "x", "n") });
  await create(api);
  // A delta read before the backup: the store's change epoch is in it.
  expect((await api.get(`/vaults/${vaultId}/items?since=0`, { token: owner.token })).body.full).toBe(false);
  await admin({ DATA_DIR: dataDir }, "backup", file);
  // After the backup: three more writes, and a client that followed them.
  for (let i = 0; i < 3; i++) await create(api);
  const cursor = (await api.get(`/vaults/${vaultId}/items?since=0`, { token: owner.token })).body.cursor;
  await server.kill("SIGTERM");
  const restored = tempDir();
  await admin({ DATA_DIR: restored }, "restore", file);
  server = await spawnServer({ DATA_DIR: restored, JWT_SECRET });
  api = new Api(server.url);
  // Other writes on the restored store: its counter is where the client's cursor was.
  const other = randomUUID();
  for (let i = 0; i < 3; i++) expect((await create(api, i === 0 ? other : undefined)).status).toBe(201);
  const answer = (await api.get(`/vaults/${vaultId}/items?since=${cursor}`, { token: owner.token })).body;
  expect(answer).toMatchObject({ full: true, items: [] });
  await server.kill("SIGTERM");
});

test("PostgreSQL: pg_dump under concurrent writes, pg_restore into a new database, serves every item acknowledged before the dump", async () => {
  const source = await createTestDatabase();
  const target = await createTestDatabase();
  const file = path.join(tempDir("vault-backup-"), "vault.pgdump");
  try {
    const server = await spawnServer({ DATA_DIR: tempDir(), DATABASE_URL: source.url, REGISTRATION_MODE: "open" });
    await backupUnderWrites(
      server,
      async () => {
        // As the README says: a custom-format dump, one consistent snapshot.
        await run("pg_dump", ["--format=custom", "--no-owner", `--file=${file}`, source.url]);
      },
      async () => {
        await run("pg_restore", ["--no-owner", "--exit-on-error", `--dbname=${target.url}`, file]);
        return spawnServer({ DATA_DIR: tempDir(), DATABASE_URL: target.url });
      },
    );
  } finally {
    await source.drop();
    await target.drop();
  }
});
