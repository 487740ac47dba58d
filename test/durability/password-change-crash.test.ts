/**
 * A master password change survives a crash: the real server process is killed
 * (SIGKILL, through a failpoint) inside the change's transaction, before its commit, or right
 * after the commit, before the answer. After a restart on the same store exactly one password
 * works, the old one or the new one, and it opens every vault: never neither. On SQLite and
 * PostgreSQL.
 */
import fs from "node:fs";
import { VaultClient } from "../../sdk";
import { SQL_ENGINES } from "../helpers/postgres";
import { killAllServers, spawnServer, type ServerProcess } from "../helpers/process";
import { TEST_KDF } from "../helpers/sdk";
import { tempDir } from "../helpers/server";

jest.setTimeout(120_000);
afterAll(() => killAllServers());

const OLD = "correct horse battery staple";
const NEW = "purple monkey dishwasher 77";

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
    ["before the commit: the old password", "password-change-before-commit", OLD, NEW],
    ["after the commit, before the answer: the new password", "password-change-after-commit", NEW, OLD],
  ])("killed %s works, the other does not, and it opens every vault", async (_when, failpoint, works, refused) => {
    const database = await openDatabase();
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, REGISTRATION_MODE: "open", JWT_SECRET: Buffer.alloc(32, 5).toString("base64"), ...database.env };
    try {
      let server = await spawnServer({ ...env, VAULT_FAILPOINTS: failpoint });
      const ada = new VaultClient({ baseUrl: server.url });
      const email = `ada-${Date.now()}@example.test`;
      await ada.register({ email, password: OLD, kdf: TEST_KDF });
      const vaults = [
        await ada.vaults.create("Notes", "personal"),
        await ada.vaults.create("Bank", "personal"),
        await ada.vaults.create("Team"),
      ];
      await ada.items.add(vaults[1]!.vaultId, { name: "Bank login", fields: { password: "hunter2" } });

      await expect(ada.changePassword(OLD, NEW, { kdf: TEST_KDF })).rejects.toThrow();
      expect(await exited(server)).toBe(true);
      expect(server.child.signalCode).toBe("SIGKILL");

      server = await spawnServer(env);
      const after = new VaultClient({ baseUrl: server.url });
      await expect(new VaultClient({ baseUrl: server.url }).login(email, refused)).rejects.toMatchObject({ status: 401 });
      await after.login(email, works);
      for (const v of vaults) await after.vaults.open(await after.vaults.get(v.vaultId));
      expect((await after.items.list(vaults[1]!.vaultId)).map((i) => i.fields.password)).toEqual(["hunter2"]);
      // And the account goes on: a change made now lands.
      expect((await after.changePassword(works, "a third master password 99", { kdf: TEST_KDF })).vaults).toBe(2);
      await server.kill("SIGTERM");
    } finally {
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
