/** Every change of state leaves its audit record, with ids only; no secret reaches the audit log or the logs. */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { Api, invite, registerUser, sharedVault } from "../helpers/client";
import { awaitAudit, everyStateChange, expectRecords, readAudit } from "../helpers/audit";
import { encryptItem } from "../helpers/crypto";
import { killAllServers, spawnServer } from "../helpers/process";
import { startTestServer, tempDir } from "../helpers/server";

afterAll(killAllServers);

test("embedded: each route that changes state leaves exactly one audit record, with its actor and subject, and nothing secret", async () => {
  const server = await startTestServer({ REGISTRATION_MODE: "open" });
  try {
    const api = new Api(server.url);
    const { owner, member, expected, secrets } = await everyStateChange(api);
    const records = await awaitAudit(api, owner, expected.length);
    expectRecords(records, expected, owner.orgId);
    const serialized = JSON.stringify(records);
    for (const secret of secrets) expect(serialized).not.toContain(secret);

    const verify = await api.get(`/audit/verify?orgId=${owner.orgId}`, { token: owner.token });
    expect(verify).toMatchObject({ status: 200, body: { ok: true, count: expected.length, head: records.at(-1).hash } });

    // Newest first, in pages that chain through nextBefore.
    const page = await api.get(`/audit?orgId=${owner.orgId}&limit=5`, { token: owner.token });
    expect(page.body.events.map((r: any) => r.seq)).toEqual([16, 15, 14, 13, 12]);
    expect(page.body.nextBefore).toBe(12);
    const next = await api.get(`/audit?orgId=${owner.orgId}&limit=5&before=12`, { token: owner.token });
    expect(next.body.events.map((r: any) => r.seq)).toEqual([11, 10, 9, 8, 7]);
    const last = await api.get(`/audit?orgId=${owner.orgId}&before=3`, { token: owner.token });
    expect(last.body).toEqual({ events: [records[1], records[0]], nextBefore: null });
    expect((await readAudit(api, owner, 3)).map((r) => r.seq)).toEqual(records.map((r) => r.seq));

    // Owners and admins of the organization only; the rest of the contract's checks in order.
    const outsider = await registerUser(api);
    for (const path of [`/audit?orgId=${owner.orgId}`, `/audit/verify?orgId=${owner.orgId}`]) {
      expect((await api.get(path, { token: member.token })).status).toBe(403);
      expect((await api.get(path, { token: outsider.token })).body.error.code).toBe("FORBIDDEN");
      expect((await api.get(path)).status).toBe(401);
    }
    expect(await awaitAudit(api, outsider, 1)).toEqual([
      expect.objectContaining({ type: "user.registered", actorId: outsider.userId, seq: 1 }),
    ]);
    for (const query of [
      "",
      "?limit=5",
      `?orgId=${owner.orgId}&limit=0`,
      `?orgId=${owner.orgId}&limit=501`,
      `?orgId=${owner.orgId}&limit=x`,
      `?orgId=${owner.orgId}&limit=2.5`,
      `?orgId=${owner.orgId}&before=0`,
      `?orgId=${owner.orgId}&before=-3`,
      `?orgId=${owner.orgId}&before=2147483648`,
    ]) {
      const res = await api.get(`/audit${query}`, { token: owner.token });
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, "INVALID"]);
    }
    expect((await api.get(`/audit?orgId=${owner.orgId}&limit=500`, { token: owner.token })).body.events).toHaveLength(16);
    expect((await api.get("/audit/verify", { token: owner.token })).status).toBe(400);
  } finally {
    await server.stop();
  }
});

test("no token, hash or ciphertext reaches the logs, even at debug level", async () => {
  const dataDir = tempDir();
  const server = await spawnServer({ DATA_DIR: dataDir, LOG_LEVEL: "debug" });
  try {
    const api = new Api(server.url);
    const owner = await registerUser(api);
    const inv = await invite(api, owner);
    await api.post("/invites/redeem", { body: { token: inv.token } });
    const { vaultId, vaultKey } = await sharedVault(api, owner);
    const item = encryptItem(vaultKey, vaultId, randomUUID(), "secret", "name");
    await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: item });
    await api.post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } });
    await api.post("/auth/login", { raw: `{"email": "${owner.email}", "authHash": "${owner.bundle.authHash}"` }); // malformed JSON quoting the secret
    await api.post("/auth/refresh", { body: { refreshToken: owner.refreshToken } });
    // Read once the process has exited: every line it wrote is in, up to its last one.
    expect(await server.kill("SIGTERM")).toBe(0);
    const log = server.output();
    expect(log).toMatch(/SIGTERM: stopping/);
    for (const secret of [
      owner.token,
      owner.refreshToken,
      inv.token,
      owner.bundle.authHash,
      owner.bundle.encryptedPrivateKey,
      item.encryptedData,
    ]) {
      expect(log).not.toContain(secret);
    }
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
