/**
 * The transactional outbox: a change and its domain event are committed together, so a
 * process that dies between the commit and the publish loses no audit record. A failpoint kills the
 * real server process (SIGKILL) right after a change is committed, before its event is published;
 * after a restart on the same store, the record arrives, exactly once.
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { Api, registerUser, sharedVault } from "../helpers/client";
import { encryptItem } from "../helpers/crypto";
import { awaitAudit, readAudit } from "../helpers/audit";
import { SQL_ENGINES } from "../helpers/postgres";
import { killAllServers, spawnServer } from "../helpers/process";
import { tempDir } from "../helpers/server";
import { sleep } from "../helpers/wait";

jest.setTimeout(90_000);
afterAll(() => killAllServers());

describe.each(SQL_ENGINES)("on %s", (_engine, openDatabase) => {
  test.each([
    ["between a commit and its publish", "outbox-before-publish"],
    ["between a publish and the audit worker's record", "outbox-after-publish"],
  ])("killed %s, the change's record arrives after a restart, exactly once", async (_when, failpoint) => {
    const database = await openDatabase();
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, REGISTRATION_MODE: "open", JWT_SECRET: Buffer.alloc(32, 9).toString("base64"), ...database.env };
    try {
      // A vault with one item, recorded as usual.
      let server = await spawnServer(env);
      let api = new Api(server.url);
      const owner = await registerUser(api);
      const { vaultId, vaultKey } = await sharedVault(api, owner);
      const before = await awaitAudit(api, owner, 2); // user.registered, vault.created
      await server.kill("SIGTERM");

      // The next change kills the process once it is committed, before its event is published.
      server = await spawnServer({ ...env, VAULT_FAILPOINTS: failpoint });
      api = new Api(server.url);
      const itemId = randomUUID();
      const write = await api
        .post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, "kept", "n") })
        .catch(() => ({ status: "reset" }));
      const exited = await new Promise<boolean>((resolve) => {
        if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve(true);
        const timer = setTimeout(() => resolve(false), 10_000);
        server.child.once("exit", () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      expect(exited).toBe(true);
      expect(server.child.signalCode).toBe("SIGKILL");
      expect([201, "reset"]).toContain(write.status); // answered or not: the commit came first

      // Restarted on the same store: the change stands, and its record arrives once.
      server = await spawnServer(env);
      api = new Api(server.url);
      expect((await api.get(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token })).status).toBe(200);
      const records = await awaitAudit(api, owner, before.length + 1);
      const created = records.filter((r) => r.type === "item.created" && r.itemId === itemId);
      expect(created).toHaveLength(1);
      expect(records).toHaveLength(before.length + 1);
      // Later changes go on as usual, and nothing is recorded twice after more drains.
      expect((await api.delete(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token })).status).toBe(204);
      await awaitAudit(api, owner, before.length + 2);
      await sleep(1_500); // more than a poll of the relay
      const after = await readAudit(api, owner);
      expect(new Set(after.map((r) => r.eventId)).size).toBe(after.length);
      expect(after.map((r) => r.type).slice(-2)).toEqual(["item.created", "item.deleted"]);
      const verify = await api.get(`/audit/verify?orgId=${owner.orgId}`, { token: owner.token });
      expect(verify.body).toMatchObject({ ok: true, count: after.length });
      await server.kill("SIGTERM");
    } finally {
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
