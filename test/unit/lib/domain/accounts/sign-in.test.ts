/** Who a sign-in signs in (lib/domain/accounts/sign-in.ts): the account, or one refusal for every wrong case of a step. */
import {
  decideInviteLock,
  decideRefresh,
  decideStepUse,
  requireInOrg,
  requireOpenStep,
  requireRefreshUser,
  requireRightAnswer,
  requireRightPassword,
} from "../../../../../lib/domain/accounts/sign-in";
import {
  badRefreshToken,
  refreshUserGone,
  tooManyStepTries,
  wrongEmailOrPassword,
  wrongPasswordOrCode,
} from "../../../../../lib/domain/accounts/refusals";
import { inviteBeingRedeemed, removedFromOrg } from "../../../../../lib/domain/orgs/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const ada = { email: "ada@example.test" };

test.each<[string, () => unknown, AppError | "ok"]>([
  ["the right password of a known address", () => requireRightPassword(ada, true), "ok"],
  ["a wrong password", () => requireRightPassword(ada, false), wrongEmailOrPassword()],
  ["an unknown address, answered as a wrong password", () => requireRightPassword(null, true), wrongEmailOrPassword()],
  ["an account still in its organization", () => requireInOrg({ ...ada, removedAt: undefined }), "ok"],
  ["an account taken out of its organization", () => requireInOrg({ removedAt: "2026-11-29T00:00:00.000Z" }), removedFromOrg()],
  ["a second step's token that opens", () => requireOpenStep({ id: "s" }), "ok"],
  ["a forged or expired second step's token", () => requireOpenStep(null), tooManyStepTries()],
  ["a right answer for the account the first step named", () => requireRightAnswer(ada, ada.email), "ok"],
  ["a wrong code", () => requireRightAnswer(null, ada.email), wrongPasswordOrCode()],
  ["an account whose address changed since the first step", () => requireRightAnswer(ada, "eve@example.test"), wrongPasswordOrCode()],
  ["the step's first success", () => decideStepUse(1), "ok"],
  ["a second success of one step, arriving at once", () => decideStepUse(2), tooManyStepTries()],
  ["a refresh token rotated", () => decideRefresh({ ok: true }), "ok"],
  ["an unknown or expired refresh token", () => decideRefresh({ ok: false, reason: "unknown" }), badRefreshToken(false)],
  ["a refresh token used twice: a stolen token caught", () => decideRefresh({ ok: false, reason: "reused" }), badRefreshToken(true)],
  ["a refreshed session whose account is gone", () => requireRefreshUser(null), refreshUserGone()],
  ["an invite token locked for this redemption", () => decideInviteLock(true), "ok"],
  ["an invite token another registration is redeeming", () => decideInviteLock(false), inviteBeingRedeemed()],
])("%s", (_, rule, expected) => {
  expect(outcomeOf(rule)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});
