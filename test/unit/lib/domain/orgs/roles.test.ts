/** What an organization role allows (lib/domain/orgs/roles.ts), a table: the caller in, allowed or the named refusal out. */
import type { OrgId, UserId } from "../../../../../lib/domain/ids";
import { assertMayChangePolicies, assertOrgManager } from "../../../../../lib/domain/orgs/roles";
import { notOrgManager, policiesOwnersOnly } from "../../../../../lib/domain/orgs/refusals";
import type { Caller, OrgRole } from "../../../../../lib/domain/types";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const org = "o1" as OrgId;
const caller = (role: OrgRole, orgId: OrgId = org): Caller => ({ userId: "u" as UserId, orgId, role });

describe("assertOrgManager: owners and admins of the organization manage it", () => {
  test.each<[string, Caller, "ok" | AppError]>([
    ["an owner", caller("owner"), "ok"],
    ["an admin", caller("admin"), "ok"],
    ["a member", caller("member"), notOrgManager("read its audit log")],
    ["an owner of another organization", caller("owner", "o2" as OrgId), notOrgManager("read its audit log")],
  ])("%s", (_what, who, expected) => {
    expect(outcomeOf(() => assertOrgManager(who, org, "read its audit log"))).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
  });
});

describe("assertMayChangePolicies: only owners set the policies", () => {
  test.each<[OrgRole, "ok" | AppError]>([
    ["owner", "ok"],
    ["admin", policiesOwnersOnly()],
    ["member", policiesOwnersOnly()],
  ])("%s", (role, expected) => {
    expect(outcomeOf(() => assertMayChangePolicies(caller(role)))).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
  });
});
