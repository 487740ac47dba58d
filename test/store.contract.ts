/**
 * The store port's contract, run against every adapter (test/store.*.test.ts). It calls the port
 * directly, with real keys and signatures, and checks what the services rely on.
 */
import { randomUUID } from "node:crypto";
import type { NewUser, Store } from "../lib/store/port";
import type { Invite } from "../lib/domain/invites";
import type { DomainEvent } from "../lib/domain/events";
import { auditHash, EMPTY_HEAD, verifyAuditChain } from "../lib/domain/audit";
import { decideCreateRoster } from "../lib/domain/vault-decisions";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared, type UserKeys } from "./helpers/crypto";
import { Chain, createLink, fingerprintOf, wrapHash } from "./helpers/roster";

const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

interface Person {
  user: NewUser;
  keys: UserKeys;
  userId: string;
  orgId: string;
}

async function newPerson(email = `${randomUUID()}@example.test`): Promise<{ user: NewUser; keys: UserKeys }> {
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  return {
    keys,
    user: { ...bundle, userId: randomUUID(), email, authHash: "scrypt$stored", createdAt: at() },
  };
}

function wrapFor(vaultKey: Buffer, holder: Person, sender: Person) {
  const wrapped = wrapShared(vaultKey, holder.user.publicKey);
  return { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, sender.keys.edPrivate)) };
}

function event(orgId: string, type: DomainEvent["type"] = "item.created", extra: Partial<DomainEvent> = {}): DomainEvent {
  return { eventId: randomUUID(), type, at: at(), actorId: randomUUID(), orgId, vaultId: randomUUID(), itemId: randomUUID(), ...extra };
}

function pendingInvite(orgId: string, inviterId: string, email: string, expiresAt = at(3600_000)): Invite {
  return { inviteId: randomUUID(), orgId, email, role: "member", inviterId, status: "pending", expiresAt, createdAt: at() };
}

export function describeStoreContract(adapter: string, open: () => Promise<Store>, close: (store: Store) => Promise<void>): void {
  describe(`store contract: ${adapter}`, () => {
    let store: Store;
    let owner: Person;

    async function join(role: "admin" | "member" = "member"): Promise<Person> {
      const p = await newPerson();
      const inv = { ...pendingInvite(owner.orgId, owner.userId, p.user.email), role };
      await store.createInvite(inv, randomUUID());
      const rec = await store.registerWithInvite(p.user, inv.inviteId, at());
      return { ...p, userId: rec.userId, orgId: rec.orgId };
    }

    async function vaultWith(members: Person[]) {
      const vaultKey = Buffer.alloc(32, 9);
      const vault = await store.createVault({ vaultId: randomUUID(), orgId: owner.orgId, name: "v", type: "shared", ownerId: owner.userId, ...wrapFor(vaultKey, owner, owner) }, at());
      for (const m of members) await store.addMember(vault.vaultId, owner.userId, { userId: m.userId, role: "member", ...wrapFor(vaultKey, m, owner) }, at());
      return { vaultId: vault.vaultId, vaultKey };
    }

    beforeAll(async () => {
      store = await open();
      const p = await newPerson();
      const rec = await store.registerOwnerOfNewOrg(p.user, { orgId: randomUUID(), name: "Org", createdAt: at() }, { onlyIfFirstUser: true });
      owner = { ...p, userId: rec.userId, orgId: rec.orgId };
    });
    afterAll(() => close(store));

    test("the first user only: a second owner of a new organization needs open mode", async () => {
      const p = await newPerson();
      await expect(store.registerOwnerOfNewOrg(p.user, { orgId: randomUUID(), name: "x", createdAt: at() }, { onlyIfFirstUser: true }))
        .rejects.toMatchObject({ type: "FORBIDDEN" });
      expect(await store.findUserByEmail(p.user.email)).toBeNull();
      const dup = await newPerson(owner.user.email);
      await expect(store.registerOwnerOfNewOrg(dup.user, { orgId: randomUUID(), name: "x", createdAt: at() }, { onlyIfFirstUser: false }))
        .rejects.toMatchObject({ type: "CONFLICT" });
      expect(await store.hasUsers()).toBe(true);
    });

    test("an invite is consumed exactly once by concurrent registrations", async () => {
      const email = `${randomUUID()}@example.test`;
      const inv = pendingInvite(owner.orgId, owner.userId, email);
      await store.createInvite(inv, randomUUID());
      const people = await Promise.all(Array.from({ length: 8 }, () => newPerson(email)));
      const results = await Promise.allSettled(people.map((p) => store.registerWithInvite(p.user, inv.inviteId, at())));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason.type).toMatch(/INVITE_NOT_REDEEMABLE|CONFLICT/);
      expect((await store.getInvite(inv.inviteId))!.status).toBe("used");
    });

    test("expired and revoked invites are not consumed and leave the pending list", async () => {
      const expired = pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`, at(-1000));
      await store.createInvite(expired, randomUUID());
      await expect(store.registerWithInvite((await newPerson(expired.email)).user, expired.inviteId, at())).rejects.toMatchObject({ type: "INVITE_NOT_REDEEMABLE" });
      const revoked = pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`);
      const hash = randomUUID();
      await store.createInvite(revoked, hash);
      expect((await store.findInviteByTokenHash(hash))!.inviteId).toBe(revoked.inviteId);
      expect(await store.revokeInvite(revoked.inviteId, owner.orgId, at())).toBe("revoked");
      expect(await store.revokeInvite(revoked.inviteId, owner.orgId, at())).toBe("not-pending");
      expect(await store.revokeInvite(revoked.inviteId, randomUUID(), at())).toBe("not-found");
      await expect(store.registerWithInvite((await newPerson(revoked.email)).user, revoked.inviteId, at())).rejects.toMatchObject({ type: "INVITE_NOT_REDEEMABLE" });
      const ids = (await store.listPendingInvites(owner.orgId, at())).map((i) => i.inviteId);
      expect(ids).not.toContain(expired.inviteId);
      expect(ids).not.toContain(revoked.inviteId);
      await expect(store.createInvite(pendingInvite(owner.orgId, owner.userId, owner.user.email), randomUUID())).rejects.toMatchObject({ type: "CONFLICT" });
    });

    test("refresh tokens rotate once; reuse revokes the family", async () => {
      const family = randomUUID();
      await store.saveRefreshToken({ tokenHash: "h1", familyId: family, userId: owner.userId, createdAt: at(), expiresAt: at(60_000) });
      const next = { tokenHash: "h2", createdAt: at(), expiresAt: at(60_000) };
      expect(await store.rotateRefreshToken("h1", next, at())).toEqual({ ok: true, userId: owner.userId });
      expect(await store.rotateRefreshToken("h1", { ...next, tokenHash: "h3" }, at())).toEqual({ ok: false, reason: "reused" });
      expect(await store.rotateRefreshToken("h2", { ...next, tokenHash: "h4" }, at())).toEqual({ ok: false, reason: "reused" });
      expect(await store.rotateRefreshToken("nope", next, at())).toEqual({ ok: false, reason: "unknown" });
    });

    test("members: the rules hold inside the store, and the last owner always stays under concurrency", async () => {
      const a = await join();
      const { vaultId, vaultKey } = await vaultWith([a]);
      await expect(store.addMember(vaultId, a.userId, { userId: owner.userId, role: "member", ...wrapFor(vaultKey, owner, a) }, at())).rejects.toMatchObject({ type: "FORBIDDEN" });
      await expect(store.addMember(vaultId, owner.userId, { userId: a.userId, role: "member", ...wrapFor(vaultKey, a, owner) }, at())).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.addMember(vaultId, owner.userId, { userId: randomUUID(), role: "member", ...wrapFor(vaultKey, a, owner) }, at())).rejects.toMatchObject({ type: "NOT_FOUND" });
      await store.changeMemberRole(vaultId, owner.userId, a.userId, "owner", at());
      const results = await Promise.allSettled([
        store.removeMember(vaultId, owner.userId, owner.userId, at()),
        store.removeMember(vaultId, a.userId, a.userId, at()),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const stayer = (await store.listMembers(vaultId, owner.userId)) ?? (await store.listMembers(vaultId, a.userId));
      expect(stayer!.map((m) => m.role)).toEqual(["owner"]);
    });

    test("rekey replaces every wrap and item and bumps the key version, or changes nothing", async () => {
      const a = await join();
      const { vaultId } = await vaultWith([a]);
      const itemIds = [randomUUID(), randomUUID()];
      for (const id of itemIds) await store.createItem(vaultId, a.userId, id, { encryptedData: "AAAA", encryptedName: "AAAA" }, at());
      const before = await store.listItems(vaultId, owner.userId);
      const newKey = Buffer.alloc(32, 7);
      const newKeys = [owner, a].map((p) => ({ userId: p.userId, ...wrapFor(newKey, p, owner) }));
      const items = itemIds.map((itemId) => ({ itemId, encryptedData: "BBBB", encryptedName: "CCCC" }));

      await expect(store.rekeyVault(vaultId, owner.userId, { newKeys: newKeys.slice(1), items }, at())).rejects.toMatchObject({ type: "INVALID", data: { field: "newKeys" } });
      await expect(store.rekeyVault(vaultId, owner.userId, { newKeys, items: items.slice(1) }, at())).rejects.toMatchObject({ type: "INVALID", data: { field: "items" } });
      await expect(store.rekeyVault(vaultId, owner.userId, { newKeys, items, keyVersion: 3 }, at())).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.rekeyVault(vaultId, a.userId, { newKeys, items }, at())).rejects.toMatchObject({ type: "FORBIDDEN" });
      expect(await store.listItems(vaultId, owner.userId)).toEqual(before);

      await store.rekeyVault(vaultId, owner.userId, { newKeys, items, keyVersion: 1 }, at());
      const after = await store.listItems(vaultId, owner.userId);
      expect(after!.map((i) => [i.encryptedData, i.encryptedName, i.revision, i.keyVersion])).toEqual([["BBBB", "CCCC", 2, 2], ["BBBB", "CCCC", 2, 2]]);
      const view = await store.getVault(vaultId, a.userId);
      expect(view).toMatchObject({ keyVersion: 2, rekeyRequired: false, senderId: owner.userId, encryptedVaultKey: newKeys[1]!.encryptedVaultKey });
    });

    test("a rekey of 2,000 items is written in batches and in one step", async () => {
      const { vaultId } = await vaultWith([]);
      const ids = Array.from({ length: 2000 }, () => randomUUID());
      for (const id of ids) await store.createItem(vaultId, owner.userId, id, { encryptedData: "AAAA", encryptedName: "AAAA" }, at());
      const newKeys = [{ userId: owner.userId, ...wrapFor(Buffer.alloc(32, 1), owner, owner) }];
      await store.rekeyVault(vaultId, owner.userId, { newKeys, items: ids.map((itemId, n) => ({ itemId, encryptedData: b64(Buffer.from(`n${n}`)), encryptedName: "AAAA" })) }, at());
      const items = await store.listItems(vaultId, owner.userId);
      const byId = new Map(items!.map((i) => [i.itemId, i]));
      ids.forEach((id, n) => expect(byId.get(id)!.encryptedData).toBe(b64(Buffer.from(`n${n}`))));
    });

    test("items: revisions, conflicts, key versions, and deletion with the vault", async () => {
      const { vaultId } = await vaultWith([]);
      const id = randomUUID();
      const created = await store.createItem(vaultId, owner.userId, id, { encryptedData: "AAAA", encryptedName: "AAAA" }, at());
      expect(created.revision).toBe(1);
      await expect(store.createItem(vaultId, owner.userId, id, { encryptedData: "AAAA", encryptedName: "AAAA" }, at())).rejects.toMatchObject({ type: "CONFLICT" });
      expect((await store.updateItem(vaultId, owner.userId, id, { encryptedData: "BBBB", encryptedName: "AAAA", revision: 1 }, at())).revision).toBe(2);
      await expect(store.updateItem(vaultId, owner.userId, id, { encryptedData: "CCCC", encryptedName: "AAAA", revision: 1 }, at())).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.createItem(vaultId, owner.userId, randomUUID(), { encryptedData: "AAAA", encryptedName: "AAAA", keyVersion: 2 }, at())).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.getItem(vaultId, randomUUID(), id)).rejects.toMatchObject({ type: "NOT_FOUND" });
      await store.deleteVault(vaultId, owner.userId);
      expect(await store.getVault(vaultId, owner.userId)).toBeNull();
      expect(await store.listItems(vaultId, owner.userId)).toBeNull();
    });

    test("audit: events append to their organization's chain once each, in order, hashed", async () => {
      const org = randomUUID();
      const other = randomUUID();
      const first = [event(org, "vault.created", { itemId: undefined }), event(other), event(org), event(org, "invite.created", { vaultId: undefined, itemId: undefined, inviteId: randomUUID() })];
      expect(await store.appendAuditEvents(first)).toEqual({ appended: 4, alreadyRecorded: 0 });
      // Delivered again (at least once), with one new event: only the new one is recorded.
      const late = event(org, "item.deleted");
      expect(await store.appendAuditEvents([first[2]!, late, first[0]!, late])).toEqual({ appended: 1, alreadyRecorded: 3 });
      expect(await store.appendAuditEvents([])).toEqual({ appended: 0, alreadyRecorded: 0 });

      const records = await store.listAuditRecords(org, 100);
      expect(records.map((r) => r.seq)).toEqual([4, 3, 2, 1]);
      expect(records.map((r) => r.eventId)).toEqual([late, first[3]!, first[2]!, first[0]!].map((e) => e.eventId));
      expect(records[3]).toEqual({ ...first[0], seq: 1, prevHash: EMPTY_HEAD.hash, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(Object.keys(records[0]!)).toEqual(["eventId", "seq", "type", "at", "actorId", "orgId", "vaultId", "itemId", "prevHash", "hash"]);
      for (const r of records) expect(r.hash).toBe(auditHash(r));
      for (let i = 0; i < 3; i++) expect(records[i]!.prevHash).toBe(records[i + 1]!.hash);
      expect(await store.auditHead(org)).toEqual({ seq: 4, hash: records[0]!.hash });
      expect((await store.listAuditRecords(other, 100)).map((r) => r.seq)).toEqual([1]);
      expect(await store.auditHead(randomUUID())).toEqual(EMPTY_HEAD);

      expect((await store.listAuditRecords(org, 2)).map((r) => r.seq)).toEqual([4, 3]);
      expect((await store.listAuditRecords(org, 2, 3)).map((r) => r.seq)).toEqual([2, 1]);
      expect(await store.listAuditRecords(org, 2, 1)).toEqual([]);
      expect((await store.readAuditChain(org, 1, 3, 100)).map((r) => r.seq)).toEqual([2, 3]);
      expect(await verifyAuditChain(await store.auditHead(org), (a, u, l) => store.readAuditChain(org, a, u, l)))
        .toEqual({ ok: true, count: 4, head: records[0]!.hash });
    });

    test("audit: concurrent appenders (redeliveries racing) leave one gapless chain, each event once", async () => {
      const org = randomUUID();
      const events = Array.from({ length: 60 }, () => event(org));
      // Six workers, each handed overlapping slices, all at once.
      const slices = Array.from({ length: 6 }, (_, w) => events.filter((_, i) => i % 3 === w % 3 || i % 5 === w));
      // They wait for each other on the organization's head: none fails, none records an event twice.
      const appended = await Promise.all(slices.map((slice) => store.appendAuditEvents(slice)));
      expect(appended.reduce((sum, r) => sum + r.appended, 0)).toBe(60);
      const chain = await store.readAuditChain(org, 0, 1_000, 1_000);
      expect(chain.map((r) => r.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(new Set(chain.map((r) => r.eventId)).size).toBe(60);
      expect(await verifyAuditChain(await store.auditHead(org), (a, u, l) => store.readAuditChain(org, a, u, l))).toMatchObject({ ok: true, count: 60 });
    });

    test("purge: expired invites and expired or revoked refresh tokens go; live ones and used invites stay", async () => {
      const invites = {
        expiredPending: pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`, at(-1_000)),
        expiredRevoked: pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`, at(-1_000)),
        live: pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`, at(3_600_000)),
        liveRevoked: pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`, at(3_600_000)),
        used: pendingInvite(owner.orgId, owner.userId, `${randomUUID()}@example.test`, at(1_500)),
      };
      for (const inv of Object.values(invites)) await store.createInvite(inv, randomUUID());
      await store.revokeInvite(invites.expiredRevoked.inviteId, owner.orgId, at());
      await store.revokeInvite(invites.liveRevoked.inviteId, owner.orgId, at());
      await store.registerWithInvite((await newPerson(invites.used.email)).user, invites.used.inviteId, at());
      // Kept for a retention period after expiry: a purge that reaches back only to before they expired takes none.
      expect(await store.purgeExpired(at(2_000), at(-3_600_000))).toMatchObject({ invites: 0 });
      expect(await store.getInvite(invites.expiredPending.inviteId)).toMatchObject({ status: "pending" });

      const family = randomUUID();
      const revokedFamily = randomUUID();
      const token = (tokenHash: string, familyId: string, expiresAt: string) =>
        store.saveRefreshToken({ tokenHash, familyId, userId: owner.userId, createdAt: at(), expiresAt });
      const h = (name: string) => `${name}-${family}`;
      await token(h("expired"), randomUUID(), at(-1_000));
      await token(h("active"), family, at(60_000));
      await token(h("rotated"), family, at(60_000));
      await store.rotateRefreshToken(h("rotated"), { tokenHash: h("next"), createdAt: at(), expiresAt: at(60_000) }, at());
      await token(h("revoked"), revokedFamily, at(60_000));
      await store.revokeRefreshFamily(h("revoked"), owner.userId);

      // Now is 2 s ahead, and the retention over: the used invite has expired too, and stays.
      const purged = await store.purgeExpired(at(2_000), at(2_000));
      expect(purged.invites).toBeGreaterThanOrEqual(2);
      expect(purged.refreshTokens).toBeGreaterThanOrEqual(2);
      expect(await store.getInvite(invites.expiredPending.inviteId)).toBeNull();
      expect(await store.getInvite(invites.expiredRevoked.inviteId)).toBeNull();
      expect(await store.getInvite(invites.live.inviteId)).toMatchObject({ status: "pending" });
      expect(await store.getInvite(invites.liveRevoked.inviteId)).toMatchObject({ status: "revoked" });
      expect(await store.getInvite(invites.used.inviteId)).toMatchObject({ status: "used" });

      const next = () => ({ tokenHash: randomUUID(), createdAt: at(), expiresAt: at(60_000) });
      // Gone: unknown. A rotated (used) token still trips reuse detection; live ones still rotate.
      expect(await store.rotateRefreshToken(h("expired"), next(), at())).toEqual({ ok: false, reason: "unknown" });
      expect(await store.rotateRefreshToken(h("revoked"), next(), at())).toEqual({ ok: false, reason: "unknown" });
      expect(await store.rotateRefreshToken(h("active"), next(), at())).toEqual({ ok: true, userId: owner.userId });
      expect(await store.rotateRefreshToken(h("rotated"), next(), at())).toEqual({ ok: false, reason: "reused" });
      expect(await store.purgeExpired(at(2_000), at(2_000))).toEqual({ invites: 0, refreshTokens: expect.any(Number) });
    });

    test("signed roster: each link is stored with its change, in order; a refused link writes nothing; the chain goes with the vault", async () => {
      const member = await join();
      const outsider = await join();
      const vaultKey = Buffer.alloc(32, 7);
      const chain = new Chain(randomUUID());
      const wrap = wrapFor(vaultKey, owner, owner);
      const create = createLink(chain, { ...owner, ...owner.user }, wrap.encryptedVaultKey);
      const roster = decideCreateRoster(owner.user, { vaultType: "shared", encryptedVaultKey: wrap.encryptedVaultKey }, create);
      await store.createVault({ vaultId: chain.vaultId, orgId: owner.orgId, name: "signed", type: "shared", ownerId: owner.userId, ...wrap, roster }, at());
      chain.accept(create);

      const share = wrapFor(vaultKey, member, owner);
      const add = chain.next(owner, { op: "add", subjectId: member.userId, role: "member", subjectKey: fingerprintOf(member.user), wraps: [{ userId: member.userId, sha256: wrapHash(share.encryptedVaultKey) }] });
      // Without the link, or with it for another user: refused, nothing written.
      await expect(store.addMember(chain.vaultId, owner.userId, { userId: member.userId, role: "member", ...share }, at())).rejects.toMatchObject({ type: "INVALID", data: { field: "rosterLink" } });
      await expect(store.addMember(chain.vaultId, owner.userId, { userId: outsider.userId, role: "member", ...wrapFor(vaultKey, outsider, owner), rosterLink: add }, at()))
        .rejects.toMatchObject({ type: "INVALID" });
      expect(await store.getRoster(chain.vaultId, owner.userId)).toHaveLength(1);
      expect((await store.listMembers(chain.vaultId, owner.userId))!.map((m) => m.userId)).toEqual([owner.userId]);

      await store.addMember(chain.vaultId, owner.userId, { userId: member.userId, role: "member", ...share, rosterLink: add }, at());
      chain.accept(add);
      const remove = chain.next(member, { op: "remove", subjectId: member.userId, subjectKey: fingerprintOf(member.user), wraps: [] });
      await store.removeMember(chain.vaultId, member.userId, member.userId, at(), remove);
      expect((await store.getRoster(chain.vaultId, owner.userId))!.map((l) => [l.seq, l.op])).toEqual([[0, "create"], [1, "add"], [2, "remove"]]);
      expect(await store.getRoster(chain.vaultId, member.userId)).toBeNull();
      expect(await store.getRoster(chain.vaultId, owner.userId).then((links) => links![1])).toEqual(add);

      await store.deleteVault(chain.vaultId, owner.userId);
      expect(await store.getRoster(chain.vaultId, owner.userId)).toBeNull();
    });
  });
}
