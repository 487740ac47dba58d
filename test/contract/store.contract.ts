/**
 * The store port's contract, run against every adapter (test/store.*.test.ts). It calls the port
 * directly, with real keys and signatures, and checks what the services rely on.
 */
import { newId, type InviteId, type ItemId, type OrgId, type UserId, type VaultId } from "../../lib/domain/ids";
import type { NewUser, Store } from "../../lib/store/port";
import { MAX_OPEN_REQUESTS_PER_ADDRESS, type NewRecoveryRequest } from "../../lib/domain/accounts/recovery-requests";
import type { Invite } from "../../lib/domain/orgs/invites";
import type { DomainEvent } from "../../lib/domain/audit/events";
import { auditHash, EMPTY_HEAD, verifyAuditChain } from "../../lib/domain/audit/log";
import { decideCreateRoster } from "../../lib/domain/vaults/decisions";
import { credentialEnrolledAlready, emailTaken, factorNotFound, lastFactorRequired } from "../../lib/domain/accounts/refusals";
import { planFactorChangeSessions } from "../../lib/domain/accounts/session-scope";
import { itemIdInTrash, itemIdTaken } from "../../lib/domain/items/refusals";
import { inviteNotPendingForStatement } from "../../lib/domain/orgs/refusals";
import { b64, newUserKeys, registrationBundle, signWrap, wrapShared, type UserKeys } from "../helpers/crypto";
import { Chain, createLink, fingerprintOf, wrapHash } from "../helpers/roster";
import { describeRememberedDevices } from "./remembered-devices.contract";
import { describePasskeyLogins } from "./passkey-logins.contract";
import { describeAttachments } from "./attachments.contract";
import { describeSends } from "./sends.contract";
import { describeEmergency } from "./emergency.contract";

/** Limits no test here comes near, but for the limits' own. */
const ROOMY = { maxBytes: 1 << 30, maxItems: 1_000_000 };
const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

interface Person {
  user: NewUser;
  keys: UserKeys;
  userId: UserId;
  orgId: OrgId;
}

async function newPerson(email = `${newId()}@example.test`): Promise<{ user: NewUser; keys: UserKeys }> {
  const keys = await newUserKeys();
  const bundle = registrationBundle(keys);
  return {
    keys,
    user: { ...bundle, userId: newId(), email, authHash: "scrypt$stored", createdAt: at() },
  };
}

function wrapFor(vaultKey: Buffer, holder: Person, sender: Person) {
  const wrapped = wrapShared(vaultKey, holder.user.publicKey);
  return { encryptedVaultKey: b64(wrapped), wrapSignature: b64(signWrap(wrapped, sender.keys.edPrivate)) };
}

function event(orgId: OrgId, type: DomainEvent["type"] = "item.created", extra: Partial<DomainEvent> = {}): DomainEvent {
  return {
    eventId: newId(),
    type,
    at: at(),
    actorId: newId<UserId>(),
    orgId,
    vaultId: newId<VaultId>(),
    itemId: newId<ItemId>(),
    ...extra,
  };
}

function pendingInvite(orgId: OrgId, inviterId: UserId, email: string, expiresAt = at(3600_000)): Invite {
  return { inviteId: newId(), orgId, email, role: "member", inviterId, status: "pending", expiresAt, createdAt: at() };
}

export function describeStoreContract(adapter: string, open: () => Promise<Store>, close: (store: Store) => Promise<void>): void {
  describe(`store contract: ${adapter}`, () => {
    let store: Store;
    let owner: Person;

    async function join(role: "admin" | "member" = "member"): Promise<Person> {
      const p = await newPerson();
      const inv = { ...pendingInvite(owner.orgId, owner.userId, p.user.email), role };
      await store.invites.createInvite({ invite: inv, tokenHash: newId() });
      const rec = await store.accounts.registerWithInvite({ user: p.user, inviteId: inv.inviteId, now: at() });
      return { ...p, userId: rec.userId, orgId: rec.orgId };
    }

    /** The owner of a new organization of their own (its policies do not touch the other tests'). */
    async function ownOrg(): Promise<Person> {
      const p = await newPerson();
      const org = { orgId: newId<OrgId>(), name: "Own", createdAt: at() };
      const rec = await store.accounts.registerOwnerOfNewOrg({ user: p.user, org, onlyIfFirstUser: false });
      return { ...p, userId: rec.userId, orgId: rec.orgId };
    }

    /** A shared vault of the owner's with a signed roster (its `create` link), and the chain to sign its next links on. */
    async function signedVault(name: string, keyByte: number) {
      const vaultKey = Buffer.alloc(32, keyByte);
      const chain = new Chain("");
      const wrap = wrapFor(vaultKey, owner, owner);
      const create = createLink(chain, { ...owner, ...owner.user }, wrap.encryptedVaultKey);
      const vaultId = chain.vaultId as VaultId;
      const roster = decideCreateRoster(owner.user, { vaultType: "shared", name, encryptedVaultKey: wrap.encryptedVaultKey }, create);
      await store.vaults.createVault({
        vault: { vaultId, orgId: owner.orgId, name, type: "shared", ownerId: owner.userId, ...wrap, roster },
        now: at(),
      });
      chain.accept(create);
      return { vaultKey, vaultId, chain };
    }

    async function vaultWith(members: Person[]) {
      const vaultKey = Buffer.alloc(32, 9);
      const vault = await store.vaults.createVault({
        vault: {
          vaultId: newId(),
          orgId: owner.orgId,
          name: "v",
          type: "shared",
          ownerId: owner.userId,
          ...wrapFor(vaultKey, owner, owner),
        },
        now: at(),
      });
      for (const m of members)
        await store.vaults.addMember({
          vaultId: vault.vaultId,
          actorId: owner.userId,
          member: { userId: m.userId, role: "member", ...wrapFor(vaultKey, m, owner) },
          now: at(),
        });
      return { vaultId: vault.vaultId, vaultKey };
    }

    beforeAll(async () => {
      store = await open();
      const p = await newPerson();
      const rec = await store.accounts.registerOwnerOfNewOrg({
        user: p.user,
        org: { orgId: newId(), name: "Org", createdAt: at() },
        onlyIfFirstUser: true,
      });
      owner = { ...p, userId: rec.userId, orgId: rec.orgId };
    });
    afterAll(() => close(store));

    describeRememberedDevices(() => store);
    describePasskeyLogins(() => store);
    describeAttachments(() => store);
    describeSends(() => store);
    describeEmergency(() => store);

    test("one rule for non-members: every read and change of a vault throws NOT_FOUND, as for a vault that does not exist", async () => {
      const outsider = await join();
      const { vaultId, vaultKey } = await vaultWith([]);
      const item = await store.items.createItem({
        vaultId,
        actorId: owner.userId,
        itemId: newId(),
        write: { encryptedData: "AAAA", encryptedName: "AAAA" },
        limits: ROOMY,
        now: at(),
      });
      const calls = (v: VaultId, actorId: UserId) => [
        store.vaults.getVault({ vaultId: v, userId: actorId }),
        store.vaults.listMembers({ vaultId: v, actorId }),
        store.vaults.getRoster({ vaultId: v, actorId }),
        store.items.listItems({ vaultId: v, actorId }),
        store.items.getItem({ vaultId: v, actorId, itemId: item.itemId }),
        store.vaults.renameVault({ vaultId: v, actorId, name: "mine", now: at() }),
        store.vaults.addMember({
          vaultId: v,
          actorId,
          member: { userId: actorId, role: "member", ...wrapFor(vaultKey, outsider, outsider) },
          now: at(),
        }),
        store.vaults.removeMember({ vaultId: v, actorId, targetId: owner.userId, now: at() }),
        store.vaults.changeMemberRole({ vaultId: v, actorId, targetId: owner.userId, role: "member", now: at() }),
        store.items.createItem({
          vaultId: v,
          actorId,
          itemId: newId(),
          write: { encryptedData: "AAAA", encryptedName: "AAAA" },
          limits: ROOMY,
          now: at(),
        }),
        store.items.updateItem({
          vaultId: v,
          actorId,
          itemId: item.itemId,
          write: { encryptedData: "AAAA", encryptedName: "AAAA" },
          limits: ROOMY,
          now: at(),
        }),
        store.items.deleteItem({ vaultId: v, actorId, itemId: item.itemId, now: new Date().toISOString() }),
        store.vaults.rekeyVault({ vaultId: v, actorId, rekey: { newKeys: [], items: [] }, now: at() }),
        store.vaults.deleteVault({ vaultId: v, actorId }),
      ];
      for (const [v, actor] of [
        [vaultId, outsider.userId],
        [newId<VaultId>(), owner.userId],
      ] as const) {
        const outcomes = await Promise.allSettled(calls(v, actor));
        expect(outcomes.map((o) => (o.status === "rejected" ? [o.reason.type, o.reason.message] : o.status))).toEqual(
          outcomes.map(() => ["NOT_FOUND", "Vault not found"]),
        );
      }
      // Nothing changed for the member.
      expect(await store.items.getItem({ vaultId, actorId: owner.userId, itemId: item.itemId })).toEqual(item);
      expect((await store.vaults.getVault({ vaultId, userId: owner.userId })).vaultName).toBe("v");
    });

    test("the first user only: a second owner of a new organization needs open mode", async () => {
      const p = await newPerson();
      await expect(
        store.accounts.registerOwnerOfNewOrg({
          user: p.user,
          org: { orgId: newId(), name: "x", createdAt: at() },
          onlyIfFirstUser: true,
        }),
      ).rejects.toMatchObject({ type: "FORBIDDEN" });
      expect(await store.accounts.findUserByEmail(p.user.email)).toBeNull();
      const dup = await newPerson(owner.user.email);
      await expect(
        store.accounts.registerOwnerOfNewOrg({
          user: dup.user,
          org: { orgId: newId(), name: "x", createdAt: at() },
          onlyIfFirstUser: false,
        }),
      ).rejects.toMatchObject({ type: "CONFLICT", message: emailTaken().message });
      expect(await store.accounts.hasUsers()).toBe(true);
    });

    test("an invite is consumed exactly once by concurrent registrations", async () => {
      const email = `${newId()}@example.test`;
      const inv = pendingInvite(owner.orgId, owner.userId, email);
      await store.invites.createInvite({ invite: inv, tokenHash: newId() });
      const people = await Promise.all(Array.from({ length: 8 }, () => newPerson(email)));
      const results = await Promise.allSettled(
        people.map((p) => store.accounts.registerWithInvite({ user: p.user, inviteId: inv.inviteId, now: at() })),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason.type).toMatch(/INVITE_NOT_REDEEMABLE|CONFLICT/);
      expect((await store.invites.getInvite(inv.inviteId))!.status).toBe("used");
    });

    test("expired and revoked invites are not consumed and leave the pending list", async () => {
      const expired = pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`, at(-1000));
      await store.invites.createInvite({ invite: expired, tokenHash: newId() });
      await expect(
        store.accounts.registerWithInvite({ user: (await newPerson(expired.email)).user, inviteId: expired.inviteId, now: at() }),
      ).rejects.toMatchObject({ type: "INVITE_NOT_REDEEMABLE" });
      const revoked = pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`);
      const hash = newId();
      await store.invites.createInvite({ invite: revoked, tokenHash: hash });
      expect((await store.invites.findInviteByTokenHash(hash))!.inviteId).toBe(revoked.inviteId);
      expect(await store.invites.revokeInvite({ inviteId: revoked.inviteId, orgId: owner.orgId, now: at() })).toBe("revoked");
      expect(await store.invites.revokeInvite({ inviteId: revoked.inviteId, orgId: owner.orgId, now: at() })).toBe("not-pending");
      expect(await store.invites.revokeInvite({ inviteId: revoked.inviteId, orgId: newId(), now: at() })).toBe("not-found");
      await expect(
        store.accounts.registerWithInvite({ user: (await newPerson(revoked.email)).user, inviteId: revoked.inviteId, now: at() }),
      ).rejects.toMatchObject({ type: "INVITE_NOT_REDEEMABLE" });
      const ids = (await store.invites.listPendingInvites({ orgId: owner.orgId, now: at() })).map((i) => i.inviteId);
      expect(ids).not.toContain(expired.inviteId);
      expect(ids).not.toContain(revoked.inviteId);
      await expect(
        store.invites.createInvite({ invite: pendingInvite(owner.orgId, owner.userId, owner.user.email), tokenHash: newId() }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
    });

    /** A login: its session and first refresh token; answers the session's id. */
    /** A login of `userId` (the owner by default): its session id, and the sessions the cap ended. */
    const login = async (tokenHash: string, opts: { expiresAt?: string; maxLive?: number; userId?: UserId } = {}) => {
      const { expiresAt = at(60_000), maxLive = 100, userId = owner.userId } = opts;
      const sessionId = newId();
      const { ended } = await store.sessions.startSession({
        session: { sessionId, userId, deviceName: "laptop", createdAt: at(), lastUsedAt: at(), address: "192.0.2.1", expiresAt },
        token: { tokenHash, userId, createdAt: at(), expiresAt },
        accountVersion: 1,
        maxLive,
      });
      return { sessionId, ended };
    };
    const startSession = async (tokenHash: string, expiresAt = at(60_000)) => (await login(tokenHash, { expiresAt })).sessionId;
    const rotate = (oldHash: string, tokenHash: string, address = "192.0.2.2") =>
      store.sessions.rotateRefreshToken({ oldHash, next: { tokenHash, createdAt: at(), expiresAt: at(120_000) }, now: at(1_000), address });

    test("refresh tokens rotate once within their session; reuse revokes the family and ends the session", async () => {
      const h = (n: string) => `${n}-${newId()}`;
      const [h1, h2, h3, h4] = [h("h1"), h("h2"), h("h3"), h("h4")];
      const sessionId = await startSession(h1);
      expect(await rotate(h1, h2)).toEqual({ ok: true, userId: owner.userId, sessionId, enrolOnly: false });
      // The rotation records the use: when, from where, and the new expiry.
      expect(await store.sessions.findSession(sessionId)).toEqual({
        sessionId,
        userId: owner.userId,
        deviceName: "laptop",
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        address: "192.0.2.2",
        expiresAt: expect.any(String),
      });
      expect(await rotate(h1, h3)).toEqual({ ok: false, reason: "reused", sessionId });
      expect(await rotate(h2, h4)).toEqual({ ok: false, reason: "reused", sessionId });
      expect(await store.sessions.findSession(sessionId)).toMatchObject({ endedAt: expect.any(String) });
      expect((await store.sessions.listSessions({ userId: owner.userId, now: at() })).map((s) => s.sessionId)).not.toContain(sessionId);
      expect(await rotate(`nope-${newId()}`, h("h5"))).toEqual({ ok: false, reason: "unknown" });
    });

    test("sessions: listed live, the most recent first; ended one, all but one, or by their token; an ended one takes no new token", async () => {
      const other = await join();
      const h = (n: string) => `${n}-${newId()}`;
      const tokens = [h("a"), h("b"), h("c"), h("d")];
      const [a, b, c, d] = [
        await startSession(tokens[0]!),
        await startSession(tokens[1]!),
        await startSession(tokens[2]!),
        await startSession(tokens[3]!),
      ];
      const expired = await startSession(h("e"), at(-1_000));
      expect(await rotate(tokens[1]!, h("b2"))).toMatchObject({ ok: true, sessionId: b });
      const live = (await store.sessions.listSessions({ userId: owner.userId, now: at() })).map((s) => s.sessionId);
      expect(live[0]).toBe(b);
      expect(live).toEqual(expect.arrayContaining([a, b, c, d]));
      expect(live).not.toContain(expired);

      // Only the caller's own sessions end, and each once.
      expect(await store.sessions.endSessions({ userId: other.userId, now: at(), only: a })).toEqual([]);
      expect(await store.sessions.endSessions({ userId: owner.userId, now: at(), only: a })).toEqual([a]);
      expect(await store.sessions.endSessions({ userId: owner.userId, now: at(), only: a })).toEqual([]);
      expect(await rotate(tokens[0]!, h("a2"))).toMatchObject({ ok: false });

      // Logout: the session its refresh token belongs to, and only for its user.
      expect(await store.sessions.endSessionOfToken({ tokenHash: tokens[2]!, userId: other.userId, now: at() })).toBeNull();
      expect(await store.sessions.endSessionOfToken({ tokenHash: tokens[2]!, userId: owner.userId, now: at() })).toBe(c);
      expect(await rotate(tokens[2]!, h("c2"))).toMatchObject({ ok: false });

      // All but the current one.
      const ended = await store.sessions.endSessions({ userId: owner.userId, now: at(), except: d });
      expect(ended).toContain(b);
      expect(ended).not.toContain(d);
      const after = (await store.sessions.listSessions({ userId: owner.userId, now: at() })).map((s) => s.sessionId);
      expect(after).toEqual([d]);
      expect(await rotate(tokens[3]!, h("d2"))).toMatchObject({ ok: true, sessionId: d });
    });

    test("a session's use is recorded forward only, and never on an ended session", async () => {
      const sessionId = await startSession(`touch-${newId()}`);
      const { lastUsedAt } = (await store.sessions.findSession(sessionId))!;
      const later = new Date(Date.parse(lastUsedAt) + 60_000).toISOString();
      await store.sessions.touchSession({ sessionId, at: later, address: "198.51.100.7" });
      expect(await store.sessions.findSession(sessionId)).toMatchObject({ lastUsedAt: later, address: "198.51.100.7" });
      // A use older than the one recorded (a slower node's) does not move it back.
      await store.sessions.touchSession({ sessionId, at: lastUsedAt, address: "198.51.100.8" });
      expect(await store.sessions.findSession(sessionId)).toMatchObject({ lastUsedAt: later, address: "198.51.100.7" });
      await store.sessions.endSessions({ userId: owner.userId, now: at(), only: sessionId });
      const latest = new Date(Date.parse(later) + 60_000).toISOString();
      await store.sessions.touchSession({ sessionId, at: latest, address: "198.51.100.9" });
      expect(await store.sessions.findSession(sessionId)).toMatchObject({ lastUsedAt: later, address: "198.51.100.7" });
    });

    test("a login starts no session once the account's password changed after it compared it; past the cap, the least recently used end", async () => {
      const person = await join();
      const h = (n: string) => `${n}-${newId()}`;
      await expect(
        store.sessions.startSession({
          session: {
            sessionId: newId(),
            userId: person.userId,
            deviceName: "x",
            createdAt: at(),
            lastUsedAt: at(),
            address: "a",
            expiresAt: at(60_000),
          },
          token: { tokenHash: h("stale"), userId: person.userId, createdAt: at(), expiresAt: at(60_000) },
          accountVersion: 2,
          maxLive: 100,
        }),
      ).rejects.toMatchObject({ type: "UNAUTHORIZED" });
      expect(await store.sessions.listSessions({ userId: person.userId, now: at() })).toEqual([]);
      const tick = () => new Promise((resolve) => setTimeout(resolve, 5)); // each login later than the one before
      const first = await login(h("1"), { maxLive: 2, userId: person.userId });
      await tick();
      const second = await login(h("2"), { maxLive: 2, userId: person.userId });
      await tick();
      const third = await login(h("3"), { maxLive: 2, userId: person.userId });
      expect([first.ended, second.ended, third.ended]).toEqual([[], [], [first.sessionId]]);
      const live = (await store.sessions.listSessions({ userId: person.userId, now: at() })).map((x) => x.sessionId);
      expect(live.sort()).toEqual([second.sessionId, third.sessionId].sort());
    });

    test("a person taken out of the organization: refused by every vault at once, sessions ended, their pending invites revoked; the rules hold", async () => {
      const admin = await join("admin");
      const member = await join();
      const { vaultId } = await vaultWith([admin, member]);
      const h = `removed-${newId()}`;
      await login(h, { userId: admin.userId });
      const inv = pendingInvite(owner.orgId, admin.userId, `x-${newId()}@example.test`);
      await store.invites.createInvite({ invite: inv, tokenHash: newId() });
      const asCaller = (p: { userId: UserId; orgId: OrgId }, role: "owner" | "admin" | "member") => ({
        userId: p.userId,
        orgId: p.orgId,
        role,
      });
      await expect(
        store.accounts.removeFromOrg({ caller: asCaller(member, "member"), targetId: admin.userId, now: at() }),
      ).rejects.toMatchObject({
        type: "FORBIDDEN",
      });
      const out = await store.accounts.removeFromOrg({ caller: asCaller(owner, "owner"), targetId: admin.userId, now: at() });
      expect(out.vaults).toEqual([{ vaultId, needs: "rekey" }]);
      expect(out.endedSessions).toHaveLength(1);
      expect(out.revokedInvites).toEqual([inv.inviteId]);
      expect(await store.invites.getInvite(inv.inviteId)).toMatchObject({ status: "revoked" });
      // Whatever the rows still say, the vault refuses them: a read, an item write.
      await expect(store.vaults.getVault({ vaultId, userId: admin.userId })).rejects.toMatchObject({ type: "NOT_FOUND" });
      await expect(
        store.items.createItem({
          vaultId,
          actorId: admin.userId,
          itemId: newId(),
          write: { encryptedData: "AAAA", encryptedName: "AAAA" },
          limits: ROOMY,
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "NOT_FOUND" });
      expect((await store.accounts.findUserById(admin.userId))?.removedAt).toEqual(expect.any(String));
      expect((await store.vaults.getVault({ vaultId, userId: owner.userId })).rekeyRequired).toBe(true);
      // Its owner still manages it, and removes them from it for good.
      await store.vaults.removeMember({ vaultId, actorId: owner.userId, targetId: admin.userId, now: at() });
      await expect(
        store.accounts.removeFromOrg({ caller: asCaller(owner, "owner"), targetId: admin.userId, now: at() }),
      ).rejects.toMatchObject({
        type: "NOT_FOUND",
      });
    });

    test("the organization's log: each link after the stored head, one winner of a race, in order; a removal's link lands with the removal or neither does (real concurrency)", async () => {
      const orgId = owner.orgId;
      const member = await join();
      const zero = "0".repeat(64);
      const hash = () => newId().replace(/-/g, "").padEnd(64, "0");
      // The store keeps links as the domain checked them; these stand in for signed ones.
      const entry = (seq: number, prev: string, h = hash()) => ({ seq, prev, hash: h, link: { seq, prev, op: "adopt", h } as never });
      const append = (e: ReturnType<typeof entry>) => store.orgLog.append({ orgId, entry: e, field: "link", now: at() });
      const first = entry(0, zero);
      await append(first);
      await expect(append(entry(0, zero))).rejects.toMatchObject({ type: "CONFLICT", data: { field: "link.seq" } });
      await expect(append(entry(1, zero))).rejects.toMatchObject({ type: "CONFLICT", data: { field: "link.seq" } });
      const racers = Array.from({ length: 6 }, () => entry(1, first.hash));
      const outcomes = await Promise.allSettled(racers.map(append));
      expect(outcomes.filter((o) => o.status === "fulfilled").length).toBe(1);
      const winner = racers[outcomes.findIndex((o) => o.status === "fulfilled")]!;
      expect(await store.orgLog.links(orgId)).toEqual([first.link, winner.link]);
      // A removal whose link does not follow the head: refused whole, the person still in.
      const removal = (orgLink: ReturnType<typeof entry>) =>
        store.accounts.removeFromOrg({
          caller: { userId: owner.userId, orgId: owner.orgId, role: "owner" },
          targetId: member.userId,
          now: at(),
          orgLink,
        });
      await expect(removal(entry(2, first.hash))).rejects.toMatchObject({ type: "CONFLICT", data: { field: "orgLink.seq" } });
      expect((await store.accounts.findUserById(member.userId))?.removedAt).toBeUndefined();
      const removed = entry(2, winner.hash);
      await removal(removed);
      expect((await store.accounts.findUserById(member.userId))?.removedAt).toEqual(expect.any(String));
      expect(await store.orgLog.links(orgId)).toEqual([first.link, winner.link, removed.link]);
    });

    test("a session ended while its token rotates: whichever comes second sees the other, and no live token is left (real concurrency)", async () => {
      const h = (n: string) => `${n}-${newId()}`;
      for (let i = 0; i < 40; i++) {
        const first = h("first");
        const next = h("next");
        const sessionId = await startSession(first);
        const end = () => store.sessions.endSessions({ userId: owner.userId, now: at(), only: sessionId });
        // Each goes first half the time, the other a few ticks behind (0 to 3 awaits).
        const behind = async <T>(f: () => Promise<T>) => {
          for (let t = 0; t < i % 4; t++) await Promise.resolve();
          return f();
        };
        const [rotated] =
          i % 2 === 0
            ? await Promise.all([rotate(first, next), behind(end)])
            : await Promise.all([behind(() => rotate(first, next)), end()]);
        // Whether or not the rotation got in first, the session is over and its newest token with it.
        expect(await store.sessions.findSession(sessionId)).toMatchObject({ endedAt: expect.any(String) });
        if (rotated.ok) expect(await rotate(next, h("after"))).toMatchObject({ ok: false });
      }
    });

    test("members: the rules hold inside the store, and the last owner always stays under concurrency", async () => {
      const a = await join();
      const { vaultId, vaultKey } = await vaultWith([a]);
      await expect(
        store.vaults.addMember({
          vaultId,
          actorId: a.userId,
          member: { userId: owner.userId, role: "member", ...wrapFor(vaultKey, owner, a) },
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "FORBIDDEN" });
      await expect(
        store.vaults.addMember({
          vaultId,
          actorId: owner.userId,
          member: { userId: a.userId, role: "member", ...wrapFor(vaultKey, a, owner) },
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(
        store.vaults.addMember({
          vaultId,
          actorId: owner.userId,
          member: { userId: newId(), role: "member", ...wrapFor(vaultKey, a, owner) },
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "NOT_FOUND" });
      await store.vaults.changeMemberRole({ vaultId, actorId: owner.userId, targetId: a.userId, role: "owner", now: at() });
      const results = await Promise.allSettled([
        store.vaults.removeMember({ vaultId, actorId: owner.userId, targetId: owner.userId, now: at() }),
        store.vaults.removeMember({ vaultId, actorId: a.userId, targetId: a.userId, now: at() }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      // Whoever left can no longer read the vault: the one who stayed reads it.
      const stayer = await store.vaults
        .listMembers({ vaultId, actorId: owner.userId })
        .catch(() => store.vaults.listMembers({ vaultId, actorId: a.userId }));
      expect(stayer.map((m) => m.role)).toEqual(["owner"]);
    });

    test("rekey replaces every wrap and item and bumps the key version, or changes nothing", async () => {
      const a = await join();
      const { vaultId } = await vaultWith([a]);
      const itemIds = [newId<ItemId>(), newId<ItemId>()];
      for (const id of itemIds)
        await store.items.createItem({
          vaultId,
          actorId: a.userId,
          itemId: id,
          write: { encryptedData: "AAAA", encryptedName: "AAAA" },
          limits: ROOMY,
          now: at(),
        });
      const before = await store.items.listItems({ vaultId, actorId: owner.userId });
      const newKey = Buffer.alloc(32, 7);
      const newKeys = [owner, a].map((p) => ({ userId: p.userId, ...wrapFor(newKey, p, owner) }));
      const items = itemIds.map((itemId) => ({ itemId, encryptedData: "BBBB", encryptedName: "CCCC" }));

      await expect(
        store.vaults.rekeyVault({ vaultId, actorId: owner.userId, rekey: { newKeys: newKeys.slice(1), items }, now: at() }),
      ).rejects.toMatchObject({ type: "INVALID", data: { field: "newKeys" } });
      await expect(
        store.vaults.rekeyVault({ vaultId, actorId: owner.userId, rekey: { newKeys, items: items.slice(1) }, now: at() }),
      ).rejects.toMatchObject({ type: "INVALID", data: { field: "items" } });
      await expect(
        store.vaults.rekeyVault({ vaultId, actorId: owner.userId, rekey: { newKeys, items, keyVersion: 3 }, now: at() }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.vaults.rekeyVault({ vaultId, actorId: a.userId, rekey: { newKeys, items }, now: at() })).rejects.toMatchObject({
        type: "FORBIDDEN",
      });
      expect(await store.items.listItems({ vaultId, actorId: owner.userId })).toEqual(before);

      await store.vaults.rekeyVault({ vaultId, actorId: owner.userId, rekey: { newKeys, items, keyVersion: 1 }, now: at() });
      const after = await store.items.listItems({ vaultId, actorId: owner.userId });
      expect(after!.map((i) => [i.encryptedData, i.encryptedName, i.revision, i.keyVersion])).toEqual([
        ["BBBB", "CCCC", 2, 2],
        ["BBBB", "CCCC", 2, 2],
      ]);
      const view = await store.vaults.getVault({ vaultId, userId: a.userId });
      expect(view).toMatchObject({
        keyVersion: 2,
        rekeyRequired: false,
        senderId: owner.userId,
        encryptedVaultKey: newKeys[1]!.encryptedVaultKey,
      });
    });

    test("a rekey of 2,000 items, more than one batched statement holds on either engine, replaces every item", async () => {
      const { vaultId } = await vaultWith([]);
      const ids = Array.from({ length: 2000 }, () => newId<ItemId>());
      for (const id of ids)
        await store.items.createItem({
          vaultId,
          actorId: owner.userId,
          itemId: id,
          write: { encryptedData: "AAAA", encryptedName: "AAAA" },
          limits: ROOMY,
          now: at(),
        });
      const newKeys = [{ userId: owner.userId, ...wrapFor(Buffer.alloc(32, 1), owner, owner) }];
      await store.vaults.rekeyVault({
        vaultId,
        actorId: owner.userId,
        rekey: { newKeys, items: ids.map((itemId, n) => ({ itemId, encryptedData: b64(Buffer.from(`n${n}`)), encryptedName: "AAAA" })) },
        now: at(),
      });
      const items = await store.items.listItems({ vaultId, actorId: owner.userId });
      const byId = new Map(items!.map((i) => [i.itemId, i]));
      ids.forEach((id, n) => expect(byId.get(id)!.encryptedData).toBe(b64(Buffer.from(`n${n}`))));
    });

    test("items: revisions, conflicts, key versions, and deletion with the vault", async () => {
      const { vaultId } = await vaultWith([]);
      const id = newId<ItemId>();
      const created = await store.items.createItem({
        vaultId,
        actorId: owner.userId,
        itemId: id,
        write: { encryptedData: "AAAA", encryptedName: "AAAA" },
        limits: ROOMY,
        now: at(),
      });
      expect(created.revision).toBe(1);
      // The id in use is found with the membership read (items.ts), not left to the primary key.
      await expect(
        store.items.createItem({
          vaultId,
          actorId: owner.userId,
          itemId: id,
          write: { encryptedData: "AAAA", encryptedName: "AAAA" },
          limits: ROOMY,
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "CONFLICT", message: itemIdTaken().message });
      // An id whose item is in the trash is not taken again until it is restored or purged.
      const trashed = newId<ItemId>();
      const write = { encryptedData: "AAAA", encryptedName: "AAAA" };
      await store.items.createItem({ vaultId, actorId: owner.userId, itemId: trashed, write, limits: ROOMY, now: at() });
      await store.items.deleteItem({ vaultId, actorId: owner.userId, itemId: trashed, now: at() });
      await expect(
        store.items.createItem({ vaultId, actorId: owner.userId, itemId: trashed, write, limits: ROOMY, now: at() }),
      ).rejects.toMatchObject({ type: "CONFLICT", message: itemIdInTrash().message });
      // Nor does a non-member learn either.
      await expect(
        store.items.createItem({ vaultId, actorId: newId(), itemId: id, write, limits: ROOMY, now: at() }),
      ).rejects.toMatchObject({ type: "NOT_FOUND" });
      expect(
        (
          await store.items.updateItem({
            vaultId,
            actorId: owner.userId,
            itemId: id,
            write: { encryptedData: "BBBB", encryptedName: "AAAA", revision: 1 },
            limits: ROOMY,
            now: at(),
          })
        ).revision,
      ).toBe(2);
      await expect(
        store.items.updateItem({
          vaultId,
          actorId: owner.userId,
          itemId: id,
          write: { encryptedData: "CCCC", encryptedName: "AAAA", revision: 1 },
          limits: ROOMY,
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(
        store.items.createItem({
          vaultId,
          actorId: owner.userId,
          itemId: newId(),
          write: { encryptedData: "AAAA", encryptedName: "AAAA", keyVersion: 2 },
          limits: ROOMY,
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.items.getItem({ vaultId, actorId: newId(), itemId: id })).rejects.toMatchObject({ type: "NOT_FOUND" });
      await store.vaults.deleteVault({ vaultId, actorId: owner.userId });
      await expect(store.vaults.getVault({ vaultId, userId: owner.userId })).rejects.toMatchObject({ type: "NOT_FOUND" });
      await expect(store.items.listItems({ vaultId, actorId: owner.userId })).rejects.toMatchObject({ type: "NOT_FOUND" });
    });

    test("history and trash: updates keep what they replace, deletes go to the trash, restore and purge; a rekey keeps what it names", async () => {
      const { vaultId } = await vaultWith([]);
      const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
      const id = newId<ItemId>();
      const on = { vaultId, actorId: owner.userId };
      const write = (data: string) => ({ encryptedData: b64(Buffer.from(data)), encryptedName: "AAAA" });
      await store.items.createItem({ ...on, itemId: id, write: write("r1"), limits: ROOMY, now: T(1) });
      for (const [n, data] of [
        [2, "r2"],
        [3, "r3"],
        [4, "r4"],
      ] as const)
        await store.items.updateItem({ ...on, itemId: id, write: write(data), limits: ROOMY, history: { keep: 2 }, now: at(n) });
      const revisionsOf = async () => (await store.items.listHistory({ ...on, itemId: id })).map((r) => [r.revision, r.encryptedData]);
      expect(await revisionsOf()).toEqual([
        [3, write("r3").encryptedData],
        [2, write("r2").encryptedData],
      ]);
      await store.items.deleteItem({ ...on, itemId: id, now: T(5) });
      expect(await store.items.listItems(on)).toEqual([]);
      expect((await store.items.listTrash(on)).map((t) => [t.itemId, t.revision, t.deletedAt, t.deletedBy])).toEqual([
        [id, 4, T(5), owner.userId],
      ]);
      await expect(store.items.createItem({ ...on, itemId: id, write: write("x"), limits: ROOMY, now: T(6) })).rejects.toMatchObject({
        type: "CONFLICT",
      });
      expect(await store.items.restoreItem({ ...on, itemId: id, now: T(7) })).toMatchObject({ itemId: id, revision: 5 });
      await expect(store.items.restoreItem({ ...on, itemId: id, now: T(8) })).rejects.toMatchObject({ type: "NOT_FOUND" });
      // A rekey naming one revision keeps it under the new key version and drops the other.
      const newKeys = [{ userId: owner.userId, ...wrapFor(Buffer.alloc(32, 2), owner, owner) }];
      await store.vaults.rekeyVault({
        ...on,
        rekey: { newKeys, items: [{ itemId: id, ...write("r4'") }], history: [{ itemId: id, revision: 3, ...write("r3'") }] },
        now: T(9),
      });
      expect(await revisionsOf()).toEqual([[3, write("r3'").encryptedData]]);
      expect((await store.items.listHistory(on))[0]!.keyVersion).toBe(2);
      await store.items.deleteItem({ ...on, itemId: id, now: T(10) });
      await expect(store.items.purgeItem({ ...on, actorId: newId<UserId>(), itemId: id })).rejects.toMatchObject({ type: "NOT_FOUND" });
      // The sweeper's purge: only what was deleted before its time, with its history.
      expect((await store.housekeeping.purgeExpired({ now: T(11), invitesExpiredBefore: T(0), trashDeletedBefore: T(9) })).trash).toBe(0);
      expect((await store.housekeeping.purgeExpired({ now: T(11), invitesExpiredBefore: T(0), trashDeletedBefore: T(10) })).trash).toBe(1);
      expect(await store.items.listTrash(on)).toEqual([]);
      expect(await store.items.listHistory(on)).toEqual([]);
    });

    test("vault limits: a write past the vault's items or bytes is 413 and writes nothing; concurrent writes never pass them together", async () => {
      const { vaultId } = await vaultWith([]);
      const limits = { maxBytes: 40, maxItems: 3 };
      const write = (data: string, itemId = newId<ItemId>()) =>
        store.items.createItem({
          vaultId,
          actorId: owner.userId,
          itemId,
          write: { encryptedData: data, encryptedName: "AAAA" },
          limits,
          now: at(),
        });
      // 8 + 8 + 8 bytes in three items: the fourth is one too many, whatever its size.
      const first = await write("AAAA");
      await write("BBBB");
      await write("CCCC");
      await expect(write("DDDD")).rejects.toMatchObject({ type: "PAYLOAD_TOO_LARGE" });
      // Growing an item past the bytes is refused; shrinking, or growing within them, is fine.
      const grow = (data: string) =>
        store.items.updateItem({
          vaultId,
          actorId: owner.userId,
          itemId: first.itemId,
          write: { encryptedData: data, encryptedName: "AAAA" },
          limits,
          now: at(),
        });
      await expect(grow("A".repeat(24))).rejects.toMatchObject({ type: "PAYLOAD_TOO_LARGE" });
      expect((await grow("A".repeat(20))).revision).toBe(2); // 24 + 16 = 40 bytes: at the limit, not past it
      await expect(grow("A".repeat(24))).rejects.toMatchObject({ type: "PAYLOAD_TOO_LARGE" });
      const sizes = new Map(
        (await store.items.listItems({ vaultId, actorId: owner.userId })).map((i) => [i.itemId, i.encryptedData.length]),
      );
      expect([sizes.get(first.itemId), sizes.size]).toEqual([20, 3]);
      // Concurrent creates in a fresh vault with room for two: exactly two land.
      const fresh = (await vaultWith([])).vaultId;
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, () =>
          store.items.createItem({
            vaultId: fresh,
            actorId: owner.userId,
            itemId: newId(),
            write: { encryptedData: "A".repeat(12), encryptedName: "AAAA" },
            limits: { maxBytes: 32, maxItems: 100 },
            now: at(),
          }),
        ),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(2);
      for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ type: "PAYLOAD_TOO_LARGE" });
      expect(await store.items.listItems({ vaultId: fresh, actorId: owner.userId })).toHaveLength(2);
    });

    /** Creates of small items, all sent at once (by the owner, unless one names its actor). */
    const createAllAtOnce = (
      vaultId: VaultId,
      limits: { maxItems: number; maxBytes: number },
      creates: ReadonlyArray<{ actorId?: UserId; itemId: ItemId; events: DomainEvent[] }>,
    ) =>
      Promise.allSettled(
        creates.map((c) =>
          store.items.createItem({
            vaultId,
            actorId: c.actorId ?? owner.userId,
            itemId: c.itemId,
            write: { encryptedData: "AAAA", encryptedName: "BBBB" },
            limits,
            now: at(),
            events: c.events,
          }),
        ),
      );

    test("creates arriving together in one vault (stored as a group on SQL): each answers for itself; what is accepted is stored whole, with its change and its event", async () => {
      await store.outbox.markSent((await store.outbox.pending(1000)).map((e) => e.eventId));
      const stranger = await join();
      const { vaultId } = await vaultWith([]);
      const start = (await store.items.listChanges({ vaultId, actorId: owner.userId, since: 0 })).cursor;
      const twice = newId<ItemId>();
      const limits = { maxItems: 20, maxBytes: 1 << 20 };
      // The stranger early, while the vault has room: refused, it must take none.
      const creates = Array.from({ length: 26 }, (_, i) =>
        i === 1
          ? { actorId: stranger.userId, itemId: newId<ItemId>() }
          : { actorId: owner.userId, itemId: i === 3 || i === 9 ? twice : newId<ItemId>() },
      ).map((c) => ({ ...c, event: event(owner.orgId, "item.created", { vaultId, itemId: c.itemId }) }));
      const outcomes = await createAllAtOnce(
        vaultId,
        limits,
        creates.map((c) => ({ ...c, events: [c.event] })),
      );
      const accepted = creates.filter((_, i) => outcomes[i]!.status === "fulfilled");
      const refusals = outcomes.flatMap((o) => (o.status === "rejected" ? [(o.reason as { type: string }).type] : []));
      // Twenty fit; the same id lands once; the stranger is refused (and takes no room).
      expect(accepted).toHaveLength(20);
      // (At most: on an adapter that runs them side by side, the vault may be full before either.)
      expect(accepted.filter((c) => c.itemId === twice).length).toBeLessThanOrEqual(1);
      expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ type: "NOT_FOUND" });
      expect(refusals.every((t) => ["PAYLOAD_TOO_LARGE", "CONFLICT", "NOT_FOUND"].includes(t))).toBe(true);
      const ids = (list: Array<{ itemId: string }>) => list.map((i) => i.itemId).sort();
      expect(ids(await store.items.listItems({ vaultId, actorId: owner.userId }))).toEqual(ids(accepted));
      expect(ids((await store.items.listChanges({ vaultId, actorId: owner.userId, since: start })).items)).toEqual(ids(accepted));
      expect((await store.outbox.pending(1000)).map((e) => e.eventId).sort()).toEqual(accepted.map((c) => c.event.eventId).sort());
    });

    test("creates arriving together with different limits: each is held to its own", async () => {
      const { vaultId } = await vaultWith([]);
      const tight = { maxItems: 1, maxBytes: 1 << 20 };
      const ev = () => [event(owner.orgId, "item.created", { vaultId })];
      // The first fills the tight limit; after it, the tight ones are refused and the roomy ones land
      // (on SQL, the first of the four alone and the three after it as one group).
      await createAllAtOnce(vaultId, ROOMY, [{ itemId: newId<ItemId>(), events: ev() }]);
      const outcomes = await Promise.all([
        createAllAtOnce(vaultId, tight, [{ itemId: newId<ItemId>(), events: ev() }]),
        createAllAtOnce(vaultId, ROOMY, [{ itemId: newId<ItemId>(), events: ev() }]),
        createAllAtOnce(vaultId, tight, [{ itemId: newId<ItemId>(), events: ev() }]),
        createAllAtOnce(vaultId, ROOMY, [{ itemId: newId<ItemId>(), events: ev() }]),
      ]);
      expect(outcomes.map(([o]) => (o!.status === "fulfilled" ? "ok" : (o!.reason as { type: string }).type))).toEqual([
        "PAYLOAD_TOO_LARGE",
        "ok",
        "PAYLOAD_TOO_LARGE",
        "ok",
      ]);
    });

    test("creates arriving together: one that fails in the store (its event's id already written) fails alone; the others land", async () => {
      await store.outbox.markSent((await store.outbox.pending(1000)).map((e) => e.eventId));
      const { vaultId } = await vaultWith([]);
      const shared = event(owner.orgId, "item.created", { vaultId });
      const creates = Array.from({ length: 6 }, (_, i) => ({
        itemId: newId<ItemId>(),
        events: [i === 2 || i === 4 ? shared : event(owner.orgId, "item.created", { vaultId })],
      }));
      const outcomes = await createAllAtOnce(vaultId, ROOMY, creates);
      // Of the two with the same event, one lands; every other create lands too.
      const refused = outcomes.flatMap((o, i) => (o.status === "rejected" ? [i] : []));
      expect(refused.length === 1 && [2, 4].includes(refused[0]!)).toBe(true);
      expect((outcomes[refused[0]!] as PromiseRejectedResult).reason).toMatchObject({ type: "CONFLICT" });
      const listed = (await store.items.listItems({ vaultId, actorId: owner.userId })).map((i) => i.itemId).sort();
      expect(listed).toEqual(
        creates
          .filter((_, i) => i !== refused[0])
          .map((c) => c.itemId)
          .sort(),
      );
    });

    test("a create and a restore with one event each: the row, its change record (a delta read sees it) and the event, in its transaction", async () => {
      // On PostgreSQL the three are one statement (EngineOps.insertItems); a write refused after the lock writes none of them.
      // Each a millisecond after the one before: events of one millisecond are in no particular order.
      let step = 0;
      const ev = (type: DomainEvent["type"], itemId: ItemId): DomainEvent => ({
        eventId: newId(),
        type,
        at: at(step++),
        actorId: owner.userId,
        orgId: owner.orgId,
        vaultId,
        itemId,
      });
      await store.outbox.markSent((await store.outbox.pending(1000)).map((e) => e.eventId));
      const { vaultId } = await vaultWith([]);
      const base = { vaultId, actorId: owner.userId, now: at() };
      const itemId = newId<ItemId>();
      const start = (await store.items.listChanges({ ...base, since: 0 })).cursor;
      const created = ev("item.created", itemId);
      const write = { encryptedData: "AAAA", encryptedName: "BBBB" };
      await store.items.createItem({ ...base, itemId, write, limits: ROOMY, events: [created] });
      const afterCreate = await store.items.listChanges({ ...base, since: start });
      expect(afterCreate.items.map((i) => [i.itemId, i.encryptedName, i.revision])).toEqual([[itemId, "BBBB", 1]]);
      expect(afterCreate.cursor).toBeGreaterThan(start);
      // Refused under the lock (the id is taken): no row, no change, no event.
      await expect(
        store.items.createItem({ ...base, itemId, write, limits: ROOMY, events: [ev("item.created", itemId)] }),
      ).rejects.toMatchObject({
        type: "CONFLICT",
      });
      expect((await store.items.listChanges({ ...base, since: afterCreate.cursor })).items).toEqual([]);
      const deleted = ev("item.deleted", itemId);
      await store.items.deleteItem({ ...base, itemId, events: [deleted] });
      const afterDelete = await store.items.listChanges({ ...base, since: afterCreate.cursor });
      expect(afterDelete.deleted).toEqual([itemId]);
      const restored = ev("item.restored", itemId);
      expect((await store.items.restoreItem({ ...base, itemId, events: [restored] })).itemId).toBe(itemId);
      const afterRestore = await store.items.listChanges({ ...base, since: afterDelete.cursor });
      expect(afterRestore.items.map((i) => i.itemId)).toEqual([itemId]);
      expect(afterRestore.deleted).toEqual([]);
      expect((await store.outbox.pending(1000)).map((e) => e.eventId)).toEqual([created, deleted, restored].map((e) => e.eventId));
      expect((await store.outbox.pending(1))[0]).toEqual(created);
    });

    test("outbox: a change writes its events in its own transaction, in order; a refused change writes none; a revoke only when it revokes", async () => {
      // Each a millisecond after the last: events of different changes within one millisecond have no order among them.
      let tick = 0;
      const ev = (type: DomainEvent["type"], extra: Partial<DomainEvent> = {}): DomainEvent => ({
        eventId: newId(),
        type,
        at: at(++tick),
        actorId: owner.userId,
        orgId: owner.orgId,
        ...extra,
      });
      const drain = async () => {
        const all = await store.outbox.pending(1000);
        await store.outbox.markSent(all.map((e) => e.eventId));
        return all;
      };
      await drain();
      const { vaultId } = await vaultWith([]);
      const item = { vaultId, actorId: owner.userId, write: { encryptedData: "AAAA", encryptedName: "AAAA" }, limits: ROOMY, now: at() };
      const itemId = newId<ItemId>();
      const two = [ev("item.created", { vaultId, itemId }), ev("item.updated", { vaultId, itemId })];
      await store.items.createItem({ ...item, itemId, events: two });
      // Refused: a second create of the id, an update by a stranger, a write past the vault's limits.
      await expect(store.items.createItem({ ...item, itemId, events: [ev("item.created")] })).rejects.toMatchObject({ type: "CONFLICT" });
      await expect(store.items.updateItem({ ...item, actorId: newId(), itemId, events: [ev("item.updated")] })).rejects.toMatchObject({
        type: "NOT_FOUND",
      });
      await expect(
        store.items.createItem({ ...item, itemId: newId(), limits: { maxBytes: 8, maxItems: 1 }, events: [ev("item.created")] }),
      ).rejects.toMatchObject({ type: "PAYLOAD_TOO_LARGE" });
      const inv = pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`);
      const created = ev("invite.created", { inviteId: inv.inviteId });
      await store.invites.createInvite({ invite: inv, tokenHash: newId(), events: [created] });
      const revoked = ev("invite.revoked", { inviteId: inv.inviteId });
      expect(await store.invites.revokeInvite({ inviteId: inv.inviteId, orgId: owner.orgId, now: at(), events: [revoked] })).toBe(
        "revoked",
      );
      const again = ev("invite.revoked", { inviteId: inv.inviteId });
      expect(await store.invites.revokeInvite({ inviteId: inv.inviteId, orgId: owner.orgId, now: at(), events: [again] })).toBe(
        "not-pending",
      );
      const waiting = await store.outbox.pending(1000);
      expect(waiting.map((e) => e.eventId)).toEqual([...two, created, revoked].map((e) => e.eventId));
      expect(waiting[0]).toEqual(two[0]);
      // Marked sent, they are gone; marking again, or an unknown id, is nothing.
      await store.outbox.markSent([two[0]!.eventId, newId()]);
      expect((await store.outbox.pending(1000)).map((e) => e.eventId)).toEqual([two[1], created, revoked].map((e) => e!.eventId));
      await store.outbox.markSent([two[0]!.eventId]);
      expect(await store.outbox.pending(2)).toHaveLength(2);
      await drain();
      expect(await store.outbox.pending(10)).toEqual([]);
    });

    test("audit: events append to their organization's chain once each, in order, hashed", async () => {
      const org = newId<OrgId>();
      const other = newId<OrgId>();
      const first = [
        event(org, "vault.created", { itemId: undefined }),
        event(other),
        event(org),
        event(org, "invite.created", { vaultId: undefined, itemId: undefined, inviteId: newId<InviteId>() }),
      ];
      expect(await store.audit.appendAuditEvents(first)).toEqual({ appended: 4, alreadyRecorded: 0 });
      // Delivered again (at least once), with one new event: only the new one is recorded.
      const late = event(org, "item.deleted");
      expect(await store.audit.appendAuditEvents([first[2]!, late, first[0]!, late])).toEqual({ appended: 1, alreadyRecorded: 3 });
      expect(await store.audit.appendAuditEvents([])).toEqual({ appended: 0, alreadyRecorded: 0 });

      const records = await store.audit.listAuditRecords({ orgId: org, limit: 100 });
      expect(records.map((r) => r.seq)).toEqual([4, 3, 2, 1]);
      expect(records.map((r) => r.eventId)).toEqual([late, first[3]!, first[2]!, first[0]!].map((e) => e.eventId));
      expect(records[3]).toEqual({ ...first[0], seq: 1, prevHash: EMPTY_HEAD.hash, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(Object.keys(records[0]!)).toEqual([
        "eventId",
        "seq",
        "type",
        "at",
        "actorId",
        "orgId",
        "vaultId",
        "itemId",
        "prevHash",
        "hash",
      ]);
      for (const r of records) expect(r.hash).toBe(auditHash(r));
      for (let i = 0; i < 3; i++) expect(records[i]!.prevHash).toBe(records[i + 1]!.hash);
      expect(await store.audit.auditHead(org)).toEqual({ seq: 4, hash: records[0]!.hash });
      expect((await store.audit.listAuditRecords({ orgId: other, limit: 100 })).map((r) => r.seq)).toEqual([1]);
      expect(await store.audit.auditHead(newId())).toEqual(EMPTY_HEAD);

      expect((await store.audit.listAuditRecords({ orgId: org, limit: 2 })).map((r) => r.seq)).toEqual([4, 3]);
      expect((await store.audit.listAuditRecords({ orgId: org, limit: 2, before: 3 })).map((r) => r.seq)).toEqual([2, 1]);
      expect(await store.audit.listAuditRecords({ orgId: org, limit: 2, before: 1 })).toEqual([]);
      expect((await store.audit.readAuditChain({ orgId: org, afterSeq: 1, upToSeq: 3, limit: 100 })).map((r) => r.seq)).toEqual([2, 3]);
      expect(
        await verifyAuditChain(await store.audit.auditHead(org), (a, u, l) =>
          store.audit.readAuditChain({ orgId: org, afterSeq: a, upToSeq: u, limit: l }),
        ),
      ).toEqual({ ok: true, count: 4, head: records[0]!.hash });
    });

    test("audit: concurrent appenders (redeliveries racing) leave one gapless chain, each event once", async () => {
      const org = newId<OrgId>();
      const events = Array.from({ length: 60 }, () => event(org));
      // Six workers, each handed overlapping slices, all at once.
      const slices = Array.from({ length: 6 }, (_, w) => events.filter((_, i) => i % 3 === w % 3 || i % 5 === w));
      // They wait for each other on the organization's head: none fails, none records an event twice.
      const appended = await Promise.all(slices.map((slice) => store.audit.appendAuditEvents(slice)));
      expect(appended.reduce((sum, r) => sum + r.appended, 0)).toBe(60);
      const chain = await store.audit.readAuditChain({ orgId: org, afterSeq: 0, upToSeq: 1_000, limit: 1_000 });
      expect(chain.map((r) => r.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(new Set(chain.map((r) => r.eventId)).size).toBe(60);
      expect(
        await verifyAuditChain(await store.audit.auditHead(org), (a, u, l) =>
          store.audit.readAuditChain({ orgId: org, afterSeq: a, upToSeq: u, limit: l }),
        ),
      ).toMatchObject({ ok: true, count: 60 });
    });

    test("purge: expired invites and expired or revoked refresh tokens go; live ones and used invites stay", async () => {
      const invites = {
        expiredPending: pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`, at(-1_000)),
        expiredRevoked: pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`, at(-1_000)),
        live: pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`, at(3_600_000)),
        liveRevoked: pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`, at(3_600_000)),
        used: pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`, at(1_500)),
      };
      for (const inv of Object.values(invites)) await store.invites.createInvite({ invite: inv, tokenHash: newId() });
      await store.invites.revokeInvite({ inviteId: invites.expiredRevoked.inviteId, orgId: owner.orgId, now: at() });
      await store.invites.revokeInvite({ inviteId: invites.liveRevoked.inviteId, orgId: owner.orgId, now: at() });
      await store.accounts.registerWithInvite({
        user: (await newPerson(invites.used.email)).user,
        inviteId: invites.used.inviteId,
        now: at(),
      });
      // Kept for a retention period after expiry: a purge that reaches back only to before they expired takes none.
      expect(await store.housekeeping.purgeExpired({ now: at(2_000), invitesExpiredBefore: at(-3_600_000) })).toMatchObject({ invites: 0 });
      expect(await store.invites.getInvite(invites.expiredPending.inviteId)).toMatchObject({ status: "pending" });

      const family = newId();
      const h = (name: string) => `${name}-${family}`;
      const expiredSession = await startSession(h("expired"), at(-1_000));
      await startSession(h("active"));
      await startSession(h("rotated"));
      await store.sessions.rotateRefreshToken({
        oldHash: h("rotated"),
        next: { tokenHash: h("next"), createdAt: at(), expiresAt: at(60_000) },
        now: at(),
        address: "192.0.2.3",
      });
      const endedSession = await startSession(h("revoked"));
      await store.sessions.endSessionOfToken({ tokenHash: h("revoked"), userId: owner.userId, now: at() });

      // Now is 2 s ahead, and the retention over: the used invite has expired too, and stays.
      const purged = await store.housekeeping.purgeExpired({ now: at(2_000), invitesExpiredBefore: at(2_000) });
      expect(purged.invites).toBeGreaterThanOrEqual(2);
      expect(purged.refreshTokens).toBeGreaterThanOrEqual(2);
      expect(purged.sessions).toBeGreaterThanOrEqual(1);
      expect(await store.sessions.findSession(expiredSession)).toBeNull();
      // An ended session stays until it would have expired: its device, back later, is told why it ended.
      expect(await store.sessions.findSession(endedSession)).toMatchObject({ endedAt: expect.any(String) });
      expect(await store.invites.getInvite(invites.expiredPending.inviteId)).toBeNull();
      expect(await store.invites.getInvite(invites.expiredRevoked.inviteId)).toBeNull();
      expect(await store.invites.getInvite(invites.live.inviteId)).toMatchObject({ status: "pending" });
      expect(await store.invites.getInvite(invites.liveRevoked.inviteId)).toMatchObject({ status: "revoked" });
      expect(await store.invites.getInvite(invites.used.inviteId)).toMatchObject({ status: "used" });

      const next = () => ({ tokenHash: newId(), createdAt: at(), expiresAt: at(60_000) });
      const address = "192.0.2.4";
      // Gone: unknown. A rotated (used) token still trips reuse detection; live ones still rotate.
      expect(await store.sessions.rotateRefreshToken({ oldHash: h("expired"), next: next(), now: at(), address })).toEqual({
        ok: false,
        reason: "unknown",
      });
      expect(await store.sessions.rotateRefreshToken({ oldHash: h("revoked"), next: next(), now: at(), address })).toEqual({
        ok: false,
        reason: "unknown",
      });
      expect(await store.sessions.rotateRefreshToken({ oldHash: h("active"), next: next(), now: at(), address })).toEqual({
        ok: true,
        userId: owner.userId,
        sessionId: expect.any(String),
        enrolOnly: false,
      });
      expect(await store.sessions.rotateRefreshToken({ oldHash: h("rotated"), next: next(), now: at(), address })).toMatchObject({
        ok: false,
        reason: "reused",
      });
      expect(await store.housekeeping.purgeExpired({ now: at(2_000), invitesExpiredBefore: at(2_000) })).toEqual({
        invites: 0,
        refreshTokens: expect.any(Number),
        sessions: expect.any(Number),
        trash: 0,
        rememberedDevices: expect.any(Number),
        uploads: 0,
      });
    });

    test("signed roster: each link is stored with its change, in order; a refused link writes nothing; the chain goes with the vault", async () => {
      const member = await join();
      const outsider = await join();
      const { vaultKey, vaultId, chain } = await signedVault("signed", 7);

      const share = wrapFor(vaultKey, member, owner);
      const add = chain.next(owner, {
        op: "add",
        subjectId: member.userId,
        role: "member",
        subjectKey: fingerprintOf(member.user),
        wraps: [{ userId: member.userId, sha256: wrapHash(share.encryptedVaultKey) }],
      });
      // Without the link, or with it for another user: refused, nothing written.
      await expect(
        store.vaults.addMember({
          vaultId,
          actorId: owner.userId,
          member: { userId: member.userId, role: "member", ...share },
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "INVALID", data: { field: "rosterLink" } });
      await expect(
        store.vaults.addMember({
          vaultId,
          actorId: owner.userId,
          member: { userId: outsider.userId, role: "member", ...wrapFor(vaultKey, outsider, owner), rosterLink: add },
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "INVALID" });
      expect(await store.vaults.getRoster({ vaultId, actorId: owner.userId })).toHaveLength(1);
      expect((await store.vaults.listMembers({ vaultId, actorId: owner.userId }))!.map((m) => m.userId)).toEqual([owner.userId]);

      await store.vaults.addMember({
        vaultId,
        actorId: owner.userId,
        member: { userId: member.userId, role: "member", ...share, rosterLink: add },
        now: at(),
      });
      chain.accept(add);
      const remove = chain.next(member, { op: "remove", subjectId: member.userId, subjectKey: fingerprintOf(member.user), wraps: [] });
      await store.vaults.removeMember({
        vaultId,
        actorId: member.userId,
        targetId: member.userId,
        now: at(),
        rosterLink: remove,
      });
      expect((await store.vaults.getRoster({ vaultId, actorId: owner.userId }))!.map((l) => [l.seq, l.op])).toEqual([
        [0, "create"],
        [1, "add"],
        [2, "remove"],
      ]);
      await expect(store.vaults.getRoster({ vaultId, actorId: member.userId })).rejects.toMatchObject({ type: "NOT_FOUND" });
      expect(await store.vaults.getRoster({ vaultId, actorId: owner.userId }).then((links) => links![1])).toEqual(add);

      await store.vaults.deleteVault({ vaultId, actorId: owner.userId });
      await expect(store.vaults.getRoster({ vaultId, actorId: owner.userId })).rejects.toMatchObject({ type: "NOT_FOUND" });
    });

    test("statements: kept as registered; an account without them takes them once, the same again is fine, another is a conflict", async () => {
      const stated = await newPerson();
      const keyStatement = { version: 1, signature: Buffer.alloc(64, 1).toString("base64") };
      const kdfStatement = { version: 1, signature: Buffer.alloc(64, 2).toString("base64") };
      const inv = pendingInvite(owner.orgId, owner.userId, stated.user.email);
      await store.invites.createInvite({ invite: inv, tokenHash: newId() });
      const inviteBinding = { inviteId: inv.inviteId, mac: Buffer.alloc(32, 3).toString("base64") };
      const rec = await store.accounts.registerWithInvite({
        user: { ...stated.user, keyStatement, kdfStatement, inviteBinding },
        inviteId: inv.inviteId,
        now: at(),
      });
      expect(await store.accounts.findUserById(rec.userId)).toMatchObject({ keyStatement, kdfStatement, inviteBinding });
      expect(await store.accounts.findUserByEmail(stated.user.email)).toMatchObject({ keyStatement, kdfStatement, inviteBinding });
      expect((await store.accounts.listOrgMembers(owner.orgId)).find((u) => u.userId === rec.userId)).toMatchObject({ keyStatement });

      const plain = await join();
      expect(await store.accounts.findUserById(plain.userId)).not.toHaveProperty("keyStatement");
      await store.accounts.setStatements({ userId: plain.userId, keyStatement });
      expect(await store.accounts.findUserById(plain.userId)).not.toHaveProperty("kdfStatement");
      await store.accounts.setStatements({ userId: plain.userId, keyStatement, kdfStatement });
      expect(await store.accounts.findUserById(plain.userId)).toMatchObject({ keyStatement, kdfStatement });
      await expect(
        store.accounts.setStatements({
          userId: plain.userId,
          kdfStatement: { version: 1, signature: Buffer.alloc(64, 9).toString("base64") },
        }),
      ).rejects.toMatchObject({ type: "CONFLICT", data: { field: "kdfStatement" } });
      expect(await store.accounts.findUserById(plain.userId)).toMatchObject({ kdfStatement });

      // A user id that is taken (one signing key, one account: ids.ts): a conflict, and nobody registered.
      const again = await newPerson();
      const second = pendingInvite(owner.orgId, owner.userId, again.user.email);
      await store.invites.createInvite({ invite: second, tokenHash: newId() });
      await expect(
        store.accounts.registerWithInvite({ user: { ...again.user, userId: plain.userId }, inviteId: second.inviteId, now: at() }),
      ).rejects.toMatchObject({ type: "CONFLICT", data: { field: "signingPublicKey" } });
      expect(await store.accounts.findUserByEmail(again.user.email)).toBeNull();
    });

    test("an invite takes its inviter's statement once, and only while pending", async () => {
      const statement = { version: 1, signature: Buffer.alloc(64, 4).toString("base64") };
      const inv = pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`);
      await store.invites.createInvite({ invite: inv, tokenHash: "statement-" + inv.inviteId });
      expect(await store.invites.getInvite(inv.inviteId)).not.toHaveProperty("statement");
      await store.invites.attachStatement({ inviteId: inv.inviteId, statement, now: at() });
      await store.invites.attachStatement({ inviteId: inv.inviteId, statement, now: at() });
      expect(await store.invites.findInviteByTokenHash("statement-" + inv.inviteId)).toMatchObject({ statement });
      await expect(
        store.invites.attachStatement({
          inviteId: inv.inviteId,
          statement: { ...statement, signature: Buffer.alloc(64, 5).toString("base64") },
          now: at(),
        }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
      const revoked = pendingInvite(owner.orgId, owner.userId, `${newId()}@example.test`);
      await store.invites.createInvite({ invite: revoked, tokenHash: newId() });
      await store.invites.revokeInvite({ inviteId: revoked.inviteId, orgId: owner.orgId, now: at() });
      await expect(store.invites.attachStatement({ inviteId: revoked.inviteId, statement, now: at() })).rejects.toMatchObject({
        type: "INVITE_NOT_REDEEMABLE",
        message: inviteNotPendingForStatement().message,
      });
      expect(await store.invites.getInvite(revoked.inviteId)).not.toHaveProperty("statement");
    });

    test("a signed vault is renamed only with its rename link, stored in the rename's transaction; a refused one writes nothing", async () => {
      const { vaultId, chain } = await signedVault("Before", 8);
      const rename = (name: string) => chain.next(owner, { op: "rename", name, wraps: [] });
      await expect(store.vaults.renameVault({ vaultId, actorId: owner.userId, name: "After", now: at() })).rejects.toMatchObject({
        type: "INVALID",
        data: { field: "rosterLink" },
      });
      await expect(
        store.vaults.renameVault({ vaultId, actorId: owner.userId, name: "After", now: at(), rosterLink: rename("Something else") }),
      ).rejects.toMatchObject({ type: "INVALID", data: { field: "rosterLink.name" } });
      expect((await store.vaults.getVault({ vaultId, userId: owner.userId })).vaultName).toBe("Before");
      expect(await store.vaults.getRoster({ vaultId, actorId: owner.userId })).toHaveLength(1);
      const link = rename("After");
      expect(
        (await store.vaults.renameVault({ vaultId, actorId: owner.userId, name: "After", now: at(), rosterLink: link })).vaultName,
      ).toBe("After");
      expect((await store.vaults.getRoster({ vaultId, actorId: owner.userId })).at(-1)).toEqual(link);
    });

    // ---- An account's security: factors, recovery codes, policies, recovery ----

    test("second factors: one app per account (two at once: one lands), the last one kept under a policy, a TOTP step and a counter used once", async () => {
      const p = await ownOrg();
      const sessions = planFactorChangeSessions("enrol", undefined);
      const totp = (factorId: string) => ({
        factorId,
        userId: p.userId,
        kind: "totp" as const,
        name: "App",
        createdAt: at(),
        sealedSecret: "s1.x.y",
        lastStep: 100,
      });
      const both = await Promise.allSettled([
        store.security.addFactor({ factor: totp(newId()), sessions }),
        store.security.addFactor({ factor: totp(newId()), sessions }),
      ]);
      expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      const [app] = await store.security.listFactors(p.userId);
      expect(app).toMatchObject({ kind: "totp", lastStep: 100, sealedSecret: "s1.x.y" });
      expect(await store.security.useTotpStep({ factorId: app!.factorId, step: 100, at: at() })).toBe(false);
      const steps = await Promise.all(
        [101, 101, 101].map((step) => store.security.useTotpStep({ factorId: app!.factorId, step, at: at() })),
      );
      expect(steps.filter(Boolean)).toHaveLength(1);
      const key = {
        factorId: newId(),
        userId: p.userId,
        kind: "webauthn" as const,
        name: "Key",
        createdAt: at(),
        credentialId: "abc",
        publicKey: "pk",
        counter: 5,
        transports: ["usb"],
      };
      await store.security.addFactor({ factor: key, sessions });
      // The same key (its credential id) again: refused, even as another factor.
      await expect(store.security.addFactor({ factor: { ...key, factorId: newId() }, sessions })).rejects.toMatchObject({
        type: "CONFLICT",
        message: credentialEnrolledAlready().message,
      });
      expect(await store.security.useWebauthnCounter({ factorId: key.factorId, from: 4, to: 6, at: at() })).toBe(false);
      expect(await store.security.useWebauthnCounter({ factorId: key.factorId, from: 5, to: 6, at: at() })).toBe(true);
      expect((await store.security.listFactors(p.userId)).find((f) => f.factorId === key.factorId)).toMatchObject({
        counter: 6,
        transports: ["usb"],
      });
      await store.security.replaceRecoveryCodes({ userId: p.userId, codeHashes: ["h1", "h2"], at: at() });
      const uses = await Promise.all([1, 2, 3].map(() => store.security.useRecoveryCode({ userId: p.userId, codeHash: "h1", at: at() })));
      expect(uses.filter(Boolean)).toHaveLength(1);
      expect(await store.security.recoveryCodesLeft(p.userId)).toBe(1);
      // The policy that keeps the last factor is the one stored (read under the account's lock).
      const policies = { requireSecondFactor: true, recoveryMinThreshold: 2, client: { minPasswordScore: 0 } };
      await store.security.setPolicies({ orgId: p.orgId, policies, at: at() });
      const removal = (userId: UserId, factorId: string) =>
        store.security.removeFactor({ userId, factorId, sessions: planFactorChangeSessions("remove", undefined), at: at() });
      await removal(p.userId, key.factorId);
      await expect(removal(p.userId, app!.factorId)).rejects.toMatchObject({ type: "FORBIDDEN", message: lastFactorRequired().message });
      await expect(removal(owner.userId, app!.factorId)).rejects.toMatchObject({ type: "NOT_FOUND", message: factorNotFound().message });
      await store.security.setPolicies({ orgId: p.orgId, policies: { ...policies, requireSecondFactor: false }, at: at() });
      await removal(p.userId, app!.factorId);
      // The last factor gone, its recovery codes go too.
      expect(await store.security.recoveryCodesLeft(p.userId)).toBe(0);
    });

    test("policies: none until set, then as set", async () => {
      const orgId = owner.orgId;
      const policies = { requireSecondFactor: true, inviteMaxLifetime: "48h", recoveryMinThreshold: 3, client: { minPasswordScore: 2 } };
      await store.security.setPolicies({ orgId, policies, at: at() });
      expect(await store.security.getPolicies(orgId)).toEqual(policies);
      await store.security.setPolicies({ orgId, policies: { ...policies, requireSecondFactor: false }, at: at() });
      expect((await store.security.getPolicies(orgId))!.requireSecondFactor).toBe(false);
      await store.security.setPolicies({
        orgId,
        policies: { requireSecondFactor: false, recoveryMinThreshold: 2, client: { minPasswordScore: 0 } },
        at: at(),
      });
    });

    test("session scope: a login decides it under the policy, a refresh keeps it, a factor change ends the others (saying why) and widens its own, a policy narrows", async () => {
      const lead = await ownOrg();
      const member = async () => {
        const p = await newPerson();
        const inv = pendingInvite(lead.orgId, lead.userId, p.user.email);
        await store.invites.createInvite({ invite: inv, tokenHash: newId() });
        const rec = await store.accounts.registerWithInvite({ user: p.user, inviteId: inv.inviteId, now: at() });
        return { ...p, userId: rec.userId, orgId: rec.orgId };
      };
      const [ada, bob] = [await member(), await member()];
      const signIn = async (userId: UserId, tokenHash = newId(), fullAccess = false) => {
        const sessionId = newId();
        const { enrolOnly } = await store.sessions.startSession({
          session: {
            sessionId,
            userId,
            deviceName: "laptop",
            createdAt: at(),
            lastUsedAt: at(),
            address: "192.0.2.1",
            expiresAt: at(60_000),
          },
          token: { tokenHash, userId, createdAt: at(), expiresAt: at(60_000) },
          accountVersion: 1,
          maxLive: 100,
          fullAccess,
        });
        return { sessionId, tokenHash, enrolOnly };
      };
      const key = (userId: UserId) => ({
        factorId: newId(),
        userId,
        kind: "webauthn" as const,
        name: "Key",
        createdAt: at(),
        credentialId: newId(),
        publicKey: "pk",
        counter: 0,
      });
      // Before the policy: whole. Bob has a factor.
      const before = await signIn(ada.userId);
      expect(before.enrolOnly).toBe(false);
      await store.security.addFactor({ factor: key(bob.userId), sessions: planFactorChangeSessions("enrol", undefined) });
      const bobs = await signIn(bob.userId);
      const recovering = await signIn(ada.userId, newId(), true);
      const policies = { requireSecondFactor: true, recoveryMinThreshold: 2, client: { minPasswordScore: 0 } };
      const { narrowedSessions } = await store.security.setPolicies({ orgId: lead.orgId, policies, at: at() });
      // Ada's whole sessions narrow (the one a recovery opened is whole too here: no recovery request names it); Bob's stays.
      expect(narrowedSessions.sort()).toEqual([before.sessionId, recovering.sessionId].sort());
      expect(await store.sessions.findSession(before.sessionId)).toMatchObject({ enrolOnly: true });
      expect(await store.sessions.findSession(bobs.sessionId)).not.toHaveProperty("enrolOnly");
      // A login now may only enrol, and a refresh keeps it so.
      const limited = await signIn(ada.userId);
      expect(limited.enrolOnly).toBe(true);
      expect(await rotate(limited.tokenHash, newId())).toMatchObject({ ok: true, enrolOnly: true });
      expect((await signIn(ada.userId, newId(), true)).enrolOnly).toBe(false);
      // Ada enrols from the limited session: it becomes whole, every other one ends, saying why.
      const { endedSessions } = await store.security.addFactor({
        factor: key(ada.userId),
        sessions: planFactorChangeSessions("enrol", limited.sessionId),
      });
      expect(endedSessions).toEqual(expect.arrayContaining([before.sessionId, recovering.sessionId]));
      expect(endedSessions).not.toContain(limited.sessionId);
      expect(await store.sessions.findSession(before.sessionId)).toMatchObject({
        endedAt: expect.any(String),
        endedWhy: "factors-changed",
      });
      const kept = await store.sessions.findSession(limited.sessionId);
      expect(kept).not.toHaveProperty("enrolOnly");
      expect(kept).not.toHaveProperty("endedAt");
      // An ended session's refresh token is refused.
      expect(await rotate(before.tokenHash, newId())).toMatchObject({ ok: false });
      await store.security.setPolicies({ orgId: lead.orgId, policies: { ...policies, requireSecondFactor: false }, at: at() });
    });

    test("recovery: an enrolment and its requests (a decoy's stored alike, none displacing another device's), approvals once, opened then completed (the enrolment spent)", async () => {
      const user = await join();
      const [t1, t2] = [await join("admin"), await join("admin")];
      const enrolment = (enrolmentId: string) => ({
        enrolmentId,
        userId: user.userId,
        orgId: user.orgId,
        threshold: 2,
        copy: "Y29weQ==",
        signature: "c2ln",
        kdfSalt: "salt",
        createdAt: at(),
      });
      const shares = (enrolmentId: string) =>
        [t1, t2].map((t) => ({ enrolmentId, trusteeId: t.userId, encryptedShare: "c2hhcmU=", trusteeKeys: "ab".repeat(32) }));
      const first = newId();
      const unversioned = enrolment(first);
      await store.security.putRecoveryEnrolment({ enrolment: unversioned, shares: shares(first) });
      // Unversioned (as a client before versions enrolled): read back without a version.
      expect((await store.security.getRecoveryEnrolment(user.userId))!.enrolment).toEqual(unversioned);
      expect((await store.security.getRecoveryEnrolment(user.userId))!.shares.map((s) => s.trusteeId).sort()).toEqual(
        [t1.userId, t2.userId].sort(),
      );
      // The account of an address and its enrolment; an address with no account.
      expect(await store.security.findRecoveryTarget(user.user.email)).toEqual({
        userId: user.userId,
        orgId: user.orgId,
        removed: false,
        kdfSalt: user.user.kdf.salt,
        enrolment: { enrolmentId: first, kdfSalt: "salt" },
      });
      expect(await store.security.findRecoveryTarget(`nobody-${newId()}@example.test`)).toBeNull();
      const addressKey = `address-${newId()}`;
      const request = (requestId: string, enrolmentId: string | null, offset = 0, more: Partial<NewRecoveryRequest> = {}) => ({
        requestId,
        addressKey,
        clientKey: `client-${requestId}`,
        bindingHash: null,
        account: enrolmentId === null ? null : { userId: user.userId, orgId: user.orgId, enrolmentId },
        publicKey: "cGs=",
        tokenHash: "th",
        createdAt: at(offset),
        expiresAt: at(7 * 86_400_000),
        ...more,
      });
      // A decoy: stored as a request is, read by its id, and no account's.
      const decoy = newId();
      await store.security.startRecoveryRequest({ request: request(decoy, null) });
      expect(await store.security.findRecoveryAsk(decoy)).toMatchObject({
        requestId: decoy,
        tokenHash: "th",
        status: "pending",
        request: null,
      });
      expect(await store.security.findRecoveryRequest(decoy)).toBeNull();
      const ids = Array.from({ length: 9 }, () => newId());
      await store.security.startRecoveryRequest({ request: request(ids[0]!, first, 0) });
      expect((await store.security.findRecoveryAsk(ids[0]!))?.request).toMatchObject({ requestId: ids[0], userId: user.userId });
      const statuses = async () =>
        Object.fromEntries(
          (await store.security.listRecoveryRequests({ userId: user.userId, now: at(), pendingOnly: false })).map((r) => [
            r.requestId,
            r.status,
          ]),
        );
      const approval = (trusteeId: UserId) => ({
        requestId: ids[0]!,
        trusteeId,
        encryptedShare: "cw==",
        signature: "c2ln",
        approvedAt: at(),
      });
      const twice = await Promise.allSettled([
        store.security.addRecoveryApproval({ approval: approval(t1.userId), now: at() }),
        store.security.addRecoveryApproval({ approval: approval(t1.userId), now: at() }),
      ]);
      expect(twice.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      // Two more from one client address; a third from it is held (stored ended), displacing none.
      for (const [i, id] of ids.slice(1, 4).entries())
        await store.security.startRecoveryRequest({ request: request(id, first, i + 1, { clientKey: "c" }) });
      // A device's request, then the same device's next one (its binding secret): the first gives way to it, and only to it.
      await store.security.startRecoveryRequest({ request: request(ids[4]!, first, 4, { bindingHash: "b" }) });
      await store.security.startRecoveryRequest({ request: request(ids[5]!, first, 5, { bindingHash: "b" }) });
      // Open and not approved: the decoy (counted as any request of the address), 1, 2, 5; one more makes the address's five, and the next are held.
      for (const [i, id] of ids.slice(6).entries()) await store.security.startRecoveryRequest({ request: request(id, first, i + 6) });
      const afterCap = await statuses();
      expect(ids.map((id) => afterCap[id])).toEqual([
        "pending",
        "pending",
        "pending",
        "cancelled",
        "cancelled",
        "pending",
        "pending",
        "cancelled",
        "cancelled",
      ]);
      expect((await store.security.listRequestsForTrustee({ trusteeId: t1.userId, now: at() })).map((r) => r.requestId).sort()).toEqual(
        [0, 1, 2, 5, 6].map((i) => ids[i]!).sort(),
      );
      await store.security.addRecoveryApproval({ approval: approval(t2.userId), now: at() });
      expect((await store.security.listApprovals(ids[0]!)).map((a) => a.trusteeId).sort()).toEqual([t1.userId, t2.userId].sort());
      // A completion before the request opened: nothing.
      expect(await store.security.endRecoveryRequest({ requestId: ids[0]!, status: "completed", at: at() })).toBe(false);
      expect(await store.security.openRecoveryRequest({ requestId: ids[0]!, sessionId: "s-1", at: at() })).toBe(true);
      expect((await store.security.findOpenedRecovery({ userId: user.userId, sessionId: "s-1", since: at(-60_000) }))?.requestId).toBe(
        ids[0],
      );
      expect(await store.security.findOpenedRecovery({ userId: user.userId, sessionId: "s-2", since: at(-60_000) })).toBeNull();
      await expect(
        store.security.addRecoveryApproval({ approval: { ...approval(t1.userId), requestId: ids[0]! }, now: at() }),
      ).rejects.toMatchObject({ type: "CONFLICT" });
      const ends = await Promise.all(
        [1, 2].map(() => store.security.endRecoveryRequest({ requestId: ids[0]!, status: "completed", at: at() })),
      );
      expect(ends.filter(Boolean)).toHaveLength(1);
      expect(await store.security.getRecoveryEnrolment(user.userId)).toBeNull();
      const after = await statuses();
      expect([after[ids[0]!], after[ids[1]!], after[ids[6]!]]).toEqual(["completed", "cancelled", "cancelled"]);
      // A new enrolment, then removed: its requests end.
      const second = newId();
      // Versioned (its signed version and the account state it was made under), read back as written.
      const versioned = { ...enrolment(second), version: 2, keys: "cd".repeat(32), kdfVersion: 3 };
      await store.security.putRecoveryEnrolment({ enrolment: versioned, shares: shares(second) });
      expect((await store.security.getRecoveryEnrolment(user.userId))!.enrolment).toEqual(versioned);
      const last = newId();
      await store.security.startRecoveryRequest({ request: request(last, second, 9) });
      expect(await store.security.deleteRecoveryEnrolment({ userId: user.userId })).toBe(true);
      expect(await store.security.deleteRecoveryEnrolment({ userId: user.userId })).toBe(false);
      expect((await statuses())[last]).toBe("cancelled");
    });

    test("recovery: requests for one address at once, from as many client addresses, leave at most the address's cap open", async () => {
      const addressKey = `address-${newId()}`;
      const ids = Array.from({ length: 12 }, () => newId());
      await Promise.all(
        ids.map((requestId) =>
          store.security.startRecoveryRequest({
            request: {
              requestId,
              addressKey,
              clientKey: `client-${requestId}`,
              bindingHash: null,
              account: null,
              publicKey: "cGs=",
              tokenHash: "th",
              createdAt: at(),
              expiresAt: at(7 * 86_400_000),
            },
          }),
        ),
      );
      const asks = await Promise.all(ids.map((id) => store.security.findRecoveryAsk(id)));
      expect(asks.filter((a) => a?.status === "pending")).toHaveLength(MAX_OPEN_REQUESTS_PER_ADDRESS);
      expect(asks.filter((a) => a?.status === "cancelled")).toHaveLength(ids.length - MAX_OPEN_REQUESTS_PER_ADDRESS);
    });
  });
}
