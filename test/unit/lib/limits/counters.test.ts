/**
 * The rate-limit counters (lib/limits/counters.ts): the in-process counters' windows, on the runtime's clock (with the
 * leases of lib/locks.ts and the redemption lock of lib/tokens/invite-tokens.ts, which run on it too), and the client
 * address a limit counts (netKey).
 */
import { MemoryCounters, netKey } from "../../../../lib/limits/counters";
import { retryAfterSec } from "../../../../lib/domain/accounts/address-limits";
import { AdjustableClock } from "../../../../lib/clock";
import { MemoryLocks } from "../../../../lib/locks";
import { MemoryInviteTokens } from "../../../../lib/tokens/invite-tokens";
import type { Store } from "../../../../lib/store/port";
import { sleep } from "../../../helpers/wait";

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
