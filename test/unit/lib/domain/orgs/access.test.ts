/** Who sees what outside a vault (lib/domain/orgs/access.ts), a table: the caller and the thing in, seen or the named refusal out. */
import { decideInviteSigner, decideOrgAccess, decideVisibleInvite, decideVisibleUser } from "../../../../../lib/domain/orgs/access";
import type { Invite } from "../../../../../lib/domain/orgs/invites";
import { inviteNotFound, notOrgMember, notTheInviter, userNotFound } from "../../../../../lib/domain/orgs/refusals";
import type { Caller } from "../../../../../lib/domain/types";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const caller = { userId: "u1", orgId: "o1", role: "member" } as Caller;
const invite = (orgId: string, inviterId = "u1") => ({ inviteId: "i", orgId, inviterId }) as Invite;

test.each<[string, () => unknown, "seen" | AppError]>([
  ["the caller's organization", () => decideOrgAccess(caller, caller.orgId), "seen"],
  ["another organization", () => decideOrgAccess(caller, "o2" as Caller["orgId"]), notOrgMember()],
  ["a user of the caller's organization", () => decideVisibleUser({ orgId: caller.orgId }, caller), "seen"],
  ["a user of another organization", () => decideVisibleUser({ orgId: "o2" as Caller["orgId"] }, caller), userNotFound()],
  ["no such user", () => decideVisibleUser(null, caller), userNotFound()],
  ["an invite of the caller's organization", () => decideVisibleInvite(invite("o1"), caller), "seen"],
  ["an invite of another organization", () => decideVisibleInvite(invite("o2"), caller), inviteNotFound()],
  ["no such invite", () => decideVisibleInvite(null, caller), inviteNotFound()],
  ["the inviter signs their invite", () => decideInviteSigner(invite("o1"), caller.userId), "seen"],
  ["someone else signs it", () => decideInviteSigner(invite("o1"), "u2" as Caller["userId"]), notTheInviter()],
])("%s", (_what, decide, expected) => {
  expect(outcomeOf(decide)).toEqual(expected === "seen" ? "ok" : asRefusal(expected));
});
