/** Login attempts (lib/domain/accounts/login-limits.ts: decideLoginAttempt): the failures counted in, allowed or the counter that refuses out. */
import { decideLoginAttempt } from "../../../../../lib/domain/accounts/login-limits";

describe("login attempts", () => {
  const limits = { perEmailAndAddress: 10, perAddress: 50, perEmail: 100 };
  test.each([
    [{ emailAndAddress: 1, address: 1, email: 1, knownAddress: false }, "ok"],
    [{ emailAndAddress: 10, address: 10, email: 10, knownAddress: false }, "ok"],
    [{ emailAndAddress: 11, address: 11, email: 11, knownAddress: true }, "email-and-address"],
    [{ emailAndAddress: 1, address: 51, email: 1, knownAddress: true }, "address"],
    [{ emailAndAddress: 1, address: 1, email: 101, knownAddress: false }, "email"],
    // The owner's own address is not held back by everyone else's failures on their email.
    [{ emailAndAddress: 1, address: 1, email: 5000, knownAddress: true }, "ok"],
    [{ emailAndAddress: 11, address: 60, email: 500, knownAddress: false }, "email-and-address"],
  ] as const)("%j: %s", (attempts, verdict) => {
    const d = decideLoginAttempt(attempts, limits);
    expect(d.ok ? "ok" : d.refusal).toBe(verdict);
  });
});
