/** What a signed access token must claim (lib/domain/accounts/access-tokens.ts), as tables: claims in, accepted or the named refusal. */
import {
  decideTokenHolder,
  decideTokenKey,
  decideTokenTimes,
  MAX_CLOCK_SKEW_SEC,
  type TokenHolder,
} from "../../../../../lib/domain/accounts/access-tokens";
import {
  tokenClaimsStale,
  tokenFromTheFuture,
  tokenHolderRemoved,
  tokenKeyUnknown,
  tokenOutlivesItsLifetime,
  tokenUserGone,
} from "../../../../../lib/domain/accounts/refusals";
import type { OrgId } from "../../../../../lib/domain/ids";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const expected = (e: "ok" | AppError) => (e === "ok" ? "ok" : asRefusal(e));

test.each<[string, unknown, "ok" | AppError]>([
  ["the current key", "current", "ok"],
  ["the previous key, before its deadline", "previous", "ok"],
  ["no kid", undefined, tokenKeyUnknown()],
  ["a kid this server does not hold", "another", tokenKeyUnknown()],
  ["a kid that is not a string", 7, tokenKeyUnknown()],
])("the key a token names: %s", (_what, kid, outcome) => {
  const usable = (k: string) => k === "current" || k === "previous";
  expect(outcomeOf(() => decideTokenKey(kid, usable))).toEqual(expected(outcome));
});

const now = 1_900_000_000;
const ttl = 900;

test.each<[string, { iat: number; exp: number }, "ok" | AppError]>([
  ["issued now, for the lifetime", { iat: now, exp: now + ttl }, "ok"],
  ["issued within the clock skew ahead", { iat: now + MAX_CLOCK_SKEW_SEC, exp: now + MAX_CLOCK_SKEW_SEC + ttl }, "ok"],
  [
    "issued just beyond the clock skew ahead",
    { iat: now + MAX_CLOCK_SKEW_SEC + 1, exp: now + MAX_CLOCK_SKEW_SEC + 1 + ttl },
    tokenFromTheFuture(),
  ],
  ["issued an hour ahead", { iat: now + 3600, exp: now + 3600 + ttl }, tokenFromTheFuture()],
  ["a shorter life than the setting", { iat: now - 10, exp: now + 60 }, "ok"],
  ["one second longer than the setting", { iat: now, exp: now + ttl + 1 }, tokenOutlivesItsLifetime(ttl)],
  ["ten years ahead", { iat: now, exp: now + 10 * 365 * 86_400 }, tokenOutlivesItsLifetime(ttl)],
])("a token's times: %s", (_what, times, outcome) => {
  expect(outcomeOf(() => decideTokenTimes(times, now, ttl))).toEqual(expected(outcome));
});

const org = "o-acme" as OrgId;
const holder: TokenHolder = { orgId: org, role: "admin" };

test.each<[string, TokenHolder | null, "ok" | AppError]>([
  ["the user, in the organization and role the token names", holder, "ok"],
  ["no such user", null, tokenUserGone()],
  ["a user taken out of the organization", { ...holder, removedAt: "2026-11-24T12:00:00.000Z" }, tokenHolderRemoved()],
  ["a user of another organization", { ...holder, orgId: "o-other" as OrgId }, tokenClaimsStale()],
  ["a user with another role", { ...holder, role: "member" }, tokenClaimsStale()],
])("a token's user: %s", (_what, found, outcome) => {
  expect(outcomeOf(() => decideTokenHolder({ orgId: org, role: "admin" }, found))).toEqual(expected(outcome));
});
