/** Second factors (lib/domain/accounts/second-factors.ts) and organization policies (lib/domain/orgs/policies.ts), as tables. */
import {
  decideEnrolOnly,
  decideFactorEnrolment,
  decidePasswordProof,
  decideSetupUse,
  decideFactorRemoval,
  decideDailySecondSteps,
  decideStepTry,
  decideTotpStep,
  decideRecoveryCodes,
  formatRecoveryCode,
  hashRecoveryCode,
  MAX_STEP_TRIES,
  MAX_WEBAUTHN_FACTORS,
  normalizeRecoveryCode,
  planKeyEnrolment,
  planTotpEnrolment,
  setupUseKey,
  type FactorKind,
} from "../../../../../lib/domain/accounts/second-factors";
import type { UserId } from "../../../../../lib/domain/ids";
import {
  badFactorName,
  credentialEnrolledAlready,
  factorNotConfirmed,
  factorSetupUsed,
  lastFactorRequired,
  passwordProofGivenTwice,
  passwordProofRequired,
  tooManyFactors,
  totpAlreadyEnrolled,
} from "../../../../../lib/domain/accounts/refusals";
import { badPolicy, inviteOutlivesPolicy, kdfBelowPolicy } from "../../../../../lib/domain/orgs/refusals";
import type { AppError } from "../../../../../lib/errors";
import {
  decideInviteLifetimeCap,
  decideKdfAgainstPolicy,
  decidePolicies,
  DEFAULT_POLICIES,
  type OrgPolicies,
} from "../../../../../lib/domain/orgs/policies";
import type { Kdf } from "../../../../../lib/domain/types";
import { asRefusal, code, outcomeOf } from "../../../../helpers/refusal";

const kinds = (...k: FactorKind[]) => k.map((kind) => ({ kind }));
/** A row's expected outcome in `outcomeOf`'s terms: "ok", or the named refusal. */
const named = (expected: "ok" | AppError) => (expected === "ok" ? "ok" : asRefusal(expected));

test.each<[string, FactorKind[], FactorKind, "ok" | AppError]>([
  ["a first app", [], "totp", "ok"],
  ["a second app", ["totp"], "totp", totpAlreadyEnrolled()],
  ["a key beside an app", ["totp"], "webauthn", "ok"],
  ["the tenth key", Array(MAX_WEBAUTHN_FACTORS - 1).fill("webauthn"), "webauthn", "ok"],
  ["an eleventh key", Array(MAX_WEBAUTHN_FACTORS).fill("webauthn"), "webauthn", tooManyFactors(MAX_WEBAUTHN_FACTORS)],
])("enrolment: %s", (_what, existing, kind, expected) => {
  expect(outcomeOf(() => decideFactorEnrolment(kinds(...existing), kind))).toEqual(named(expected));
});

const keyWith = (credentialId: string) => ({ kind: "webauthn" as const, credentialId });

test.each<[string, { kind: FactorKind; credentialId?: string }[], string, "ok" | AppError]>([
  ["a first key", [], "k1", "ok"],
  ["another key beside one", [keyWith("k1")], "k2", "ok"],
  ["the same key again", [keyWith("k1")], "k1", credentialEnrolledAlready()],
  ["the same key among others and an app", [{ kind: "totp" }, keyWith("k0"), keyWith("k1")], "k1", credentialEnrolledAlready()],
  // Checked before the count: a full account told the key is there already, not that it is full.
  [
    "the same key on a full account",
    Array.from({ length: MAX_WEBAUTHN_FACTORS }, (_, i) => keyWith(`k${i}`)),
    "k3",
    credentialEnrolledAlready(),
  ],
])("a security key by its credential id: %s", (_what, existing, credentialId, expected) => {
  expect(outcomeOf(() => decideFactorEnrolment(existing, "webauthn", credentialId))).toEqual(named(expected));
});

const proof = Buffer.alloc(32, 1).toString("base64");

test.each<[string, Parameters<typeof decidePasswordProof>[0], string | AppError]>([
  ["currentAuthHash, as the password change names it", { currentAuthHash: proof }, proof],
  ["authHash, as earlier clients send it", { authHash: proof }, proof],
  ["none: the named refusal, in every session (one that may only enrol too)", {}, passwordProofRequired()],
  ["null, as the parameter rules let an optional field be: none", { currentAuthHash: null, authHash: null }, passwordProofRequired()],
  ["one name null, the other given", { currentAuthHash: null, authHash: proof }, proof],
  ["both names at once", { currentAuthHash: proof, authHash: proof }, passwordProofGivenTwice()],
])("a factor change's password proof: %s", (_what, given, expected) => {
  let found: string | undefined;
  const outcome = outcomeOf(() => (found = decidePasswordProof(given)));
  expect(outcome === "ok" ? found : outcome).toEqual(typeof expected === "string" ? expected : asRefusal(expected));
});

test.each<[number, "ok" | AppError]>([
  [1, "ok"],
  [2, factorSetupUsed()],
  [3, factorSetupUsed()],
])("a setup used the %i. time", (uses, expected) => {
  expect(outcomeOf(() => decideSetupUse(uses))).toEqual(named(expected));
});

test("a setup's use is counted under a hash of what it sealed, never the secret itself, and apart by kind", () => {
  const k = setupUseKey("totp", "JBSWY3DPEHPK3PXP");
  expect(k).not.toContain("JBSWY3DPEHPK3PXP");
  expect(k).toBe(setupUseKey("totp", "JBSWY3DPEHPK3PXP"));
  expect(k).not.toBe(setupUseKey("webauthn", "JBSWY3DPEHPK3PXP"));
  expect(k).not.toBe(setupUseKey("totp", "JBSWY3DPEHPK3PXQ"));
});

const me = "u-bob" as UserId;
const totpSetup = { userId: me, secret: "JBSWY3DPEHPK3PXP" };

test.each<[string, Parameters<typeof planTotpEnrolment>[0], string, ReturnType<typeof outcomeOf>]>([
  ["the caller's setup and a code that matched", { userId: me, setup: totpSetup, matchedStep: 100 }, "Phone", "ok"],
  ["a code that matched no step", { userId: me, setup: totpSetup, matchedStep: null }, "Phone", asRefusal(factorNotConfirmed("code"))],
  [
    "another account's setup",
    { userId: "u-ann" as UserId, setup: totpSetup, matchedStep: 100 },
    "Phone",
    asRefusal(factorNotConfirmed("setupToken")),
  ],
  [
    "a setup not sealed here, or expired",
    { userId: me, setup: null, matchedStep: null },
    "Phone",
    asRefusal(factorNotConfirmed("setupToken")),
  ],
  ["a name that does not print", { userId: me, setup: totpSetup, matchedStep: 100 }, "\u202e", asRefusal(badFactorName())],
  // The order: the name, then the setup, then the code.
  ["a bad name, no setup and no code", { userId: me, setup: null, matchedStep: null }, "", asRefusal(badFactorName())],
  [
    "another account's setup, no code",
    { userId: "u-ann" as UserId, setup: totpSetup, matchedStep: null },
    "Phone",
    asRefusal(factorNotConfirmed("setupToken")),
  ],
])("authenticator app enrolment: %s", (_what, found, name, expected) => {
  expect(outcomeOf(() => planTotpEnrolment(found, name))).toEqual(expected);
});

test("an authenticator app is stored with its name trimmed, its secret, and the step its code used", () => {
  expect(planTotpEnrolment({ userId: me, setup: totpSetup, matchedStep: 100 }, " Phone ")).toEqual({
    name: "Phone",
    secret: totpSetup.secret,
    lastStep: 100,
  });
});

const keySetup = { userId: me, challenge: "c" };
const key = { credentialId: "k", publicKey: "p", counter: 0 };

test.each<[string, Parameters<typeof planKeyEnrolment>[0], string, ReturnType<typeof outcomeOf>]>([
  ["the caller's setup and a key that signed it", { userId: me, setup: keySetup, key }, "YubiKey", "ok"],
  ["a key whose answer did not verify", { userId: me, setup: keySetup, key: null }, "YubiKey", asRefusal(factorNotConfirmed("response"))],
  ["another account's setup", { userId: "u-ann" as UserId, setup: keySetup, key }, "YubiKey", asRefusal(factorNotConfirmed("setupToken"))],
  ["a setup not sealed here, or expired", { userId: me, setup: null, key: null }, "YubiKey", asRefusal(factorNotConfirmed("setupToken"))],
  ["a name that does not print", { userId: me, setup: keySetup, key }, "\u0007", asRefusal(badFactorName())],
  // The order: the name, then the setup, then the key's answer.
  ["a bad name and no setup", { userId: me, setup: null, key: null }, "", asRefusal(badFactorName())],
])("security key enrolment: %s", (_what, found, name, expected) => {
  expect(outcomeOf(() => planKeyEnrolment(found, name))).toEqual(expected);
});

test("new recovery codes need a factor", () => {
  expect(outcomeOf(() => decideRecoveryCodes(1))).toBe("ok");
  expect(outcomeOf(() => decideRecoveryCodes(0))).toEqual(asRefusal(factorNotConfirmed("factors")));
});

test.each<[string, number, boolean, "ok" | AppError]>([
  ["one left, required", 1, true, "ok"],
  ["none left, not required", 0, false, "ok"],
  ["none left, required", 0, true, lastFactorRequired()],
])("removal: %s", (_what, left, required, expected) => {
  expect(outcomeOf(() => decideFactorRemoval(left, required))).toEqual(named(expected));
});

test.each<[boolean, number, boolean]>([
  [true, 0, true],
  [true, 1, false],
  [false, 0, false],
])("required %s with %i factors: enrol only %s", (required, count, expected) => {
  expect(decideEnrolOnly(required, count)).toBe(expected);
});

test.each<[string, number | null, number | undefined, string]>([
  ["no match", null, undefined, "UNAUTHORIZED"],
  ["a first code", 100, undefined, "ok"],
  ["a later step", 101, 100, "ok"],
  ["the same step again (a replay)", 100, 100, "UNAUTHORIZED"],
  ["an earlier step", 99, 100, "UNAUTHORIZED"],
])("TOTP step: %s", (_what, matched, last, expected) => {
  expect(code(() => void decideTotpStep(matched, last))).toBe(expected);
});

test("a step token's tries", () => {
  expect(code(() => decideStepTry(MAX_STEP_TRIES))).toBe("ok");
  expect(code(() => decideStepTry(MAX_STEP_TRIES + 1))).toBe("UNAUTHORIZED");
});

test("recovery codes: 80 bits in Crockford's base32, typed loosely, stored hashed", () => {
  const c = formatRecoveryCode(new Uint8Array(16).fill(255));
  expect(c).toBe("ZZZZ-ZZZZ-ZZZZ-ZZZZ");
  expect(formatRecoveryCode(Uint8Array.from({ length: 16 }, (_, i) => i))).toBe("0123-4567-89AB-CDEF");
  expect(normalizeRecoveryCode(" abcd-efgh-ijkl-mnop ")).toBe("ABCDEFGH1JK1MN0P");
  expect(hashRecoveryCode("0123-4567-89ab-cdef")).toBe(hashRecoveryCode("012345678 9ABCDEF"));
  expect(hashRecoveryCode("0123-4567-89AB-CDEF")).not.toBe(hashRecoveryCode("0123-4567-89AB-CDEE"));
});

const policies = (p: Partial<OrgPolicies>): OrgPolicies => ({ ...DEFAULT_POLICIES, ...p });

test.each<[string, Partial<OrgPolicies>, "ok" | AppError]>([
  ["the defaults", {}, "ok"],
  ["a KDF floor above the server's", { minKdf: { argon2idMemoryKiB: 65536, argon2idIterations: 3, pbkdf2Iterations: 900_000 } }, "ok"],
  [
    "a KDF floor below the server's",
    { minKdf: { argon2idMemoryKiB: 1024, argon2idIterations: 3, pbkdf2Iterations: 900_000 } },
    badPolicy("minKdf.argon2idMemoryKiB"),
  ],
  [
    "a KDF floor of one argon2id pass",
    { minKdf: { argon2idMemoryKiB: 65536, argon2idIterations: 1, pbkdf2Iterations: 900_000 } },
    badPolicy("minKdf.argon2idIterations"),
  ],
  [
    "a PBKDF2 floor below the server's",
    { minKdf: { argon2idMemoryKiB: 65536, argon2idIterations: 3, pbkdf2Iterations: 1_000 } },
    badPolicy("minKdf.pbkdf2Iterations"),
  ],
  ["an invite lifetime of 48h", { inviteMaxLifetime: "48h" }, "ok"],
  ["an invite lifetime beyond 30d", { inviteMaxLifetime: "31d" }, badPolicy("inviteMaxLifetime")],
  ["an invite lifetime that is no duration", { inviteMaxLifetime: "soon" }, badPolicy("inviteMaxLifetime")],
  ["recovery by one trustee", { recoveryMinThreshold: 1 }, badPolicy("recoveryMinThreshold")],
  ["a password score of 5", { client: { minPasswordScore: 5 } }, badPolicy("client.minPasswordScore")],
  ["an idle lock of a minute", { client: { minPasswordScore: 0, idleLockMinutes: 1 } }, "ok"],
  ["an idle lock of no minutes", { client: { minPasswordScore: 0, idleLockMinutes: 0 } }, badPolicy("client.idleLockMinutes")],
])("policies: %s", (_what, p, expected) => {
  expect(outcomeOf(() => decidePolicies(policies(p)))).toEqual(named(expected));
});

const argon = (memoryKiB: number, iterations: number): Kdf => ({ algorithm: "argon2id", salt: "", memoryKiB, iterations, parallelism: 4 });
const pbkdf2 = (iterations: number): Kdf => ({ algorithm: "pbkdf2-sha256", salt: "", iterations });
const floor = policies({ minKdf: { argon2idMemoryKiB: 65536, argon2idIterations: 3, pbkdf2Iterations: 900_000 } });

test.each<[string, Kdf, OrgPolicies, "ok" | AppError]>([
  ["no floor set", pbkdf2(600_000), DEFAULT_POLICIES, "ok"],
  ["argon2id at the floor", argon(65536, 3), floor, "ok"],
  ["argon2id with less memory", argon(32768, 3), floor, kdfBelowPolicy(floor.minKdf!)],
  ["argon2id with fewer passes", argon(65536, 2), floor, kdfBelowPolicy(floor.minKdf!)],
  ["pbkdf2 below", pbkdf2(600_000), floor, kdfBelowPolicy(floor.minKdf!)],
  ["pbkdf2 at", pbkdf2(900_000), floor, "ok"],
])("a new password's KDF: %s", (_what, kdf, p, expected) => {
  expect(outcomeOf(() => decideKdfAgainstPolicy(kdf, p))).toEqual(named(expected));
});

test("an invite's lifetime under a cap: asked beyond it refused, the default cut to it", () => {
  const capped = policies({ inviteMaxLifetime: "48h" });
  const h = 3_600_000;
  expect(decideInviteLifetimeCap(24 * h, true, capped)).toBe(24 * h);
  expect(outcomeOf(() => decideInviteLifetimeCap(72 * h, true, capped))).toEqual(asRefusal(inviteOutlivesPolicy("48h")));
  expect(decideInviteLifetimeCap(72 * h, false, capped)).toBe(48 * h);
  expect(decideInviteLifetimeCap(72 * h, true, DEFAULT_POLICIES)).toBe(72 * h);
});

test("second-step guesses per day from unknown addresses: three windows' worth", () => {
  expect(decideDailySecondSteps(30, 10)).toBe(true);
  expect(decideDailySecondSteps(31, 10)).toBe(false);
});
