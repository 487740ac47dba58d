/**
 * Second factors: a TOTP authenticator (RFC 6238), WebAuthn security keys and passkeys,
 * and one-time recovery codes, asked for as a second step of login. The rules here are plain
 * functions with named refusals; the cryptographic checks are the libraries' (`otpauth`,
 * `@simplewebauthn/server`, in lib/auth/factor-checks.ts).
 *
 * A login of an account with a factor answers a second step whether or not the password was right
 * (lib/auth/login-step.ts): only a right password *and* a right code sign in, and a wrong one of
 * either answers the same `wrongPasswordOrCode`. So the second step is never an oracle for the
 * password, and both steps count against the login limits (lib/domain/accounts/login-limits.ts).
 */
import { createHash } from "node:crypto";
import type { UserId } from "../ids";
import { deviceNameProblem } from "../../../protocol/names";
import { CROCKFORD, normalizeRecoveryCode } from "../../../protocol/formats/recovery";
import {
  badFactorName,
  credentialEnrolledAlready,
  factorNotConfirmed,
  factorSetupUsed,
  lastFactorRequired,
  passwordProofGivenTwice,
  passwordProofRequired,
  totpAlreadyEnrolled,
  tooManyFactors,
  tooManyStepTries,
  wrongPasswordOrCode,
} from "./refusals";

export type FactorKind = "totp" | "webauthn";

export interface SecondFactor {
  factorId: string;
  userId: UserId;
  kind: FactorKind;
  /** What the user called it ("Phone", "YubiKey 5C"). */
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  /** TOTP: the secret (base32), sealed under the server's seal key (lib/auth/sealed.ts). */
  sealedSecret?: string;
  /** TOTP: the last time step a code was accepted for; a code of that step or an earlier one is a replay. */
  lastStep?: number;
  /** WebAuthn: the credential's id (base64url), public key (COSE, base64url), signature counter and transports. */
  credentialId?: string;
  publicKey?: string;
  counter?: number;
  transports?: string[];
}

/** One TOTP authenticator per account (a new phone replaces it); security keys and passkeys up to this many. */
export const MAX_WEBAUTHN_FACTORS = 10;
/** Recovery codes made at once; each signs in once. */
export const RECOVERY_CODE_COUNT = 10;
/** A pending second step (and a setup) lasts this long. */
export const SECOND_STEP_TTL_MS = 5 * 60_000;
/** Codes tried against one pending second step, at most (then the login starts again). */
export const MAX_STEP_TRIES = 5;
/** TOTP codes of the step before and after the current one are accepted (clock drift). */
export const TOTP_WINDOW = 1;
export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;

/** The name a factor is enrolled with: the device-name rule (protocol/names.ts). */
export function decideFactorName(raw: string): string {
  const name = raw.normalize("NFC").trim();
  if (deviceNameProblem(name) !== undefined) throw badFactorName();
  return name;
}

/**
 * Whether the account may enrol one more factor of `kind`: one authenticator app, up to
 * MAX_WEBAUTHN_FACTORS keys, and a key (by its credential id, when known) once.
 */
export function decideFactorEnrolment(
  existing: readonly Pick<SecondFactor, "kind" | "credentialId">[],
  kind: FactorKind,
  credentialId?: string,
): void {
  if (kind === "totp" && existing.some((f) => f.kind === "totp")) throw totpAlreadyEnrolled();
  if (credentialId !== undefined && existing.some((f) => f.credentialId === credentialId)) throw credentialEnrolledAlready();
  if (kind === "webauthn" && existing.filter((f) => f.kind === "webauthn").length >= MAX_WEBAUTHN_FACTORS) {
    throw tooManyFactors(MAX_WEBAUTHN_FACTORS);
  }
}

/**
 * The master password's proof a factor change carries (enrolling, removing, new recovery codes),
 * in every session, one that may only enrol included: a stolen access token must not bind the
 * thief's factor, nor read recovery codes. Named `currentAuthHash`, as the password change names
 * it; `authHash` is the name earlier clients send. Answers the proof, to be compared.
 */
export function decidePasswordProof(given: { currentAuthHash?: string | null; authHash?: string | null }): string {
  // Null is absent, as the parameter rules let an optional field be.
  const named = [given.currentAuthHash, given.authHash].filter((v): v is string => typeof v === "string");
  if (named.length > 1) throw passwordProofGivenTwice();
  if (named.length === 0) throw passwordProofRequired();
  return named[0]!;
}

/** A setup enrols once: `uses` counts the enrolments that got this far with it (this one included). */
export function decideSetupUse(uses: number): void {
  if (uses !== 1) throw factorSetupUsed();
}

/** The name a setup's use is counted under: a hash of what it sealed (its secret, or its challenge), never the secret itself. */
export function setupUseKey(kind: FactorKind, sealed: string): string {
  return `factor-setup:${createHash("sha256").update(`factor-setup-v1\0${kind}\0${sealed}`).digest("base64url")}`;
}

/** A factor's setup as the server sealed it between the two calls (null: not sealed by it, or expired). */
export type FactorSetup<T> = (T & { userId: string }) | null;

/** A setup is the caller's own: one sealed for another account, or none, does not confirm. */
function ownSetup<T>(setup: FactorSetup<T>, userId: UserId): T & { userId: string } {
  if (!setup || setup.userId !== userId) throw factorNotConfirmed("setupToken");
  return setup;
}

/**
 * Enrolling an authenticator app, in this order: its name; the setup, the caller's own; the code
 * from the app (`matchedStep`: the step it matched in the window, null for none). Answers what the
 * factor stores: its name, the secret (still to be sealed), and the step the code used, so that the
 * code that confirmed it cannot sign in afterwards.
 */
export function planTotpEnrolment(
  found: { userId: UserId; setup: FactorSetup<{ secret: string }>; matchedStep: number | null },
  rawName: string,
): { name: string; secret: string; lastStep: number } {
  const name = decideFactorName(rawName);
  const { secret } = ownSetup(found.setup, found.userId);
  if (found.matchedStep === null) throw factorNotConfirmed("code");
  return { name, secret, lastStep: found.matchedStep };
}

/**
 * Enrolling a security key or passkey, in this order: its name; the setup, the caller's own; the
 * key's signature over the setup's challenge, for this relying party and origin (`key`: what the
 * check verified, null when it failed). Answers the name and the key to store.
 */
export function planKeyEnrolment<K>(
  found: { userId: UserId; setup: FactorSetup<unknown>; key: K | null },
  rawName: string,
): { name: string; key: K } {
  const name = decideFactorName(rawName);
  ownSetup(found.setup, found.userId);
  if (found.key === null) throw factorNotConfirmed("response");
  return { name, key: found.key };
}

/** New recovery codes are made for an account with a factor (they are its way back when one is lost). */
export function decideRecoveryCodes(factorCount: number): void {
  if (factorCount === 0) throw factorNotConfirmed("factors");
}

/** Removing a factor: refused when it is the last and the organization requires one. */
export function decideFactorRemoval(remainingAfter: number, policyRequires: boolean): void {
  if (remainingAfter === 0 && policyRequires) throw lastFactorRequired();
}

/**
 * Whether a login may only enrol a factor: the organization requires one and the account has none.
 * Such a login's tokens reach only the routes that enrol (`enrolOnly` in lib/http/routes/).
 */
export function decideEnrolOnly(policyRequires: boolean, factorCount: number): boolean {
  return policyRequires && factorCount === 0;
}

/**
 * A TOTP code against the step it matched (`null`: it matched none in the window) and the last
 * step accepted: a step at or before the last is a replay. Both answer `wrongPasswordOrCode`.
 */
export function decideTotpStep(matchedStep: number | null, lastStep: number | undefined): number {
  if (matchedStep === null) throw wrongPasswordOrCode();
  if (lastStep !== undefined && matchedStep <= lastStep) throw wrongPasswordOrCode();
  return matchedStep;
}

/** The window of the second step's daily count (per account, from addresses it never signed in from). */
export const SECOND_STEP_DAY_MS = 86_400_000;
/** Second-step guesses per account per day from unknown addresses: three windows' worth of LOGIN_MAX_FAILURES. */
export const SECOND_STEP_DAILY_WINDOWS = 3;
export const SECOND_STEP_DAY_REFUSAL =
  "Too many wrong second-factor codes for this account today; try again later, or from a place you signed in from before";

/**
 * Whether a second step from an address the account never signed in from may be compared: at most
 * SECOND_STEP_DAILY_WINDOWS x LOGIN_MAX_FAILURES a day (about 30 guesses, so a guesser with the
 * password needs years for a 6-digit code); the owner's known addresses go on past it.
 */
export function decideDailySecondSteps(count: number, loginMaxFailures: number): boolean {
  return count <= SECOND_STEP_DAILY_WINDOWS * loginMaxFailures;
}

/** A pending second step tried `tries` times (this one included). */
export function decideStepTry(tries: number): void {
  if (tries > MAX_STEP_TRIES) throw tooManyStepTries();
}

/** A recovery code as typed (protocol/formats/recovery.ts): case, spaces and dashes do not matter, nor I, L for 1 or O for 0. */
export { normalizeRecoveryCode };

/** The stored form of a recovery code (codes are 80 random bits: a plain hash suffices). */
export function hashRecoveryCode(raw: string): string {
  return createHash("sha256")
    .update(`recovery-code-v1\0${normalizeRecoveryCode(raw)}`)
    .digest("base64url");
}

/** A new recovery code from 16 random bytes: 16 characters of Crockford's base32 (80 bits), in groups of four. */
export function formatRecoveryCode(random: Uint8Array): string {
  let out = "";
  // Crockford's base32 (32 letters, 5 bits each: no bias).
  for (let i = 0; i < 16; i++) out += CROCKFORD[random[i]! & 31];
  return out.match(/.{4}/g)!.join("-");
}
