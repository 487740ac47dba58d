/** A vault's roles (lib/domain/vaults/roles.ts): the permission table, who may remove whom, and the owner who always remains. */
import { lastOwner, mayNotRemove, personalNotShareable, roleMayNot } from "../../../../../lib/domain/vaults/refusals";
import {
  assertMayDo,
  assertMayRemoveMember,
  assertOwnerRemains,
  assertShareable,
  mayDo,
  type VaultAction,
} from "../../../../../lib/domain/vaults/roles";
import { asRefusal, code, outcomeOf } from "../../../../helpers/refusal";

describe("vault roles", () => {
  test("the permission table of contract section 3", () => {
    const table = {
      rename: [true, true, false],
      addMember: [true, true, false],
      changeRole: [true, false, false],
      rekey: [true, true, false],
      delete: [true, false, false],
      read: [true, true, true],
      adoptRoster: [true, false, false],
    } satisfies Record<VaultAction, readonly [boolean, boolean, boolean]>;
    for (const [action, allowed] of Object.entries(table)) {
      expect((["owner", "admin", "member"] as const).map((r) => mayDo(r, action as keyof typeof table))).toEqual(allowed);
    }
  });

  test("who may remove whom", () => {
    expect(code(() => assertMayRemoveMember("admin", "member", false))).toBe("ok");
    expect(outcomeOf(() => assertMayRemoveMember("admin", "admin", false))).toEqual(asRefusal(mayNotRemove("admin", "admin")));
    expect(outcomeOf(() => assertMayRemoveMember("admin", "owner", false))).toEqual(asRefusal(mayNotRemove("admin", "owner")));
    expect(outcomeOf(() => assertMayRemoveMember("member", "member", false))).toEqual(asRefusal(mayNotRemove("member", "member")));
    expect(code(() => assertMayRemoveMember("member", "member", true))).toBe("ok");
    expect(code(() => assertMayRemoveMember("owner", "owner", false))).toBe("ok");
  });

  test("an owner always remains", () => {
    expect(outcomeOf(() => assertOwnerRemains(1, "owner", null))).toEqual(asRefusal(lastOwner(true)));
    expect(outcomeOf(() => assertOwnerRemains(1, "owner", "admin"))).toEqual(asRefusal(lastOwner(false)));
    expect(code(() => assertOwnerRemains(2, "owner", null))).toBe("ok");
    expect(code(() => assertOwnerRemains(1, "member", null))).toBe("ok");
    expect(code(() => assertOwnerRemains(1, "owner", "owner"))).toBe("ok");
  });

  test("a role the table refuses, and a personal vault shared", () => {
    expect(outcomeOf(() => assertMayDo("member", "addMember"))).toEqual(asRefusal(roleMayNot("member", "addMember")));
    expect(outcomeOf(() => assertMayDo("admin", "adoptRoster"))).toEqual(asRefusal(roleMayNot("admin", "adoptRoster")));
    expect(code(() => assertMayDo("owner", "delete"))).toBe("ok");
    expect(outcomeOf(() => assertShareable("personal"))).toEqual(asRefusal(personalNotShareable()));
    expect(code(() => assertShareable("shared"))).toBe("ok");
  });
});
