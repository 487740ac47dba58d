/** Fair slots for large bodies (lib/domain/vaults/fair-share.ts: decideSlot, slotShares): the slots held in, a slot or the named refusal out. */
import { decideSlot, slotRefusalStatus, slotShares } from "../../../../../lib/domain/vaults/fair-share";

describe("fair slots for large bodies", () => {
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

  test.each([
    ["user-share", "RATE_LIMITED"],
    ["organization-share", "RATE_LIMITED"],
    ["process-full", "UNAVAILABLE"],
  ] as const)("after its turn, a refusal for %s is answered %s", (refusal, status) => {
    expect(slotRefusalStatus(refusal)).toBe(status);
  });
});
