/**
 * Passkeys that sign in to the account (not the passkeys kept as items, nor security keys as a
 * second factor): a discoverable WebAuthn credential of the web vault's relying party, with user
 * verification, that stands for the email, the password and the second step together. With the PRF
 * extension, the client keeps three wraps with it (protocol/formats/passkey-unlock.ts) that open
 * the account's stretched key on the client: the server stores them, never opens them, and
 * requires that every password change and key rotation makes them again (`decidePasskeyRewraps`),
 * so that no passkey is left wrapping an account state that is gone.
 *
 * The organization's policy (`passkeySignIn`): `allowed` (the default); `forbidden` (none is
 * registered or signs in; the ones kept wait, unused); `required` (a member who registered one
 * signs in with it, not with the password; one who has none signs in with the password to register one).
 */
import type { UserId } from "../ids";
import type { PasskeySignInPolicy } from "../orgs/policies";
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
} from "./refusals";

/** Sign-in passkeys an account keeps, at most (a password change re-wraps them all in one request). */
export const MAX_PASSKEY_LOGINS = 10;

/** What the server keeps of a passkey's PRF unlock: three wraps it cannot open (protocol/formats/passkey-unlock.ts). */
export interface PasskeyUnlock {
  prfWrappedKey: string;
  wrappedStretchedKey: string;
  keptWrappedKey: string;
}

export interface PasskeyLogin {
  /** The credential id, base64url. */
  credentialId: string;
  userId: UserId;
  name: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports?: string[];
  createdAt: string;
  lastUsedAt?: string;
  /** Absent: the passkey signs in, and the master password unlocks. */
  unlock?: PasskeyUnlock;
}

/** A passkey's unlock made again by a password change or key rotation: the stretched key's wrap and the kept credential key. */
export interface PasskeyRewrap {
  credentialId: string;
  wrappedStretchedKey: string;
  keptWrappedKey: string;
}

/** A passkey's name: 1 to 64 printable characters, trimmed. */
export function decidePasskeyName(raw: string): string {
  const name = raw.trim();
  // eslint-disable-next-line no-control-regex
  if (name.length < 1 || name.length > 64 || /[\u0000-\u001f\u007f]/.test(name)) throw badPasskeyName();
  return name;
}

/** Registering a sign-in passkey under the organization's policy. */
export function decidePasskeyPolicy(policy: PasskeySignInPolicy): void {
  if (policy === "forbidden") throw passkeysForbidden();
}

/**
 * A registration, in this order: the policy; the name; the setup, sealed by this server for the
 * caller; the credential's signature over its challenge with user verification (`key`: what the
 * check verified, null when it failed).
 */
export function planPasskeyEnrolment<K>(
  found: { userId: UserId; policy: PasskeySignInPolicy; setup: { userId: string } | null; key: K | null },
  rawName: string,
): { name: string; key: K } {
  decidePasskeyPolicy(found.policy);
  const name = decidePasskeyName(rawName);
  if (!found.setup || found.setup.userId !== found.userId) throw passkeyNotConfirmed("setupToken");
  if (found.key === null) throw passkeyNotConfirmed("response");
  return { name, key: found.key };
}

/**
 * Under the account's lock: the cap, one credential once, and the unlock wrapped under the account
 * version it is now (a password change meanwhile would leave it wrapping a stretched key that is gone).
 */
export function decidePasskeyEnrolment(
  held: readonly Pick<PasskeyLogin, "credentialId">[],
  credentialId: string,
  account: { accountVersion: number },
  unlockVersion: number | undefined,
): void {
  if (held.some((h) => h.credentialId === credentialId)) throw passkeyEnrolledAlready();
  if (held.length >= MAX_PASSKEY_LOGINS) throw tooManyPasskeys(MAX_PASSKEY_LOGINS);
  if (unlockVersion !== undefined && unlockVersion !== account.accountVersion)
    throw staleAccountVersion(account.accountVersion, unlockVersion);
}

/**
 * Under the account's lock, in a password change or key rotation: the re-wraps name exactly the
 * account's passkeys that keep an unlock, each once. A passkey registered meanwhile counts as missing.
 */
export function decidePasskeyRewraps(held: readonly PasskeyLogin[], given: readonly PasskeyRewrap[]): void {
  if (new Set(given.map((g) => g.credentialId)).size !== given.length) throw passkeyUnlockNamedTwice();
  const unlocking = new Set(held.filter((h) => h.unlock).map((h) => h.credentialId));
  const missing = [...unlocking].filter((id) => !given.some((g) => g.credentialId === id)).length;
  const extra = given.filter((g) => !unlocking.has(g.credentialId)).length;
  if (missing > 0 || extra > 0) throw passkeysChanged(missing, extra);
}

/**
 * A passkey sign-in, once its assertion was checked: the passkey known and its signature right with
 * user verification and a counter that moved on (`newCounter`, null otherwise), and the account
 * there. Every such failure answers alike. Then the policy: forbidden, it signs in no more.
 */
export function planPasskeySignIn<U>(found: {
  login: PasskeyLogin | null;
  user: U | null;
  newCounter: number | null;
  policy: PasskeySignInPolicy;
}): { login: PasskeyLogin; user: U; newCounter: number } {
  const { login, user, newCounter } = found;
  if (!login || !user || newCounter === null) throw passkeySignInFailed();
  decidePasskeyPolicy(found.policy);
  return { login, user, newCounter };
}

/** A password sign-in (its first step, once the password was right): refused when the policy requires a passkey and the account has one. */
export function decidePasswordSignIn(policy: PasskeySignInPolicy, passkeyCount: number): void {
  if (policy === "required" && passkeyCount > 0) throw passkeyRequired();
}
