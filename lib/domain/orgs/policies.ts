/**
 * Organization policies, set by the organization's owners. The server enforces what it
 * can see: a second factor required (a member without one can only enrol, lib/domain/accounts/second-factors.ts
 * `decideEnrolOnly`), the least KDF cost of a new master password (checked at registration by invite,
 * password change and account recovery), the longest invite lifetime, and the fewest trustees an
 * account recovery may need. The `client` rules (password strength, idle lock) only clients can
 * apply: they are stored and shown as such, never claimed as enforced.
 */
import { parseDuration } from "../duration";
import { MAX_INVITE_TTL_MS } from "./invites";
import { KDF_CAPS } from "../../../protocol/crypto/kdf";
import { badPolicy, kdfBelowPolicy, inviteOutlivesPolicy } from "./refusals";
import type { Kdf } from "../types";
import { MIN_SEND_LIFETIME_MS, type SendPolicy } from "../sends/decisions";

export interface MinKdf {
  argon2idMemoryKiB: number;
  argon2idIterations: number;
  pbkdf2Iterations: number;
}

/** Signing in with a passkey (lib/domain/accounts/passkey-logins.ts): allowed, forbidden, or required of a member who has one. */
export type PasskeySignInPolicy = "allowed" | "forbidden" | "required";
export const PASSKEY_SIGN_IN_POLICIES: readonly PasskeySignInPolicy[] = ["allowed", "forbidden", "required"];

export interface OrgPolicies {
  requireSecondFactor: boolean;
  /** Absent: allowed. */
  passkeySignIn?: PasskeySignInPolicy;
  /** The least cost of a new master password's KDF; absent: the server's floor. */
  minKdf?: MinKdf;
  /** The longest lifetime of a new invite (a duration, like "72h"); absent: the server's 30d. */
  inviteMaxLifetime?: string;
  /** Sends forbidden: no member makes one, and the links of those made before open nothing more. */
  sendsForbidden?: boolean;
  /** The longest lifetime of a new send (a duration, like "3d"); absent: the server's SEND_MAX_LIFETIME. */
  sendMaxLifetime?: string;
  /** The fewest trustees an account recovery may need (k), 2 to MAX_RECOVERY_TRUSTEES. */
  recoveryMinThreshold: number;
  /** Rules only clients apply. */
  client: { minPasswordScore: number; idleLockMinutes?: number };
}

/** The organization's passkey sign-in policy, "allowed" when it set none. */
export const passkeySignInOf = (p: OrgPolicies | null): PasskeySignInPolicy => p?.passkeySignIn ?? "allowed";

/** The floor every KDF meets anyway (lib/domain/accounts/keys.ts `checkKdf`). */
export const KDF_FLOOR: MinKdf = { argon2idMemoryKiB: 19_456, argon2idIterations: 2, pbkdf2Iterations: 600_000 };
/** Trustees of one recovery enrolment, at most. */
export const MAX_RECOVERY_TRUSTEES = 10;

/** What an organization that set nothing has. */
export const DEFAULT_POLICIES: OrgPolicies = { requireSecondFactor: false, recoveryMinThreshold: 2, client: { minPasswordScore: 0 } };

const within = (v: unknown, min: number, max: number): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max;

/** Policies as an owner sets them (the route validated their shape): each value within its bounds. */
export function decidePolicies(p: OrgPolicies): OrgPolicies {
  if (p.minKdf) {
    const m = p.minKdf;
    if (!within(m.argon2idMemoryKiB, KDF_FLOOR.argon2idMemoryKiB, KDF_CAPS.argon2id.memoryKiB)) throw badPolicy("minKdf.argon2idMemoryKiB");
    if (!within(m.argon2idIterations, KDF_FLOOR.argon2idIterations, KDF_CAPS.argon2id.iterations))
      throw badPolicy("minKdf.argon2idIterations");
    if (!within(m.pbkdf2Iterations, KDF_FLOOR.pbkdf2Iterations, KDF_CAPS["pbkdf2-sha256"].iterations))
      throw badPolicy("minKdf.pbkdf2Iterations");
  }
  if (p.inviteMaxLifetime !== undefined) {
    const ms = parseDuration(p.inviteMaxLifetime);
    if (ms === null || ms > MAX_INVITE_TTL_MS) throw badPolicy("inviteMaxLifetime");
  }
  if (p.sendMaxLifetime !== undefined) {
    const ms = parseDuration(p.sendMaxLifetime);
    if (ms === null || ms < MIN_SEND_LIFETIME_MS) throw badPolicy("sendMaxLifetime");
  }
  if (!within(p.recoveryMinThreshold, 2, MAX_RECOVERY_TRUSTEES)) throw badPolicy("recoveryMinThreshold");
  if (!within(p.client.minPasswordScore, 0, 4)) throw badPolicy("client.minPasswordScore");
  if (p.client.idleLockMinutes !== undefined && !within(p.client.idleLockMinutes, 1, 24 * 60)) throw badPolicy("client.idleLockMinutes");
  return p;
}

/** A new master password's KDF against the organization's least cost. */
export function decideKdfAgainstPolicy(kdf: Kdf, policies: OrgPolicies): void {
  const m = policies.minKdf;
  if (!m) return;
  const ok =
    kdf.algorithm === "argon2id"
      ? kdf.memoryKiB >= m.argon2idMemoryKiB && kdf.iterations >= m.argon2idIterations
      : kdf.iterations >= m.pbkdf2Iterations;
  if (!ok) throw kdfBelowPolicy(m);
}

/**
 * A new invite's lifetime against the organization's cap: one asked for beyond it is refused; the
 * server's default, when it is longer, gives way to the cap.
 */
export function decideInviteLifetimeCap(ttlMs: number, asked: boolean, policies: OrgPolicies): number {
  const cap = policies.inviteMaxLifetime === undefined ? null : parseDuration(policies.inviteMaxLifetime);
  if (cap === null || ttlMs <= cap) return ttlMs;
  if (asked) throw inviteOutlivesPolicy(policies.inviteMaxLifetime!);
  return cap;
}

/** What the organization's policies say of sends. */
export function sendPolicyOf(p: OrgPolicies | null): SendPolicy {
  const cap = p?.sendMaxLifetime === undefined ? null : parseDuration(p.sendMaxLifetime);
  return { forbidden: p?.sendsForbidden === true, maxLifetimeMs: cap };
}

/**
 * The send policies an owner sets: each left out is kept as it is (a client from before them never
 * relaxes them by changing another policy); a null lifetime clears its cap.
 */
export function nextSendPolicies(
  given: { sendsForbidden?: boolean; sendMaxLifetime?: string | null },
  current: OrgPolicies | null,
): Pick<OrgPolicies, "sendsForbidden" | "sendMaxLifetime"> {
  const forbidden = given.sendsForbidden ?? current?.sendsForbidden ?? false;
  const lifetime = given.sendMaxLifetime === null ? undefined : (given.sendMaxLifetime ?? current?.sendMaxLifetime);
  return { ...(forbidden && { sendsForbidden: true }), ...(lifetime !== undefined && { sendMaxLifetime: lifetime }) };
}
