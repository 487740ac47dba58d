/** An invite as its requests read it (lib/domain/orgs/invite-reads.ts), as tables: kept, or the named refusal. */
import type { Invite } from "../../../../../lib/domain/orgs/invites";
import { decideInviteStatement, decideRedeemToken, inviteStatementOf, requireInviter } from "../../../../../lib/domain/orgs/invite-reads";
import { badStatementSignature, tokenUserGone } from "../../../../../lib/domain/accounts/refusals";
import { badRedeemToken, inviteTokenNotFound } from "../../../../../lib/domain/orgs/refusals";
import type { SignedStatement } from "../../../../../lib/domain/types";
import { newUserKeys, registrationBundle, type UserKeys } from "../../../../helpers/crypto";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";
import { inviteStatementOf as signedInviteStatement } from "../../../../helpers/statements";

const invite = {
  inviteId: "i",
  orgId: "o",
  email: "bob@example.test",
  role: "member",
  inviterId: "u-ada",
  status: "pending",
  expiresAt: "2026-11-25T12:00:00.000Z",
  createdAt: "2026-11-24T12:00:00.000Z",
} as Invite;

test("what an inviter signs: the invite as the server made it, and the organization's name", () => {
  expect(inviteStatementOf(invite, "Acme")).toEqual({
    inviteId: "i",
    orgId: "o",
    orgName: "Acme",
    email: "bob@example.test",
    role: "member",
    expiresAt: "2026-11-25T12:00:00.000Z",
    inviterId: "u-ada",
  });
});

describe("decideInviteStatement", () => {
  let ada: UserKeys;
  let eve: UserKeys;
  beforeAll(async () => {
    [ada, eve] = await Promise.all([newUserKeys({ rsaBits: 1024 }), newUserKeys({ rsaBits: 1024 })]);
  });
  const acme = { name: "Acme" };
  const signedBy = (k: UserKeys, orgName = "Acme"): SignedStatement =>
    signedInviteStatement({ keys: k }, inviteStatementOf(invite, orgName));
  const inviterOf = (k: UserKeys) => ({ signingPublicKey: registrationBundle(k).signingPublicKey });

  test.each<[string, (a: UserKeys, e: UserKeys) => Parameters<typeof decideInviteStatement>, (() => unknown) | "ok"]>([
    ["signed by the inviter", (a) => [invite, inviterOf(a), acme, signedBy(a)], "ok"],
    ["the inviter is gone", (a) => [invite, null, acme, signedBy(a)], () => asRefusal(tokenUserGone())],
    ["the organization is gone", (a) => [invite, inviterOf(a), null, signedBy(a)], () => asRefusal(tokenUserGone())],
    [
      "signed by another key",
      (a, e) => [invite, inviterOf(a), acme, signedBy(e)],
      () => asRefusal(badStatementSignature("The invite statement", "statement")),
    ],
    [
      "signed over another organization's name",
      (a) => [invite, inviterOf(a), acme, signedBy(a, "Evil Corp")],
      () => asRefusal(badStatementSignature("The invite statement", "statement")),
    ],
  ])("%s", (_what, args, expected) => {
    expect(outcomeOf(() => decideInviteStatement(...args(ada, eve)))).toEqual(expected === "ok" ? "ok" : expected());
  });
});

const bounds = { min: 1, max: 8 };
test.each<[string, unknown, unknown]>([
  ["a token within the bounds", "abc", "ok"],
  ["the longest", "x".repeat(8), "ok"],
  ["too long", "x".repeat(9), asRefusal(badRedeemToken(1, 8))],
  ["empty", "", asRefusal(badRedeemToken(1, 8))],
  ["not a string", 42, asRefusal(badRedeemToken(1, 8))],
  ["none", undefined, asRefusal(badRedeemToken(1, 8))],
])("decideRedeemToken: %s", (_what, token, expected) => {
  expect(outcomeOf(() => decideRedeemToken(token, bounds))).toEqual(expected);
});

test.each<[string, { userId: string } | null, unknown]>([
  ["the inviter, still there", { userId: "u-ada" }, "ok"],
  ["the inviter is gone: no invite", null, asRefusal(inviteTokenNotFound())],
])("requireInviter: %s", (_what, inviter, expected) => {
  expect(outcomeOf(() => requireInviter(inviter))).toEqual(expected);
});
