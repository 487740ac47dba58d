/** Every change of state emits its domain event, with ids only; no secret reaches events or logs. */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import type { ServiceSchema } from "moleculer";
import { Api, invite, newOrg, registerUser, rekeyBody, sharedVault, shareBody } from "./helpers/client";
import { encryptItem, newVaultKey } from "./helpers/crypto";
import { killAllServers, spawnServer } from "./helpers/process";
import { startTestServer, tempDir } from "./helpers/server";

afterAll(killAllServers);

const EVENT_KEYS = ["type", "at", "actorId", "orgId", "vaultId", "itemId", "targetUserId", "inviteId"];

test("each route that changes state emits its event, with ids and types only", async () => {
  const server = await startTestServer();
  const seen: Array<Record<string, unknown>> = [];
  server.node.broker.createService({
    name: "event-recorder",
    events: { "**"(ctx: { params: Record<string, unknown>; eventName: string }) { if (!ctx.eventName.startsWith("$")) seen.push({ ...ctx.params, eventName: ctx.eventName }); } },
  } as unknown as ServiceSchema);
  await server.node.broker.waitForServices("event-recorder");
  try {
    const api = new Api(server.url);
    const { owner, users: [member] } = await newOrg(api, ["member"]);
    const { vaultId, vaultKey } = await sharedVault(api, owner, [[member!, "member"]]);
    const itemId = randomUUID();
    await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, "a", "b") });
    await api.put(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, "c", "d") });
    await api.patch(`/vaults/${vaultId}`, { token: owner.token, body: { name: "renamed" } });
    await api.patch(`/vaults/${vaultId}/members/${member!.userId}`, { token: owner.token, body: { role: "admin" } });
    await api.delete(`/vaults/${vaultId}/members/${member!.userId}`, { token: owner.token });
    const current = (await api.get(`/vaults/${vaultId}/items`, { token: owner.token })).body.items;
    const newKey = newVaultKey();
    const items = current.map((it: any) => encryptItem(newKey, vaultId, it.itemId, "x", "y"));
    expect((await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekeyBody(newKey, owner, [owner], items) })).status).toBe(204);
    await api.delete(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token });
    const inv = await invite(api, owner);
    await api.delete(`/invites/${inv.inviteId}`, { token: owner.token });
    await api.delete(`/vaults/${vaultId}`, { token: owner.token });
    await new Promise((r) => setTimeout(r, 50));

    const types = seen.map((e) => e.type);
    for (const t of ["user.registered", "invite.created", "invite.consumed", "vault.created", "vault.member.added", "item.created", "item.updated",
      "vault.renamed", "vault.member.role_changed", "vault.member.removed", "vault.rekeyed", "item.deleted", "invite.revoked", "vault.deleted"]) {
      expect(types).toContain(t);
    }
    const removed = seen.find((e) => e.type === "vault.member.removed")!;
    expect(removed).toMatchObject({ actorId: owner.userId, orgId: owner.orgId, vaultId, targetUserId: member!.userId });
    for (const e of seen) {
      expect(e.eventName).toBe(e.type);
      for (const key of Object.keys(e)) if (key !== "eventName") expect(EVENT_KEYS).toContain(key);
    }
    const serialized = JSON.stringify(seen);
    for (const secret of [owner.token, inv.token, owner.bundle.authHash, items[0].encryptedData, shareBody(vaultKey, owner, member!).wrapSignature.slice(0, 20)]) {
      expect(serialized).not.toContain(secret);
    }
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
    const log = server.output();
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [owner.token, owner.refreshToken, inv.token, owner.bundle.authHash, owner.bundle.encryptedPrivateKey, item.encryptedData]) {
      expect(log).not.toContain(secret);
    }
  } finally {
    await server.kill("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
