/** A vault's roles (lib/domain/vault-roles.ts): the permission table, who may remove whom, and the owner who always remains. */
import { assertMayRemoveMember, assertOwnerRemains, mayDo, type VaultAction } from "../../../../lib/domain/vault-roles";
import { code } from "../../../helpers/refusal";

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
    expect(code(() => assertMayRemoveMember("admin", "admin", false))).toBe("FORBIDDEN");
    expect(code(() => assertMayRemoveMember("admin", "owner", false))).toBe("FORBIDDEN");
    expect(code(() => assertMayRemoveMember("member", "member", false))).toBe("FORBIDDEN");
    expect(code(() => assertMayRemoveMember("member", "member", true))).toBe("ok");
    expect(code(() => assertMayRemoveMember("owner", "owner", false))).toBe("ok");
  });

  test("an owner always remains", () => {
    expect(code(() => assertOwnerRemains(1, "owner", null))).toBe("INVALID");
    expect(code(() => assertOwnerRemains(1, "owner", "admin"))).toBe("INVALID");
    expect(code(() => assertOwnerRemains(2, "owner", null))).toBe("ok");
    expect(code(() => assertOwnerRemains(1, "member", null))).toBe("ok");
    expect(code(() => assertOwnerRemains(1, "owner", "owner"))).toBe("ok");
  });
});
