/**
 * The remembered devices of the sessions aggregate (lib/store/port/sessions.ts), run inside the
 * store contract against every adapter: found by the token's hash only, listed unexpired and most
 * recently used first, capped per account, forgotten one by one (one's own only), and all at once
 * by a factor removed or a removal from the organization, in the same transaction; remembering and
 * forgetting one write their events with the change; the sweep purges the expired ones.
 */
import { newId, type InviteId, type UserId } from "../../lib/domain/ids";
import type { RememberedDevice } from "../../lib/domain/accounts/remembered-devices";
import type { DomainEvent, DomainEventType } from "../../lib/domain/audit/events";
import { planFactorChangeSessions } from "../../lib/domain/accounts/session-scope";
import type { Store } from "../../lib/store/port";
import { newUserKeys, registrationBundle } from "../helpers/crypto";
import { ownOrg } from "../helpers/store-accounts";

const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const DAY = 24 * 60 * 60 * 1000;

function device(userId: UserId, name: string, createdOffset = 0, ttl = 30 * DAY): RememberedDevice {
  return {
    deviceId: newId(),
    userId,
    deviceName: name,
    createdAt: at(createdOffset),
    lastUsedAt: at(createdOffset),
    expiresAt: at(createdOffset + ttl),
  };
}

export function describeRememberedDevices(getStore: () => Store): void {
  test("remembered devices: found by the token's hash, listed unexpired and the most recently used first, forgotten one's own only", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const bob = await ownOrg(store);
    const laptop = device(ada.userId, "laptop", -2_000);
    const phone = device(ada.userId, "phone", -1_000);
    await store.sessions.rememberDevice({ device: laptop, tokenHash: `h-${laptop.deviceId}`, max: 20 });
    await store.sessions.rememberDevice({ device: phone, tokenHash: `h-${phone.deviceId}`, max: 20 });
    expect(await store.sessions.findRememberedDevice(`h-${laptop.deviceId}`)).toEqual(laptop);
    expect(await store.sessions.findRememberedDevice("no such hash")).toBeNull();
    expect(await store.sessions.getRememberedDevice(phone.deviceId)).toEqual(phone);
    expect((await store.sessions.listRememberedDevices({ userId: ada.userId, now: at() })).map((d) => d.deviceName)).toEqual([
      "phone",
      "laptop",
    ]);
    await store.sessions.useRememberedDevice({ deviceId: laptop.deviceId, at: at(1_000) });
    expect((await store.sessions.listRememberedDevices({ userId: ada.userId, now: at() })).map((d) => d.deviceName)).toEqual([
      "laptop",
      "phone",
    ]);
    // Past its expiry: not listed (still found, for the login to decide, and refuse).
    expect(await store.sessions.listRememberedDevices({ userId: ada.userId, now: at(31 * DAY) })).toEqual([]);
    expect(await store.sessions.findRememberedDevice(`h-${laptop.deviceId}`)).toMatchObject({ deviceId: laptop.deviceId });

    expect(await store.sessions.forgetRememberedDevice({ userId: bob.userId, deviceId: laptop.deviceId })).toBe(false);
    expect(await store.sessions.forgetRememberedDevice({ userId: ada.userId, deviceId: laptop.deviceId })).toBe(true);
    expect(await store.sessions.forgetRememberedDevice({ userId: ada.userId, deviceId: laptop.deviceId })).toBe(false);
    expect(await store.sessions.findRememberedDevice(`h-${laptop.deviceId}`)).toBeNull();
    expect((await store.sessions.listRememberedDevices({ userId: ada.userId, now: at() })).map((d) => d.deviceId)).toEqual([
      phone.deviceId,
    ]);
  });

  test("remembered devices: one more past the cap forgets the least recently used; an expired one goes when another is remembered", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const old = device(ada.userId, "expired", -40 * DAY);
    await store.sessions.rememberDevice({ device: old, tokenHash: `h-${old.deviceId}`, max: 3 });
    const kept = [1, 2, 3, 4].map((n) => device(ada.userId, `d${n}`, n * 1_000));
    for (const d of kept) await store.sessions.rememberDevice({ device: d, tokenHash: `h-${d.deviceId}`, max: 3 });
    expect(await store.sessions.findRememberedDevice(`h-${old.deviceId}`)).toBeNull();
    expect((await store.sessions.listRememberedDevices({ userId: ada.userId, now: at() })).map((d) => d.deviceName)).toEqual([
      "d4",
      "d3",
      "d2",
    ]);
  });

  test("remembered devices: a factor removed, or a removal from the organization, forgets all of the account's", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const factor = { factorId: newId(), userId: ada.userId, kind: "totp" as const, name: "App", createdAt: at(), sealedSecret: "s1.x.y" };
    await store.security.addFactor({ factor, sessions: planFactorChangeSessions("enrol", undefined) });
    for (const d of [device(ada.userId, "a"), device(ada.userId, "b")])
      await store.sessions.rememberDevice({ device: d, tokenHash: `h-${d.deviceId}`, max: 20 });
    await store.security.removeFactor({
      userId: ada.userId,
      factorId: factor.factorId,
      sessions: planFactorChangeSessions("remove", undefined),
      at: at(),
    });
    expect(await store.sessions.listRememberedDevices({ userId: ada.userId, now: at() })).toEqual([]);

    const email = `${newId()}@example.test`;
    const invite = {
      inviteId: newId<InviteId>(),
      orgId: ada.orgId,
      email,
      role: "member" as const,
      inviterId: ada.userId,
      status: "pending" as const,
      expiresAt: at(3600_000),
      createdAt: at(),
    };
    await store.invites.createInvite({ invite, tokenHash: newId() });
    const user = { ...registrationBundle(await newUserKeys()), userId: newId<UserId>(), email, authHash: "scrypt$stored", createdAt: at() };
    const member = await store.accounts.registerWithInvite({ user, inviteId: invite.inviteId, now: at() });
    const d = device(member.userId, "c");
    await store.sessions.rememberDevice({ device: d, tokenHash: `h-${d.deviceId}`, max: 20 });
    await store.accounts.removeFromOrg({
      caller: { userId: ada.userId, orgId: ada.orgId, role: "owner" },
      targetId: member.userId,
      now: at(),
    });
    expect(await store.sessions.findRememberedDevice(`h-${d.deviceId}`)).toBeNull();
  });

  test("remembered devices: remembering and forgetting one write their events with the change; a forget that forgets nothing writes none", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const event = (type: DomainEventType): DomainEvent => ({
      eventId: newId(),
      type,
      at: at(),
      actorId: ada.userId,
      orgId: ada.orgId,
      targetUserId: ada.userId,
    });
    const laptop = device(ada.userId, "laptop");
    const remembered = event("user.device_remembered");
    await store.sessions.rememberDevice({ device: laptop, tokenHash: `h-${laptop.deviceId}`, max: 20, events: [remembered] });
    const forgotten = event("user.device_forgotten");
    const refused = event("user.device_forgotten");
    const stranger = await ownOrg(store);
    expect(await store.sessions.forgetRememberedDevice({ userId: stranger.userId, deviceId: laptop.deviceId, events: [refused] })).toBe(
      false,
    );
    expect(await store.sessions.forgetRememberedDevice({ userId: ada.userId, deviceId: laptop.deviceId, events: [forgotten] })).toBe(true);
    const waiting = new Map((await store.outbox.pending(100_000)).map((e) => [e.eventId, e]));
    expect([remembered, refused, forgotten].map((e) => waiting.get(e.eventId) ?? null)).toEqual([remembered, null, forgotten]);
    await store.outbox.markSent([remembered.eventId, forgotten.eventId]);
  });

  test("remembered devices: the sweep purges every account's expired devices and keeps the others", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const bob = await ownOrg(store);
    // Live first: remembering one forgets the account's expired ones, and these are for the sweep to find.
    const live = device(ada.userId, "live");
    const expired = [device(ada.userId, "ada's old", -40 * DAY), device(bob.userId, "bob's old", -31 * DAY)];
    for (const d of [live, ...expired]) await store.sessions.rememberDevice({ device: d, tokenHash: `h-${d.deviceId}`, max: 20 });
    const purged = await store.housekeeping.purgeExpired({ now: at(), invitesExpiredBefore: at(-365 * DAY) });
    expect(purged.rememberedDevices).toBeGreaterThanOrEqual(2);
    for (const d of expired) expect(await store.sessions.getRememberedDevice(d.deviceId)).toBeNull();
    expect(await store.sessions.getRememberedDevice(live.deviceId)).toEqual(live);
    expect((await store.housekeeping.purgeExpired({ now: at(), invitesExpiredBefore: at(-365 * DAY) })).rememberedDevices).toBe(0);
  });
}
