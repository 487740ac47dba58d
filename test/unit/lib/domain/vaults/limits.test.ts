/**
 * A vault's growth (lib/domain/vaults/limits.ts: decideVaultGrowth): its size and the change in, allowed or `413` out; and
 * which vault limits can stand beside the rekey body limit.
 */
import { rekeyPastVaultLimit, vaultBytesFull, vaultItemsFull } from "../../../../../lib/domain/vaults/refusals";
import {
  decideRekeySize,
  decideVaultGrowth,
  membersCovered,
  vaultLimitsProblem,
  defaultVaultMaxBytes,
  defaultVaultMaxItems,
} from "../../../../../lib/domain/vaults/limits";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

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

  test.each([
    ["an item more than VAULT_MAX_ITEMS", { bytes: 60, items: 3 }, { bytes: 1, items: 1 }, asRefusal(vaultItemsFull(3, 3))],
    ["bytes past VAULT_MAX_BYTES", { bytes: 60, items: 2 }, { bytes: 41, items: 0 }, asRefusal(vaultBytesFull(60, 100))],
    ["a vault past its limits already, growing", { bytes: 500, items: 9 }, { bytes: 1, items: 0 }, asRefusal(vaultBytesFull(500, 100))],
  ] as const)("decideVaultGrowth refuses %s, naming the limit", (_what, now, change, expected) => {
    expect(outcomeOf(() => decideVaultGrowth(now, change, limits))).toEqual(expected);
  });

  test.each([
    ["within the limit", 90, 100, "ok"],
    ["past the limit but no larger than the vault is now (lowered settings)", 500, 400, "ok"],
    ["past the limit and larger than now", 90, 101, asRefusal(rekeyPastVaultLimit(101, 100))],
  ] as const)("decideRekeySize: %s", (_what, nowBytes, newBytes, expected) => {
    expect(outcomeOf(() => decideRekeySize(nowBytes, newBytes, limits))).toEqual(expected);
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
