/**
 * The audit log as a client sees it: a scenario that calls every route that changes state once
 * (and some that change nothing), the records it must leave, and reading the log back.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Api, invite, registerUser, rekeyBody, sharedVault, shareBody, type TestUser } from "./client";
import { encryptItem } from "./crypto";
import { sleep } from "./wait";
import type { VaultClient } from "../../sdk";

export interface ExpectedRecord {
  type: string;
  actorId: string;
  vaultId?: string;
  itemId?: string;
  targetUserId?: string;
  inviteId?: string;
}

function must(status: number, expected: number, what: string): void {
  if (status !== expected) throw new Error(`${what}: ${status}, expected ${expected}`);
}

/**
 * Every state-changing route once, by an owner and an invited member of a new organization, in
 * order; refused requests and session routes in between, which record nothing.
 */
export async function everyStateChange(
  api: Api,
): Promise<{ owner: TestUser; member: TestUser; expected: ExpectedRecord[]; secrets: string[] }> {
  const owner = await registerUser(api);
  const inv = await invite(api, owner);
  const member = await registerUser(api, { inviteToken: inv.token, email: inv.email });
  const { vaultId, vaultKey } = await sharedVault(api, owner, [[member, "member"]]);
  const itemId = randomUUID();
  const item = encryptItem(vaultKey, vaultId, itemId, "secret", "name");
  must((await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: item })).status, 201, "item create");
  must((await api.post(`/vaults/${vaultId}/items`, { token: owner.token, body: item })).status, 409, "duplicate item");
  must(
    (await api.put(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token, body: encryptItem(vaultKey, vaultId, itemId, "s2", "n2") }))
      .status,
    200,
    "item update",
  );
  must((await api.patch(`/vaults/${vaultId}`, { token: member.token, body: { name: "nope" } })).status, 403, "member rename");
  must((await api.patch(`/vaults/${vaultId}`, { token: owner.token, body: { name: "renamed" } })).status, 200, "rename");
  must(
    (await api.patch(`/vaults/${vaultId}/members/${member.userId}`, { token: owner.token, body: { role: "admin" } })).status,
    200,
    "role change",
  );
  must((await api.delete(`/vaults/${vaultId}/members/${member.userId}`, { token: owner.token })).status, 200, "remove member");
  const newKey = randomBytes(32);
  const rekey = rekeyBody(newKey, owner, [owner], [encryptItem(newKey, vaultId, itemId, "s3", "n3")]);
  must((await api.post(`/vaults/${vaultId}/rekey`, { token: owner.token, body: rekey })).status, 204, "rekey");
  must((await api.delete(`/vaults/${vaultId}/items/${itemId}`, { token: owner.token })).status, 204, "item delete");
  const inv2 = await invite(api, owner, "admin");
  must((await api.delete(`/invites/${inv2.inviteId}`, { token: owner.token })).status, 204, "revoke");
  must((await api.delete(`/invites/${inv2.inviteId}`, { token: owner.token })).status, 204, "revoke again");
  const session = await api.post("/auth/login", { body: { email: owner.email, authHash: owner.bundle.authHash } });
  const refreshed = await api.post("/auth/refresh", { body: { refreshToken: session.body.refreshToken } });
  must(
    (await api.post("/auth/logout", { token: refreshed.body.accessToken, body: { refreshToken: refreshed.body.refreshToken } })).status,
    204,
    "logout",
  );
  must((await api.delete(`/vaults/${vaultId}`, { token: owner.token })).status, 204, "vault delete");

  const o = owner.userId;
  const expected: ExpectedRecord[] = [
    { type: "user.registered", actorId: o, targetUserId: o },
    { type: "invite.created", actorId: o, inviteId: inv.inviteId },
    { type: "invite.consumed", actorId: member.userId, inviteId: inv.inviteId },
    { type: "user.registered", actorId: member.userId, targetUserId: member.userId },
    { type: "vault.created", actorId: o, vaultId },
    { type: "vault.member.added", actorId: o, vaultId, targetUserId: member.userId },
    { type: "item.created", actorId: o, vaultId, itemId },
    { type: "item.updated", actorId: o, vaultId, itemId },
    { type: "vault.renamed", actorId: o, vaultId },
    { type: "vault.member.role_changed", actorId: o, vaultId, targetUserId: member.userId },
    { type: "vault.member.removed", actorId: o, vaultId, targetUserId: member.userId },
    { type: "vault.rekeyed", actorId: o, vaultId },
    { type: "item.deleted", actorId: o, vaultId, itemId },
    { type: "invite.created", actorId: o, inviteId: inv2.inviteId },
    { type: "invite.revoked", actorId: o, inviteId: inv2.inviteId },
    { type: "vault.deleted", actorId: o, vaultId },
  ];
  const secrets = [
    owner.token,
    owner.refreshToken,
    inv.token,
    inv2.token,
    owner.bundle.authHash,
    item.encryptedData,
    rekey.newKeys[0]!.encryptedVaultKey,
    shareBody(vaultKey, owner, member).encryptedVaultKey.slice(0, 40),
  ];
  return { owner, member, expected, secrets };
}

/** The whole log of the caller's organization, oldest first, read page by page. */
export async function readAudit(api: Api, user: TestUser, pageSize = 500): Promise<any[]> {
  const out: any[] = [];
  let before: number | null | undefined;
  for (;;) {
    const q = `/audit?orgId=${user.orgId}&limit=${pageSize}${before ? `&before=${before}` : ""}`;
    const res = await api.get(q, { token: user.token });
    if (res.status !== 200) throw new Error(`GET ${q}: ${res.status} ${JSON.stringify(res.body)}`);
    out.push(...res.body.events);
    before = res.body.nextBefore;
    if (before === null) return out.reverse();
  }
}

/** Waits until the log holds `count` records, then a little longer, to see that no more come. */
export async function awaitAudit(api: Api, user: TestUser, count: number, timeoutMs = 30_000): Promise<any[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const records = await readAudit(api, user);
    if (records.length >= count) {
      await sleep(500);
      return readAudit(api, user);
    }
    if (Date.now() > end) throw new Error(`the audit log holds ${records.length} records after ${timeoutMs} ms, not ${count}`);
    await sleep(100);
  }
}

/** Each record as the contract shapes it, in seq order from 1, chained, with the expected actor and subject. */
export function expectRecords(records: any[], expected: ExpectedRecord[], orgId: string): void {
  expect(records.map((r) => ({ ...r, eventId: undefined, seq: undefined, at: undefined, prevHash: undefined, hash: undefined }))).toEqual(
    expected.map((e) => ({ ...e, orgId, eventId: undefined, seq: undefined, at: undefined, prevHash: undefined, hash: undefined })),
  );
  records.forEach((r, i) => {
    expect(Object.keys(r).sort()).toEqual(
      [
        "actorId",
        "at",
        "eventId",
        "hash",
        "orgId",
        "prevHash",
        "seq",
        "type",
        ...Object.keys(expected[i]!).filter((k) => k !== "type" && k !== "actorId"),
      ].sort(),
    );
    expect(r.seq).toBe(i + 1);
    expect(r.prevHash).toBe(i === 0 ? "0".repeat(64) : records[i - 1].hash);
    // The documented canonical form, recomputed as a client would.
    const canonical = [
      r.prevHash,
      r.eventId,
      r.seq,
      r.type,
      r.at,
      r.actorId,
      r.orgId,
      r.vaultId ?? null,
      r.itemId ?? null,
      r.targetUserId ?? null,
      r.inviteId ?? null,
    ];
    expect(r.hash).toBe(createHash("sha256").update(JSON.stringify(canonical)).digest("hex"));
    expect(r.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
  expect(new Set(records.map((r) => r.eventId)).size).toBe(records.length);
}

/** Every record of a client's organization, newest first, through its honest pages (500 at a time). */
export async function allAuditRecords(client: VaultClient): Promise<any[]> {
  const out: any[] = [];
  let before: number | null | undefined;
  do {
    const page = await client.audit.log({ limit: 500, before: before ?? undefined });
    out.push(...page.events);
    before = page.nextBefore;
  } while (before);
  return out;
}
