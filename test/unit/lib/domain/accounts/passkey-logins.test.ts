/** The rules of passkeys that sign in (lib/domain/accounts/passkey-logins.ts): registration, sign-in, the re-wraps a change must carry, the policy. */
import {
  decidePasskeyEnrolment,
  decidePasskeyName,
  decidePasskeyRewraps,
  decidePasswordSignIn,
  MAX_PASSKEY_LOGINS,
  planPasskeyEnrolment,
  planPasskeySignIn,
  type PasskeyLogin,
  type PasskeyRewrap,
} from "../../../../../lib/domain/accounts/passkey-logins";
import {
  badPasskeyName,
  passkeyEnrolledAlready,
  passkeyNotConfirmed,
  passkeyRequired,
  passkeysChanged,
  passkeySignInFailed,
  passkeysForbidden,
  passkeyUnlockNamedTwice,
  staleAccountVersion,
  tooManyPasskeys,
} from "../../../../../lib/domain/accounts/refusals";
import type { UserId } from "../../../../../lib/domain/ids";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const ada = "00000000-0000-4000-8000-00000000000a" as UserId;
const bob = "00000000-0000-4000-8000-00000000000b" as UserId;
const unlock = { prfWrappedKey: "p", wrappedStretchedKey: "s", keptWrappedKey: "k" };
const login = (credentialId: string, withUnlock = true): PasskeyLogin => ({
  credentialId,
  userId: ada,
  name: credentialId,
  publicKey: "pk",
  counter: 3,
  createdAt: "2026-11-29T12:00:00.000Z",
  ...(withUnlock && { unlock }),
});
const rewrap = (credentialId: string): PasskeyRewrap => ({ credentialId, wrappedStretchedKey: "s2", keptWrappedKey: "k2" });
const key = { credentialId: "c1", publicKey: "pk", counter: 0 };
const enrolment = { userId: ada, policy: "allowed" as const, setup: { userId: ada }, key };

const row = (name: string, fn: () => unknown, expected: AppError | "ok"): [string, () => unknown, AppError | "ok"] => [name, fn, expected];

test.each([
  row("a registration with its setup and verified answer", () => planPasskeyEnrolment(enrolment, " Laptop "), "ok"),
  row(
    "forbidden by the organization, before anything else",
    () => planPasskeyEnrolment({ ...enrolment, policy: "forbidden", setup: null }, ""),
    passkeysForbidden(),
  ),
  row(
    "required by the organization: registering is what it asks",
    () => planPasskeyEnrolment({ ...enrolment, policy: "required" }, "Laptop"),
    "ok",
  ),
  row("an empty name", () => planPasskeyEnrolment(enrolment, "   "), badPasskeyName()),
  row("a name with a control character", () => decidePasskeyName("Lap\u0007top"), badPasskeyName()),
  row("a name of 65 characters", () => decidePasskeyName("x".repeat(65)), badPasskeyName()),
  row(
    "no setup (forged or expired)",
    () => planPasskeyEnrolment({ ...enrolment, setup: null }, "Laptop"),
    passkeyNotConfirmed("setupToken"),
  ),
  row(
    "another account's setup",
    () => planPasskeyEnrolment({ ...enrolment, setup: { userId: bob } }, "Laptop"),
    passkeyNotConfirmed("setupToken"),
  ),
  row(
    "an answer that did not verify (no user verification among the reasons)",
    () => planPasskeyEnrolment({ ...enrolment, key: null }, "Laptop"),
    passkeyNotConfirmed("response"),
  ),
  row("under the lock: a new credential", () => decidePasskeyEnrolment([login("a")], "c1", { accountVersion: 2 }, 2), "ok"),
  row(
    "under the lock: one without an unlock states no version",
    () => decidePasskeyEnrolment([], "c1", { accountVersion: 2 }, undefined),
    "ok",
  ),
  row(
    "under the lock: a credential registered already",
    () => decidePasskeyEnrolment([login("c1")], "c1", { accountVersion: 2 }, 2),
    passkeyEnrolledAlready(),
  ),
  row(
    "under the lock: the cap",
    () =>
      decidePasskeyEnrolment(
        Array.from({ length: MAX_PASSKEY_LOGINS }, (_, i) => login(`p${i}`)),
        "c1",
        { accountVersion: 2 },
        2,
      ),
    tooManyPasskeys(MAX_PASSKEY_LOGINS),
  ),
  row(
    "under the lock: an unlock wrapped before a password change came in",
    () => decidePasskeyEnrolment([], "c1", { accountVersion: 3 }, 2),
    staleAccountVersion(3, 2),
  ),
])("registration: %s", (_, fn, expected) => {
  expect(outcomeOf(fn)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test.each([
  row(
    "every passkey that unlocks, re-wrapped",
    () => decidePasskeyRewraps([login("a"), login("b"), login("c", false)], [rewrap("b"), rewrap("a")]),
    "ok",
  ),
  row("none to re-wrap, none given (a client from before passkeys)", () => decidePasskeyRewraps([login("c", false)], []), "ok"),
  row("one left out", () => decidePasskeyRewraps([login("a"), login("b")], [rewrap("a")]), passkeysChanged(1, 0)),
  row("none given while one unlocks", () => decidePasskeyRewraps([login("a")], []), passkeysChanged(1, 0)),
  row(
    "one that keeps no unlock",
    () => decidePasskeyRewraps([login("a"), login("c", false)], [rewrap("a"), rewrap("c")]),
    passkeysChanged(0, 1),
  ),
  row("one that is not the account's", () => decidePasskeyRewraps([login("a")], [rewrap("a"), rewrap("z")]), passkeysChanged(0, 1)),
  row("one named twice", () => decidePasskeyRewraps([login("a")], [rewrap("a"), rewrap("a")]), passkeyUnlockNamedTwice()),
])("re-wraps in a password change or rotation: %s", (_, fn, expected) => {
  expect(outcomeOf(fn)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

const signIn = { login: login("a"), user: { userId: ada }, newCounter: 4, policy: "allowed" as const };
test.each([
  row("a verified answer of a known passkey", () => planPasskeySignIn(signIn), "ok"),
  row("required: the passkey is the way in", () => planPasskeySignIn({ ...signIn, policy: "required" }), "ok"),
  row("an unknown passkey", () => planPasskeySignIn({ ...signIn, login: null }), passkeySignInFailed()),
  row("its account gone", () => planPasskeySignIn({ ...signIn, user: null }), passkeySignInFailed()),
  row(
    "an answer that did not verify (signature, user verification, counter gone back)",
    () => planPasskeySignIn({ ...signIn, newCounter: null }),
    passkeySignInFailed(),
  ),
  row(
    "forbidden by the organization, once the answer verified",
    () => planPasskeySignIn({ ...signIn, policy: "forbidden" }),
    passkeysForbidden(),
  ),
  row(
    "forbidden, with an answer that does not verify: the same refusal as any",
    () => planPasskeySignIn({ ...signIn, newCounter: null, policy: "forbidden" }),
    passkeySignInFailed(),
  ),
  row("a password sign-in, passkeys allowed", () => decidePasswordSignIn("allowed", 2), "ok"),
  row("a password sign-in, passkeys required, the member has none (to register one)", () => decidePasswordSignIn("required", 0), "ok"),
  row("a password sign-in, passkeys required, the member has one", () => decidePasswordSignIn("required", 1), passkeyRequired()),
  row("a password sign-in, passkeys forbidden", () => decidePasswordSignIn("forbidden", 1), "ok"),
])("sign-in: %s", (_, fn, expected) => {
  expect(outcomeOf(fn)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test("a plan answers the trimmed name and the verified key", () => {
  expect(planPasskeyEnrolment(enrolment, " Laptop ")).toEqual({ name: "Laptop", key });
  expect(planPasskeySignIn(signIn)).toEqual({ login: signIn.login, user: signIn.user, newCounter: 4 });
});
