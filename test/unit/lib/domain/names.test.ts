/** Names (lib/domain/names.ts: decideVaultName, decideOrgName; the rule: protocol/names.ts): the name kept, or the named refusal. */
import { decideOrgName, decideVaultName } from "../../../../lib/domain/names";
import type { AppError } from "../../../../lib/errors";

describe("names (decideVaultName, decideOrgName; the rule: protocol/names.ts)", () => {
  const outcome = (decide: () => string) => {
    try {
      return decide();
    } catch (err) {
      return `${(err as AppError).type} ${(err as AppError).data.field}: ${(err as AppError).message}`;
    }
  };
  test.each([
    ["a name", "Team", "Team"],
    ["kept as given, spaces and all", " Team ", " Team "],
    ["blank", "   ", "INVALID name: name must not be blank"],
    ["empty", "", "INVALID name: name must not be blank"],
    ["too long", "x".repeat(257), "INVALID name: name must be 1 to 256 characters"],
    ["the longest", "x".repeat(256), "x".repeat(256)],
  ])("a vault's name: %s", (_what, raw, expected) => {
    expect(outcome(() => decideVaultName(raw))).toBe(expected);
  });
  test.each([
    ["trimmed", "  Acme  ", "Acme"],
    ["none given: the default", undefined, "My organization"],
    ["blank", "  ", "INVALID orgName: orgName must not be blank"],
  ])("an organization's name: %s", (_what, raw, expected) => {
    expect(outcome(() => decideOrgName(raw))).toBe(expected);
  });
});
