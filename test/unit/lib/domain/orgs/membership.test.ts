/** People leaving (lib/domain/orgs/membership.ts), as tables: who may take whom out, and what their vaults need after. */
import type { OrgId, UserId, VaultId } from "../../../../../lib/domain/ids";
import { decideOrgRemoval, decideVaultsAfterRemoval, type HeldVault, type OrgPerson } from "../../../../../lib/domain/orgs/membership";
import type { Caller, OrgRole } from "../../../../../lib/domain/types";
import { lastOrgOwner, lastOwnerOfVaults, notOrgManager, userNotFound } from "../../../../../lib/domain/orgs/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const org = "o1" as OrgId;
const caller = (role: OrgRole, userId = "u-caller"): Caller => ({ userId: userId as UserId, orgId: org, role });
const person = (role: OrgRole, userId = "u-target", extra: Partial<OrgPerson> = {}): OrgPerson => ({
  userId: userId as UserId,
  orgId: org,
  role,
  ...extra,
});

test.each<[string, () => unknown, "ok" | AppError]>([
  ["an owner takes out a member", () => decideOrgRemoval(caller("owner"), person("member"), 1), "ok"],
  ["an owner takes out an admin", () => decideOrgRemoval(caller("owner"), person("admin"), 1), "ok"],
  ["an admin takes out a member", () => decideOrgRemoval(caller("admin"), person("member"), 1), "ok"],
  ["an admin takes out an admin", () => decideOrgRemoval(caller("admin"), person("admin"), 1), "ok"],
  ["an admin takes out an owner", () => decideOrgRemoval(caller("admin"), person("owner"), 2), notOrgManager("remove its people")],
  ["a member takes out anyone", () => decideOrgRemoval(caller("member"), person("member"), 1), notOrgManager("remove its people")],
  ["a member leaves", () => decideOrgRemoval(caller("member", "u-self"), person("member", "u-self"), 1), "ok"],
  ["the last owner leaves", () => decideOrgRemoval(caller("owner", "u-self"), person("owner", "u-self"), 1), lastOrgOwner()],
  ["an owner leaves, another stays", () => decideOrgRemoval(caller("owner", "u-self"), person("owner", "u-self"), 2), "ok"],
  ["nobody", () => decideOrgRemoval(caller("owner"), null, 1), userNotFound()],
  ["a person of another organization", () => decideOrgRemoval(caller("owner"), { ...person("member"), orgId: "o2" }, 1), userNotFound()],
  [
    "a person taken out already",
    () => decideOrgRemoval(caller("owner"), person("member", "u-t", { removedAt: "2026-01-01T00:00:00.000Z" }), 1),
    userNotFound(),
  ],
])("%s", (_what, decide, expected) => {
  expect(outcomeOf(decide)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

const vault = (vaultId: string, type: HeldVault["type"], role: HeldVault["role"], others: HeldVault["others"]): HeldVault => ({
  vaultId: vaultId as VaultId,
  type,
  role,
  others,
});
const other = (role: HeldVault["role"]) => ({ userId: "u-other" as UserId, role });

test("each vault's need: a rekey where others hold the key; nothing for a personal vault or one they are alone in", () => {
  expect(
    decideVaultsAfterRemoval([
      vault("shared-with-others", "shared", "member", [other("owner")]),
      vault("shared-alone", "shared", "owner", []),
      vault("personal", "personal", "owner", []),
      vault("co-owned", "shared", "owner", [other("owner")]),
    ]),
  ).toEqual([
    { vaultId: "shared-with-others", needs: "rekey" },
    { vaultId: "shared-alone", needs: "none" },
    { vaultId: "personal", needs: "none" },
    { vaultId: "co-owned", needs: "rekey" },
  ]);
});

test("the last owner of a shared vault others are in stays: refused, naming the vaults", () => {
  expect(
    outcomeOf(() =>
      decideVaultsAfterRemoval([
        vault("v1", "shared", "owner", [other("admin")]),
        vault("v2", "shared", "member", [other("owner")]),
        vault("v3", "shared", "owner", [other("member")]),
      ]),
    ),
  ).toEqual(asRefusal(lastOwnerOfVaults(["v1", "v3"])));
});
