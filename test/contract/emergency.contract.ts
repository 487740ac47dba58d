/**
 * Emergency access grants (lib/store/port/emergency.ts), run inside the store contract against
 * every adapter, with grants made as a grantor's device makes them (the stretched key wrapped to
 * the grantee's public key, the statement signed with the grantor's key): a grant's round trip and
 * lists, one per grantee, made again under its id (its request carried on, its level and wait fixed
 * while one stands), a request, a refusal and a delete each by its party only, the session a
 * released grant opens recorded and ended (checked in the sessions store), a takeover found by its
 * session and spent by the password change, a removed member's grants, and the events each change
 * writes with it.
 */
import { sign } from "node:crypto";
import { newId, type InviteId, type OrgId, type UserId } from "../../lib/domain/ids";
import type { AppError } from "../../lib/errors";
import type { DomainEvent } from "../../lib/domain/audit/events";
import type { GrantRecord } from "../../lib/domain/emergency/decisions";
import * as refusals from "../../lib/domain/emergency/refusals";
import { planFactorChangeSessions } from "../../lib/domain/accounts/session-scope";
import type { Store } from "../../lib/store/port";
import { keyFingerprint } from "../../protocol/crypto/keys";
import { grantBytes, grantStatementOf, type EmergencyLevel } from "../../protocol/formats/emergency";
import { b64, newUserKeys, registrationBundle, wrapShared, type RegistrationBundle, type UserKeys } from "../helpers/crypto";

const MIN = 60_000;
const HOUR = 60 * MIN;
const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

interface Person {
  userId: UserId;
  orgId: OrgId;
  keys: UserKeys;
  bundle: RegistrationBundle;
}

type GrantWrite = Parameters<Store["emergency"]["writeGrant"]>[0]["grant"];

/** The refusal `p` must end in: the named constructor's code, message and field. */
async function refused(p: Promise<unknown>, refusal: AppError): Promise<void> {
  await expect(p).rejects.toMatchObject({ type: refusal.type, message: refusal.message, data: refusal.data });
}

export function describeEmergency(getStore: () => Store): void {
  let store: Store;
  beforeAll(() => {
    store = getStore();
  });

  async function register(inviter?: Person): Promise<Person> {
    const keys = await newUserKeys();
    const bundle = registrationBundle(keys);
    const user = { ...bundle, userId: newId<UserId>(), email: `${newId()}@example.test`, authHash: "scrypt$stored", createdAt: at() };
    if (!inviter) {
      const org = { orgId: newId<OrgId>(), name: "Emergency", createdAt: at() };
      const rec = await store.accounts.registerOwnerOfNewOrg({ user, org, onlyIfFirstUser: false });
      return { userId: rec.userId, orgId: rec.orgId, keys, bundle };
    }
    const inviteId = newId<InviteId>();
    const invite = { inviteId, orgId: inviter.orgId, email: user.email, role: "member" as const, inviterId: inviter.userId };
    await store.invites.createInvite({
      invite: { ...invite, status: "pending", expiresAt: at(HOUR), createdAt: at() },
      tokenHash: newId(),
    });
    const rec = await store.accounts.registerWithInvite({ user, inviteId, now: at() });
    return { userId: rec.userId, orgId: rec.orgId, keys, bundle };
  }

  /** The owner of a new organization, and `members` more people in it. */
  async function org(members: number): Promise<Person[]> {
    const owner = await register();
    const people = [owner];
    for (let i = 0; i < members; i++) people.push(await register(owner));
    return people;
  }

  /**
   * A grant as the grantor's device makes it: the stretched key wrapped to the grantee's public key,
   * the statement signed with the grantor's signing key (`signer`: another key, as after a rotation).
   */
  async function made(
    grantor: Person,
    grantee: Person,
    o: Partial<{ grantId: string; level: EmergencyLevel; waitHours: number; kdfVersion: number; signer: UserKeys }> = {},
  ): Promise<GrantWrite> {
    const signer = o.signer ?? grantor.keys;
    const signerBundle = o.signer ? registrationBundle(o.signer) : grantor.bundle;
    const form = {
      grantId: o.grantId ?? newId(),
      grantorId: grantor.userId,
      granteeId: grantee.userId,
      granteeKeys: await keyFingerprint(grantee.bundle),
      level: o.level ?? "read",
      waitHours: o.waitHours ?? 24,
      keys: await keyFingerprint(signerBundle),
      kdfVersion: o.kdfVersion ?? 1,
      wrappedKey: b64(wrapShared(grantor.keys.stretchedKey, grantee.bundle.publicKey)),
    };
    const signature = b64(sign(null, grantBytes(await grantStatementOf(form)), signer.edPrivate));
    return { ...form, orgId: grantor.orgId, signature };
  }

  const write = (grant: GrantWrite, expect: string | null = null, now = at(), events: DomainEvent[] = []) =>
    store.emergency.writeGrant({ grant, expect, now, events });
  const get = (g: { grantId: string }) => store.emergency.getGrant({ grantId: g.grantId });
  const request = (g: { grantId: string }, p: Person, now = at(), events: DomainEvent[] = []) =>
    store.emergency.requestGrant({ grantId: g.grantId, granteeId: p.userId, now, events });
  const refuse = (g: { grantId: string }, p: Person, now = at(), events: DomainEvent[] = []) =>
    store.emergency.refuseGrant({ grantId: g.grantId, grantorId: p.userId, now, events });
  const del = (g: { grantId: string }, p: Person, events: DomainEvent[] = []) =>
    store.emergency.deleteGrant({ grantId: g.grantId, actorId: p.userId, now: at(), events });
  const opened = (g: { grantId: string }, requestedAt: string, sessionId: string, now = at(), events: DomainEvent[] = []) =>
    store.emergency.openedGrantSession({ grantId: g.grantId, requestedAt, sessionId, now, events });

  /** A login of the person: a live session, as the sessions store starts one. */
  async function login(p: Person, accountVersion = 1): Promise<string> {
    const sessionId = newId();
    const expiresAt = at(HOUR);
    await store.sessions.startSession({
      session: { sessionId, userId: p.userId, deviceName: "laptop", createdAt: at(), lastUsedAt: at(), address: "192.0.2.1", expiresAt },
      token: { tokenHash: `h-${newId()}`, userId: p.userId, createdAt: at(), expiresAt },
      accountVersion,
      maxLive: 100,
    });
    return sessionId;
  }
  const ended = async (sessionId: string) => (await store.sessions.findSession(sessionId))?.endedAt !== undefined;

  /** A grant of `level` to the grantee, asked for, and a session of the grantor's it opened: answers the session and the request's time. */
  async function released(grantor: Person, grantee: Person, level: EmergencyLevel = "read") {
    const g = await made(grantor, grantee, { level });
    await write(g);
    const requestedAt = at(-HOUR);
    expect(await request(g, grantee, requestedAt)).toBe(true);
    const sessionId = await login(grantor);
    const openedAt = at();
    expect(await opened(g, requestedAt, sessionId, openedAt)).toEqual({ recorded: true, endedSessions: [] });
    return { g, requestedAt, sessionId, openedAt };
  }

  test("emergency: a grant written and read back, by id and by its pair; listed as granted and received, oldest first; one per grantee and id (409)", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    const [toBob, toCy, fromCy] = [await made(ada, bob), await made(ada, cy, { level: "takeover", waitHours: 72 }), await made(cy, ada)];
    // Written out of their age order: the lists follow `createdAt`, not the order of the writes.
    const times = [at(-3_000), at(-1_000), at(-2_000)] as const;
    await write(toCy, null, times[1]);
    await write(toBob, null, times[0]);
    await write(fromCy, null, times[2]);
    const record = (g: GrantWrite, t: string): GrantRecord => ({ ...g, createdAt: t, updatedAt: t });
    expect(await get(toBob)).toStrictEqual(record(toBob, times[0]));
    expect(await get(toCy)).toStrictEqual(record(toCy, times[1]));
    expect(await store.emergency.grantBetween({ grantorId: ada.userId, granteeId: bob.userId })).toStrictEqual(record(toBob, times[0]));
    expect(await store.emergency.grantBetween({ grantorId: bob.userId, granteeId: ada.userId })).toBeNull();
    expect(await get({ grantId: newId() })).toBeNull();

    const ids = async (p: Person) => {
      const { granted, received } = await store.emergency.listGrants({ userId: p.userId });
      return { granted: granted.map((g) => g.grantId), received: received.map((g) => g.grantId) };
    };
    expect(await ids(ada)).toEqual({ granted: [toBob.grantId, toCy.grantId], received: [fromCy.grantId] });
    expect(await ids(cy)).toEqual({ granted: [fromCy.grantId], received: [toCy.grantId] });
    expect(await ids(bob)).toEqual({ granted: [], received: [toBob.grantId] });
    expect((await store.emergency.listGrants({ userId: cy.userId })).received).toStrictEqual([record(toCy, times[1])]);

    // A second grant to the same grantee, or another pair under a taken id: 409, and nothing written.
    await expect(write(await made(ada, bob))).rejects.toMatchObject({ type: "CONFLICT" });
    await expect(write(await made(bob, cy, { grantId: toBob.grantId }))).rejects.toMatchObject({ type: "CONFLICT" });
    expect(await ids(ada)).toEqual({ granted: [toBob.grantId, toCy.grantId], received: [fromCy.grantId] });
    expect(await ids(bob)).toEqual({ granted: [], received: [toBob.grantId] });
    expect(await get(toBob)).toStrictEqual(record(toBob, times[0]));
  });

  test("emergency: made again under its id, its key, signature and account state replaced and its request kept; level and wait fixed while asked for; gone: 404", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    const g = await made(ada, bob, { level: "read", waitHours: 24 });
    const createdAt = at(-10_000);
    await write(g, null, createdAt);
    const requestedAt = at(-5_000);
    expect(await request(g, bob, requestedAt)).toBe(true);

    // After a key rotation and a password change: new keys, a new KDF version, a new wrap and signature.
    const rotated = await newUserKeys();
    const again = await made(ada, bob, { grantId: g.grantId, level: "read", waitHours: 24, kdfVersion: 2, signer: rotated });
    expect([again.keys, again.wrappedKey, again.signature]).not.toEqual([g.keys, g.wrappedKey, g.signature]);
    const rewrapped = at(-1_000);
    await write(again, g.grantId, rewrapped);
    expect(await get(g)).toStrictEqual({ ...again, createdAt, updatedAt: rewrapped, requestedAt });

    // While the request stands, another level or wait is refused, and nothing changes.
    await refused(write({ ...again, level: "takeover" }, g.grantId), refusals.grantFrozen());
    await refused(write({ ...again, waitHours: 48 }, g.grantId), refusals.grantFrozen());
    expect(await get(g)).toStrictEqual({ ...again, createdAt, updatedAt: rewrapped, requestedAt });

    // Refused, nobody asks: the level and wait may change.
    const refusedAt = at();
    expect(await refuse(g, ada, refusedAt)).toEqual({ refused: true, endedSessions: [] });
    const changed = at(1_000);
    await write({ ...again, level: "takeover", waitHours: 48 }, g.grantId, changed);
    expect(await get(g)).toStrictEqual({ ...again, level: "takeover", waitHours: 48, createdAt, updatedAt: changed, refusedAt });

    expect(await del(g, ada)).toEqual({ deleted: true, endedSessions: [] });
    await refused(write(again, g.grantId), refusals.grantNotFound());
    expect(await get(g)).toBeNull();
  });

  test("emergency: asked for once, by its grantee only; refused by its grantor only, once per request, ending the session it opened", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    const g = await made(ada, bob);
    await write(g);
    expect(await request(g, cy)).toBe(false);
    expect(await request(g, ada)).toBe(false);
    expect(await request({ grantId: newId() }, bob)).toBe(false);
    expect(await get(g)).not.toHaveProperty("requestedAt");
    expect(await refuse(g, ada)).toEqual({ refused: false, endedSessions: [] });

    const requestedAt = at(-HOUR);
    expect(await request(g, bob, requestedAt)).toBe(true);
    expect(await request(g, bob)).toBe(false);
    expect(await get(g)).toMatchObject({ requestedAt, updatedAt: requestedAt });

    const sessionId = await login(ada);
    expect(await opened(g, requestedAt, sessionId)).toEqual({ recorded: true, endedSessions: [] });
    // Neither the grantee nor a stranger refuses it.
    expect(await refuse(g, bob)).toEqual({ refused: false, endedSessions: [] });
    expect(await refuse(g, cy)).toEqual({ refused: false, endedSessions: [] });
    expect(await ended(sessionId)).toBe(false);

    const refusedAt = at();
    expect(await refuse(g, ada, refusedAt)).toEqual({ refused: true, endedSessions: [sessionId] });
    expect(await ended(sessionId)).toBe(true);
    const after = (await get(g))!;
    expect(after.refusedAt).toBe(refusedAt);
    for (const cleared of ["requestedAt", "sessionId", "openedAt"]) expect(after).not.toHaveProperty(cleared);
    expect(await refuse(g, ada)).toEqual({ refused: false, endedSessions: [] });
    // Idle again: the grantee may ask again.
    expect(await request(g, bob)).toBe(true);
  });

  test("emergency: the session a released grant opens is recorded and ends the one before; under a request no longer standing, the new one ends instead", async () => {
    const [ada, bob] = (await org(1)) as [Person, Person];
    const { g, requestedAt, sessionId: first, openedAt } = await released(ada, bob);
    expect(await get(g)).toMatchObject({ sessionId: first, openedAt });

    const second = await login(ada);
    const reopened = at(1_000);
    expect(await opened(g, requestedAt, second, reopened)).toEqual({ recorded: true, endedSessions: [first] });
    expect([await ended(first), await ended(second)]).toEqual([true, false]);
    expect(await get(g)).toMatchObject({ sessionId: second, openedAt: reopened });

    // Released under a request that was refused meanwhile, and asked for again.
    const stale = await login(ada);
    expect(await opened(g, at(-2 * HOUR), stale)).toEqual({ recorded: false, endedSessions: [stale] });
    expect([await ended(stale), await ended(second)]).toEqual([true, false]);
    expect(await get(g)).toMatchObject({ requestedAt, sessionId: second, openedAt: reopened });

    // Of a grant that is gone: nothing recorded.
    expect(await opened({ grantId: newId() }, requestedAt, await login(ada))).toMatchObject({ recorded: false });
  });

  test("emergency: deleted by its grantee or its grantor, ending the session it opened; by anyone else, or once gone, not", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    const { g, sessionId } = await released(ada, bob);
    expect(await del(g, cy)).toEqual({ deleted: false, endedSessions: [] });
    expect(await get(g)).not.toBeNull();
    expect(await ended(sessionId)).toBe(false);
    expect(await del(g, bob)).toEqual({ deleted: true, endedSessions: [sessionId] });
    expect(await ended(sessionId)).toBe(true);
    expect(await get(g)).toBeNull();
    expect(await del(g, bob)).toEqual({ deleted: false, endedSessions: [] });
    expect(await del(g, ada)).toEqual({ deleted: false, endedSessions: [] });

    const toCy = await made(ada, cy);
    await write(toCy);
    expect(await del(toCy, ada)).toEqual({ deleted: true, endedSessions: [] });
    expect(await store.emergency.listGrants({ userId: ada.userId })).toEqual({ granted: [], received: [] });
  });

  test("emergency: a takeover is found by the session it opened since a time; a read grant's session, an earlier time or another account's, not", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    const takeover = await released(ada, bob, "takeover");
    const read = await released(ada, cy, "read");
    const find = (userId: UserId, sessionId: string, since: string) => store.emergency.findTakeover({ userId, sessionId, since });
    expect(await find(ada.userId, takeover.sessionId, at(-MIN))).toBe(takeover.g.grantId);
    expect(await find(ada.userId, takeover.sessionId, takeover.openedAt)).toBe(takeover.g.grantId);
    expect(await find(ada.userId, takeover.sessionId, at(MIN))).toBeNull();
    expect(await find(ada.userId, read.sessionId, at(-MIN))).toBeNull();
    expect(await find(bob.userId, takeover.sessionId, at(-MIN))).toBeNull();
    expect(await find(ada.userId, newId(), at(-MIN))).toBeNull();
  });

  test("emergency: the password change that completes a takeover spends its grant and removes the second factors, recovery codes and sign-in passkeys; another session's or a read grant's: 404, nothing changed", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    // The factors first: an enrolment ends the account's sessions.
    const factor = { factorId: newId(), userId: ada.userId, kind: "totp" as const, name: "App", createdAt: at(), sealedSecret: "s1.x.y" };
    await store.security.addFactor({ factor, sessions: planFactorChangeSessions("enrol", undefined) });
    await store.security.replaceRecoveryCodes({ userId: ada.userId, codeHashes: ["c1", "c2"], at: at() });
    // A sign-in passkey (without an unlock: a password change need not re-wrap it).
    const passkey = {
      credentialId: newId().replace(/-/g, ""),
      userId: ada.userId,
      name: "Key",
      publicKey: "cHVibGljLWtleQ",
      counter: 0,
      transports: ["usb"],
      createdAt: at(),
    };
    await store.security.addPasskeyLogin({ login: passkey });
    const other = await login(ada);
    const takeover = await released(ada, bob, "takeover");
    const read = await released(ada, cy, "read");
    const change = (keepSession: string, completeTakeover: string) =>
      store.accounts.changePassword({
        userId: ada.userId,
        change: { accountVersion: 1, kdf: ada.bundle.kdf, kdfStatement: { version: 1, signature: "c2ln" }, vaults: [] },
        authHash: "scrypt$new",
        encryptedPrivateKey: ada.bundle.encryptedPrivateKey,
        encryptedSigningPrivateKey: ada.bundle.encryptedSigningPrivateKey,
        provenAuthHash: "scrypt$stored",
        keepSession,
        completeTakeover,
        now: at(),
        events: [],
      });
    await refused(change(other, takeover.g.grantId), refusals.grantNotFound());
    await refused(change(read.sessionId, read.g.grantId), refusals.grantNotFound());
    await refused(change(read.sessionId, takeover.g.grantId), refusals.grantNotFound());
    expect(await get(takeover.g)).not.toBeNull();
    expect((await store.security.listFactors(ada.userId)).map((f) => f.factorId)).toEqual([factor.factorId]);
    expect(await store.security.recoveryCodesLeft(ada.userId)).toBe(2);
    expect(await store.security.listPasskeyLogins(ada.userId)).toHaveLength(1);
    expect(await store.accounts.findUserById(ada.userId)).toMatchObject({ authHash: "scrypt$stored" });

    const { endedSessions } = await change(takeover.sessionId, takeover.g.grantId);
    expect(await get(takeover.g)).toBeNull();
    expect(await store.security.listFactors(ada.userId)).toEqual([]);
    expect(await store.security.recoveryCodesLeft(ada.userId)).toBe(0);
    expect(await store.security.listPasskeyLogins(ada.userId)).toEqual([]);
    expect(endedSessions).toEqual(expect.arrayContaining([other, read.sessionId]));
    expect([await ended(takeover.sessionId), await ended(other)]).toEqual([false, true]);
    // The read grant stays (stale, for the grantor's device to make again).
    expect(await get(read.g)).not.toBeNull();
  });

  test("emergency: a member taken out of the organization loses every grant, made and received, and the sessions they opened end", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    const toBob = await released(ada, bob);
    const [fromCy, fromBob, toCy] = [await made(cy, bob), await made(bob, cy), await made(ada, cy)];
    for (const g of [fromCy, fromBob, toCy]) await write(g);
    const { endedSessions } = await store.accounts.removeFromOrg({
      caller: { userId: ada.userId, orgId: ada.orgId, role: "owner" },
      targetId: bob.userId,
      now: at(),
    });
    expect(endedSessions).toContain(toBob.sessionId);
    expect(await ended(toBob.sessionId)).toBe(true);
    for (const g of [toBob.g, fromCy, fromBob]) expect(await get(g)).toBeNull();
    expect(await store.emergency.listGrants({ userId: bob.userId })).toEqual({ granted: [], received: [] });
    expect((await store.emergency.listGrants({ userId: ada.userId })).granted.map((g) => g.grantId)).toEqual([toCy.grantId]);
  });

  test("emergency: each change writes its events with it; a change refused, or one that changes nothing, writes none", async () => {
    const [ada, bob, cy] = (await org(2)) as [Person, Person, Person];
    const event = (type: DomainEvent["type"], p: Person): DomainEvent => ({
      eventId: newId(),
      type,
      at: at(),
      actorId: p.userId,
      orgId: p.orgId,
    });
    const g = await made(ada, bob);
    const written = [event("emergency.granted", ada), event("emergency.granted", ada)];
    const kept = [written[0]!];
    const lost: DomainEvent[] = [written[1]!];
    await write(g, null, at(), [written[0]!]);
    await expect(write(await made(ada, bob), null, at(), [written[1]!])).rejects.toMatchObject({ type: "CONFLICT" });

    const asked = event("emergency.requested", bob);
    const strangerAsks = event("emergency.requested", cy);
    expect(await request(g, cy, at(), [strangerAsks])).toBe(false);
    const requestedAt = at(-HOUR);
    expect(await request(g, bob, requestedAt, [asked])).toBe(true);
    kept.push(asked);
    lost.push(strangerAsks);

    const open = event("emergency.opened", bob);
    const staleOpen = event("emergency.opened", bob);
    expect((await opened(g, at(-2 * HOUR), await login(ada), at(), [staleOpen])).recorded).toBe(false);
    expect((await opened(g, requestedAt, await login(ada), at(), [open])).recorded).toBe(true);
    kept.push(open);
    lost.push(staleOpen);

    const refusal = event("emergency.refused", ada);
    const wrongRefusal = event("emergency.refused", bob);
    expect((await refuse(g, bob, at(), [wrongRefusal])).refused).toBe(false);
    expect((await refuse(g, ada, at(), [refusal])).refused).toBe(true);
    kept.push(refusal);
    lost.push(wrongRefusal);

    const strangerDeletes = event("emergency.revoked", cy);
    const declined = event("emergency.declined", bob);
    expect((await del(g, cy, [strangerDeletes])).deleted).toBe(false);
    expect((await del(g, bob, [declined])).deleted).toBe(true);
    kept.push(declined);
    lost.push(strangerDeletes);

    const out = new Set((await store.outbox.pending(100_000)).map((e) => e.eventId));
    expect(kept.map((e) => out.has(e.eventId))).toEqual(kept.map(() => true));
    expect(lost.map((e) => out.has(e.eventId))).toEqual(lost.map(() => false));
  });
}
