/**
 * A key rotation survives a crash: the real server process is killed (SIGKILL, through a
 * failpoint) inside the rotation's transaction, before its commit, or right after the commit,
 * before the answer. After a restart on the same store the account holds either its old keys or its
 * new ones, never a mix: the login opens them, its key log ends with them, and every vault opens.
 * On SQLite and PostgreSQL.
 */
import fs from "node:fs";
import { VaultClient } from "../../sdk";
import { keyFingerprint } from "../../protocol/crypto/keys";
import { SQL_ENGINES } from "../helpers/postgres";
import { killAllServers, spawnServer, type ServerProcess } from "../helpers/process";
import { TEST_KDF } from "../helpers/sdk";
import { tempDir } from "../helpers/server";

jest.setTimeout(120_000);
afterAll(() => killAllServers());

const PASSWORD = "correct horse battery staple";

function exited(server: ServerProcess): Promise<boolean> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve(true);
    const timer = setTimeout(() => resolve(false), 10_000);
    server.child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe.each(SQL_ENGINES)("on %s", (_engine, openDatabase) => {
  test.each([
    ["before the commit: the old keys", "key-rotation-before-commit", 1],
    ["after the commit, before the answer: the new keys", "key-rotation-after-commit", 2],
  ])("killed %s, whole, and every vault opens", async (_when, failpoint, keyVersion) => {
    const database = await openDatabase();
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, REGISTRATION_MODE: "open", JWT_SECRET: Buffer.alloc(32, 5).toString("base64"), ...database.env };
    try {
      let server = await spawnServer({ ...env, VAULT_FAILPOINTS: failpoint });
      const ada = new VaultClient({ baseUrl: server.url });
      const email = `ada-${Date.now()}@example.test`;
      await ada.register({ email, password: PASSWORD, kdf: TEST_KDF, orgName: "Acme" });
      const vaults = [await ada.vaults.create("Notes", "personal"), await ada.vaults.create("Team")];
      await ada.items.add(vaults[1]!.vaultId, { name: "GitHub", fields: { password: "team secret" } });
      const oldKeys = await keyFingerprint(ada.account);

      await expect(ada.keys.rotate({ rsaBits: 2048 })).rejects.toThrow();
      expect(await exited(server)).toBe(true);
      expect(server.child.signalCode).toBe("SIGKILL");

      server = await spawnServer(env);
      const after = new VaultClient({ baseUrl: server.url });
      await after.login(email, PASSWORD);
      const log = await after.keys.log(after.account.userId);
      expect(log.map((e) => e.version)).toEqual(keyVersion === 1 ? [1] : [1, 2]);
      expect((await keyFingerprint(after.account)) === oldKeys).toBe(keyVersion === 1);
      for (const v of vaults) await after.vaults.open(await after.vaults.get(v.vaultId));
      expect((await after.items.list(vaults[1]!.vaultId)).map((i) => i.fields.password)).toEqual(["team secret"]);
      // And the account goes on: a rotation made now lands.
      expect((await after.keys.rotate({ rsaBits: 2048 })).keyVersion).toBe(keyVersion + 1);
      await server.kill("SIGTERM");
    } finally {
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
