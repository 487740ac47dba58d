/**
 * Sign-in passkeys of the security aggregate (lib/store/port/security.ts), run inside the store
 * contract against every adapter: kept with their unlock wraps or without, found by credential id,
 * one credential once across accounts, the cap held when registrations race, an unlock wrapped
 * under an account version that moved refused, the counter moved once by two sign-ins at once, and
 * removed one's own only with its events. The re-wraps of a password change and key rotation go
 * through those transactions (test/api/passkey-logins.test.ts, on SQLite and PostgreSQL).
 */
import { newId, type OrgId, type UserId } from "../../lib/domain/ids";
import { MAX_PASSKEY_LOGINS, type PasskeyLogin } from "../../lib/domain/accounts/passkey-logins";
import type { DomainEvent } from "../../lib/domain/audit/events";
import type { Store } from "../../lib/store/port";
import { ownOrg } from "../helpers/store-accounts";

const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

const unlock = { prfWrappedKey: "cHJm", wrappedStretchedKey: "c3RyZXRjaGVk", keptWrappedKey: "a2VwdA==" };

function passkey(userId: UserId, name: string, opts: { unlock?: boolean; offset?: number } = {}): PasskeyLogin {
  return {
    credentialId: newId().replace(/-/g, ""),
    userId,
    name,
    publicKey: "cHVibGljLWtleQ",
    counter: 0,
    transports: ["internal", "hybrid"],
    createdAt: at(opts.offset ?? 0),
    ...(opts.unlock !== false && { unlock }),
  };
}

const event = (type: DomainEvent["type"], who: { userId: UserId; orgId: OrgId }): DomainEvent => ({
  eventId: newId(),
  type,
  at: at(),
  actorId: who.userId,
  orgId: who.orgId,
  targetUserId: who.userId,
});

export function describePasskeyLogins(getStore: () => Store): void {
  test("sign-in passkeys: kept with their unlock or without, listed oldest first, found by credential id, one credential once", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const bob = await ownOrg(store);
    const laptop = passkey(ada.userId, "Laptop", { offset: -2_000 });
    const key = passkey(ada.userId, "Key", { unlock: false, offset: -1_000 });
    await store.security.addPasskeyLogin({ login: laptop, unlockVersion: 1 });
    await store.security.addPasskeyLogin({ login: key });
    expect(await store.security.listPasskeyLogins(ada.userId)).toEqual([laptop, key]);
    expect(await store.security.findPasskeyLogin(key.credentialId)).toEqual(key);
    expect(await store.security.findPasskeyLogin("nope")).toBeNull();
    expect(await store.security.listPasskeyLogins(bob.userId)).toEqual([]);
    // The same credential again, for the account or another one: refused (409).
    await expect(store.security.addPasskeyLogin({ login: { ...laptop, name: "Again" } })).rejects.toMatchObject({ type: "CONFLICT" });
    await expect(store.security.addPasskeyLogin({ login: { ...laptop, userId: bob.userId } })).rejects.toMatchObject({ type: "CONFLICT" });
    expect(await store.security.listPasskeyLogins(bob.userId)).toEqual([]);
  });

  test("sign-in passkeys: an unlock wrapped under another account version is refused", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    await expect(store.security.addPasskeyLogin({ login: passkey(ada.userId, "Late"), unlockVersion: 2 })).rejects.toMatchObject({
      type: "CONFLICT",
    });
    expect(await store.security.listPasskeyLogins(ada.userId)).toEqual([]);
  });

  test("sign-in passkeys: registrations racing past the cap, exactly the cap lands", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const tries = Array.from({ length: MAX_PASSKEY_LOGINS + 4 }, (_, i) => passkey(ada.userId, `P${i}`));
    const outcomes = await Promise.allSettled(tries.map((login) => store.security.addPasskeyLogin({ login, unlockVersion: 1 })));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(MAX_PASSKEY_LOGINS);
    expect(await store.security.listPasskeyLogins(ada.userId)).toHaveLength(MAX_PASSKEY_LOGINS);
  });

  test("sign-in passkeys: two sign-ins moving the counter from the same value, one wins", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const laptop = passkey(ada.userId, "Laptop");
    await store.security.addPasskeyLogin({ login: laptop });
    const moved = await Promise.all(
      [1, 2].map(() => store.security.usePasskeyLogin({ credentialId: laptop.credentialId, from: 0, to: 1, at: at() })),
    );
    expect(moved.sort()).toEqual([false, true]);
    const found = await store.security.findPasskeyLogin(laptop.credentialId);
    expect(found).toMatchObject({ counter: 1, lastUsedAt: expect.any(String) });
    expect(await store.security.usePasskeyLogin({ credentialId: laptop.credentialId, from: 0, to: 1, at: at() })).toBe(false);
  });

  test("sign-in passkeys: removed one's own only, with its events", async () => {
    const store = getStore();
    const ada = await ownOrg(store);
    const bob = await ownOrg(store);
    const laptop = passkey(ada.userId, "Laptop");
    const added = event("user.passkey_added", ada);
    await store.security.addPasskeyLogin({ login: laptop, unlockVersion: 1, events: [added] });
    const refused = event("user.passkey_removed", bob);
    expect(await store.security.removePasskeyLogin({ userId: bob.userId, credentialId: laptop.credentialId, events: [refused] })).toBe(
      false,
    );
    expect(await store.security.findPasskeyLogin(laptop.credentialId)).toEqual(laptop);
    const removed = event("user.passkey_removed", ada);
    expect(await store.security.removePasskeyLogin({ userId: ada.userId, credentialId: laptop.credentialId, events: [removed] })).toBe(
      true,
    );
    expect(await store.security.findPasskeyLogin(laptop.credentialId)).toBeNull();
    const waiting = new Map((await store.outbox.pending(100_000)).map((e) => [e.eventId, e]));
    expect([added, refused, removed].map((e) => waiting.get(e.eventId) ?? null)).toEqual([added, null, removed]);
    await store.outbox.markSent([added.eventId, removed.eventId]);
  });
}
