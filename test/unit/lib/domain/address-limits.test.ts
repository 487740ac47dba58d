/** Requests per client address (lib/domain/address-limits.ts): the count in the window in, allowed or `429` with the wait out. */
import { addressLimit, decideAddressAttempt } from "../../../../lib/domain/address-limits";

test.each([
  ["prelogin", 10, 10, 60_000, "ok"],
  ["prelogin", 10, 11, 59_001, "RATE_LIMITED, retry after 60 s: Too many prelogins from your address; try again later"],
  ["register", 5, 6, 1, "RATE_LIMITED, retry after 1 s: Too many registrations from your address; try again later"],
  ["redeem", 30, 31, 2_500, "RATE_LIMITED, retry after 3 s: Too many redeem requests; try again later"],
] as const)("%s, limit %i, count %i, window ending in %i ms: %s", (name, limit, count, resetInMs, expected) => {
  let got = "ok";
  try {
    decideAddressAttempt(count, resetInMs, addressLimit(name, limit));
  } catch (err) {
    const e = err as { type: string; message: string; data: { retryAfterSec: number } };
    got = `${e.type}, retry after ${e.data.retryAfterSec} s: ${e.message}`;
  }
  expect(got).toBe(expected);
});

test("each counter's window: a minute for prelogin and redeem, an hour for registration", () => {
  expect([addressLimit("prelogin", 1).windowMs, addressLimit("redeem", 1).windowMs, addressLimit("register", 1).windowMs]).toEqual([
    60_000, 60_000, 3_600_000,
  ]);
});
