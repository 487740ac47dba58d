/** Names (lib/domain/names.ts: decideVaultName, decideOrgName; the rule: protocol/names.ts): the name kept, or the named refusal. */
import { decideOrgName, decideVaultName } from "../../../../lib/domain/names";
import { badName } from "../../../../lib/domain/refusals";
import type { AppError } from "../../../../lib/errors";
import { asRefusal } from "../../../helpers/refusal";

describe("names (decideVaultName, decideOrgName; the rule: protocol/names.ts)", () => {
  const outcome = (decide: () => string) => {
    try {
      return decide();
    } catch (err) {
      return asRefusal(err as AppError);
    }
  };
  test.each([
    ["a name", "Team", "Team"],
    ["kept as given, spaces and all", " Team ", " Team "],
    ["blank", "   ", asRefusal(badName("name", "must not be blank"))],
    ["empty", "", asRefusal(badName("name", "must not be blank"))],
    ["too long", "x".repeat(257), asRefusal(badName("name", "must be 1 to 256 characters"))],
    ["the longest", "x".repeat(256), "x".repeat(256)],
  ])("a vault's name: %s", (_what, raw, expected) => {
    expect(outcome(() => decideVaultName(raw))).toEqual(expected);
  });
  test.each([
    ["trimmed", "  Acme  ", "Acme"],
    ["none given: the default", undefined, "My organization"],
    ["blank", "  ", asRefusal(badName("orgName", "must not be blank"))],
  ])("an organization's name: %s", (_what, raw, expected) => {
    expect(outcome(() => decideOrgName(raw))).toEqual(expected);
  });
});
