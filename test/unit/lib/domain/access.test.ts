/** Who sees what outside a vault (lib/domain/access.ts), a table: the caller and the thing in, seen or the named refusal out. */
import { decideInviteSigner, decideOrgAccess, decideVisibleInvite, decideVisibleUser } from "../../../../lib/domain/access";
import type { Invite } from "../../../../lib/domain/invites";
import type { Caller } from "../../../../lib/domain/types";

const caller = { userId: "u1", orgId: "o1", role: "member" } as Caller;
const invite = (orgId: string, inviterId = "u1") => ({ inviteId: "i", orgId, inviterId }) as Invite;

function outcome(decide: () => unknown): string {
  try {
    decide();
    return "seen";
  } catch (err) {
    return (err as { type: string }).type;
  }
}

test.each<[string, () => unknown, string]>([
  ["the caller's organization", () => decideOrgAccess(caller, caller.orgId), "seen"],
  ["another organization", () => decideOrgAccess(caller, "o2" as Caller["orgId"]), "FORBIDDEN"],
  ["a user of the caller's organization", () => decideVisibleUser({ orgId: caller.orgId }, caller), "seen"],
  ["a user of another organization", () => decideVisibleUser({ orgId: "o2" as Caller["orgId"] }, caller), "NOT_FOUND"],
  ["no such user", () => decideVisibleUser(null, caller), "NOT_FOUND"],
  ["an invite of the caller's organization", () => decideVisibleInvite(invite("o1"), caller), "seen"],
  ["an invite of another organization", () => decideVisibleInvite(invite("o2"), caller), "NOT_FOUND"],
  ["the inviter signs their invite", () => decideInviteSigner(invite("o1"), caller.userId), "seen"],
  ["someone else signs it", () => decideInviteSigner(invite("o1"), "u2" as Caller["userId"]), "FORBIDDEN"],
])("%s: %s", (_what, decide, expected) => {
  expect(outcome(decide)).toBe(expected);
});
