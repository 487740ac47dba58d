/** Requests per client address (lib/domain/accounts/address-limits.ts): the count in the window in, allowed or `429` with the wait out. */
import { addressLimit, decideAddressAttempt } from "../../../../../lib/domain/accounts/address-limits";
import { rateLimited } from "../../../../../lib/domain/accounts/refusals";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal } from "../../../../helpers/refusal";

/** A refusal with the seconds to wait, which `asRefusal` alone leaves out. */
const withWait = (err: AppError) => ({ ...asRefusal(err), retryAfterSec: (err.data as { retryAfterSec?: number })?.retryAfterSec });

test.each([
  ["prelogin", 10, 10, 60_000, "ok"],
  ["prelogin", 10, 11, 59_001, withWait(rateLimited("Too many prelogins from your address; try again later", 60))],
  ["register", 5, 6, 1, withWait(rateLimited("Too many registrations from your address; try again later", 1))],
  ["redeem", 30, 31, 2_500, withWait(rateLimited("Too many redeem requests; try again later", 3))],
] as const)("%s, limit %i, count %i, window ending in %i ms", (name, limit, count, resetInMs, expected) => {
  let got: "ok" | ReturnType<typeof withWait> = "ok";
  try {
    decideAddressAttempt(count, resetInMs, addressLimit(name, limit));
  } catch (err) {
    got = withWait(err as AppError);
  }
  expect(got).toEqual(expected);
});

test("each counter's window: a minute for prelogin and redeem, an hour for registration", () => {
  expect([addressLimit("prelogin", 1).windowMs, addressLimit("redeem", 1).windowMs, addressLimit("register", 1).windowMs]).toEqual([
    60_000, 60_000, 3_600_000,
  ]);
});
