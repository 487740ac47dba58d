/**
 * The limits' rules (issue 25), each a plain function with named refusals: fair rekey slots, login
 * attempts, a vault's growth, and which vault limits can stand beside the rekey body limit.
 */
import { decideSlot, slotShares } from "../lib/domain/fair-share";
import { decideLoginAttempt } from "../lib/domain/login-limits";
import {
  decideVaultGrowth,
  membersCovered,
  vaultLimitsProblem,
  defaultVaultMaxBytes,
  defaultVaultMaxItems,
} from "../lib/domain/vault-limits";
import { FairSlots } from "../lib/limits/slots";
import { MemoryCounters, netKey } from "../lib/limits/counters";
import { retryAfterSec } from "../lib/domain/address-limits";
import { AdjustableClock } from "../lib/clock";
import { MemoryLocks } from "../lib/locks";
import { MemoryInviteTokens } from "../lib/tokens/invite-tokens";
import type { Store } from "../lib/store/port";
import { sleep } from "./helpers/wait";

describe("fair rekey slots", () => {
  test.each([
    // total, held {total, org, user}, verdict
    [4, { total: 0, org: 0, user: 0 }, "ok"],
    [4, { total: 1, org: 1, user: 1 }, "user-share"],
    [4, { total: 2, org: 2, user: 0 }, "organization-share"],
    [4, { total: 3, org: 1, user: 0 }, "ok"],
    [4, { total: 4, org: 0, user: 0 }, "process-full"],
    [1, { total: 0, org: 0, user: 0 }, "ok"],
    [1, { total: 1, org: 0, user: 0 }, "process-full"],
    [16, { total: 8, org: 7, user: 3 }, "ok"],
    [16, { total: 8, org: 8, user: 3 }, "organization-share"],
    [16, { total: 8, org: 7, user: 4 }, "user-share"],
  ] as const)("of %i, holding %j: %s", (total, held, verdict) => {
    const d = decideSlot(held, slotShares(total));
    expect(d.ok ? "ok" : d.refusal).toBe(verdict);
  });

  test("a slot released twice is given back once", () => {
    const slots = new FairSlots(4);
    const a = slots.take("org", "u1");
    expect("release" in a).toBe(true);
    if ("release" in a) {
      a.release();
      a.release();
    }
    expect(slots.held).toBe(0);
    const b = slots.take("org", "u1");
    const c = slots.take("org", "u2");
    expect(["release" in b, "release" in c, slots.held]).toEqual([true, true, 2]);
    expect(slots.take("org", "u3")).toEqual({ refusal: "organization-share" });
  });
});

describe("login attempts", () => {
  const limits = { perEmailAndAddress: 10, perAddress: 50, perEmail: 100 };
  test.each([
    [{ emailAndAddress: 1, address: 1, email: 1, knownAddress: false }, "ok"],
    [{ emailAndAddress: 10, address: 10, email: 10, knownAddress: false }, "ok"],
    [{ emailAndAddress: 11, address: 11, email: 11, knownAddress: true }, "email-and-address"],
    [{ emailAndAddress: 1, address: 51, email: 1, knownAddress: true }, "address"],
    [{ emailAndAddress: 1, address: 1, email: 101, knownAddress: false }, "email"],
    // The owner's own address is not held back by everyone else's failures on their email.
    [{ emailAndAddress: 1, address: 1, email: 5000, knownAddress: true }, "ok"],
    [{ emailAndAddress: 11, address: 60, email: 500, knownAddress: false }, "email-and-address"],
  ] as const)("%j: %s", (attempts, verdict) => {
    const d = decideLoginAttempt(attempts, limits);
    expect(d.ok ? "ok" : d.refusal).toBe(verdict);
  });
});

test("in-process counters: a mark renews its window at every use", async () => {
  const c = new MemoryCounters();
  await c.mark("k", 300);
  await sleep(200);
  await c.mark("k", 300);
  await sleep(200);
  expect((await c.add("k", 0, 300)).count).toBe(1);
  await sleep(200);
  expect((await c.add("k", 0, 300)).count).toBe(0);
});

test("rate-limit windows, leases and the redemption lock run on the runtime's clock: moved on, they end", async () => {
  const clock = new AdjustableClock();
  const c = new MemoryCounters(clock);
  const w = await c.add("k", 1, 60_000);
  expect(retryAfterSec(w.resetInMs)).toBe(60);
  clock.advance(30_000);
  expect(retryAfterSec((await c.add("k", 1, 60_000)).resetInMs)).toBe(30);
  clock.advance(30_000);
  expect((await c.add("k", 0, 60_000)).count).toBe(0);

  const locks = new MemoryLocks(clock);
  expect(await locks.tryAcquire("sweep", 60_000)).not.toBeNull();
  expect(await locks.tryAcquire("sweep", 60_000)).toBeNull();
  clock.advance(60_000);
  expect(await locks.tryAcquire("sweep", 60_000)).not.toBeNull();

  const tokens = new MemoryInviteTokens(undefined as unknown as Store, clock); // the lock reads no store
  expect(await tokens.lockOnce("t", 10_000)).toBe(true);
  expect(await tokens.lockOnce("t", 10_000)).toBe(false);
  clock.advance(10_000);
  expect(await tokens.lockOnce("t", 10_000)).toBe(true);
});

describe("client addresses as rate limits count them", () => {
  test.each([
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"],
    ["2001:DB8:0001:0002::", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
  ])("%s counts as %s", (ip, key) => {
    expect(netKey(ip)).toBe(key);
  });
});

describe("a vault's growth", () => {
  const limits = { maxBytes: 100, maxItems: 3 };
  test.each([
    [{ bytes: 0, items: 0 }, { bytes: 100, items: 1 }, "ok"],
    [{ bytes: 0, items: 0 }, { bytes: 101, items: 1 }, "VAULT_MAX_BYTES"],
    [{ bytes: 60, items: 2 }, { bytes: 40, items: 1 }, "ok"],
    [{ bytes: 60, items: 3 }, { bytes: 1, items: 1 }, "VAULT_MAX_ITEMS"],
    [{ bytes: 100, items: 3 }, { bytes: 0, items: 0 }, "ok"],
    // Past its limits already (lowered settings): shrinking and deleting stay allowed, growing does not.
    [{ bytes: 500, items: 9 }, { bytes: -10, items: 0 }, "ok"],
    [{ bytes: 500, items: 9 }, { bytes: 1, items: 0 }, "VAULT_MAX_BYTES"],
  ] as const)("holding %j, adding %j: %s", (now, change, verdict) => {
    let outcome = "ok";
    try {
      decideVaultGrowth(now, change, limits);
    } catch (err) {
      expect(err).toMatchObject({ type: "PAYLOAD_TOO_LARGE" });
      outcome = /VAULT_MAX_ITEMS/.test((err as Error).message) ? "VAULT_MAX_ITEMS" : "VAULT_MAX_BYTES";
    }
    expect(outcome).toBe(verdict);
  });

  test("the defaults leave a full vault room in its rekey: at 64 MiB, for the most members a roster holds", () => {
    const rekey = 64 * 1024 * 1024;
    const defaults = { maxBytes: defaultVaultMaxBytes(rekey), maxItems: defaultVaultMaxItems(rekey) };
    expect(defaults).toEqual({ maxBytes: 32 * 1024 * 1024, maxItems: 50_000 });
    expect(membersCovered(defaults, rekey)).toBe(10_000);
    for (const mib of [1, 2, 8, 256]) {
      const r = mib * 1024 * 1024;
      expect([mib, vaultLimitsProblem({ maxBytes: defaultVaultMaxBytes(r), maxItems: defaultVaultMaxItems(r) }, r)]).toEqual([
        mib,
        undefined,
      ]);
    }
    expect(vaultLimitsProblem({ maxBytes: rekey, maxItems: 10 }, rekey)).toMatch(/raise REKEY_BODY_LIMIT/);
  });
});
