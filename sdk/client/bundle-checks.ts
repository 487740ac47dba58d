/**
 * What a served key bundle must be on its own and against this device's pins (trust.ts runs these
 * before a bundle's keys or email are used), and the refusal of a key that changed without a
 * signed step in the user's key log.
 */
import { normalizeEmail } from "../../protocol/email";
import { ApiError, SecurityError } from "../errors";
import { isCanonicalId } from "../../protocol/ids";
import { bundleSelfSignatureVerifies, groupedFingerprint, keyFingerprint } from "../../protocol/crypto/keys";
import type { Pin } from "../pins";
import { keyStatementBytes, statementVerifies } from "../../protocol/formats/statements";
import type { ServedBundle } from "./trust";
import type { VerifiedKeyEntry } from "../../protocol/formats/key-log";

/** Pins by user id, and which user id each pinned email belongs to: read once per check of a list. */
export interface PinIndex {
  byUser: Map<string, Pin>;
  userOfEmail: Map<string, string>;
}

/**
 * What a bundle must be on its own, before any pin is consulted: the user asked for, by an id in
 * the one form ids have (lower-case UUID), its Ed25519 key's signature over its RSA key, a
 * normalized email, and its key statement, when it has one, verifying over exactly this id, email
 * and these keys.
 */
export async function selfConsistent(
  bundle: ServedBundle,
  expectedUserId?: string,
): Promise<{ userId: string; email: string; keys: string; fingerprint: string }> {
  const userId = bundle?.userId;
  if (!isCanonicalId(userId) || (expectedUserId !== undefined && userId !== expectedUserId))
    throw new SecurityError(
      "INCONSISTENT",
      `asked for the keys of ${expectedUserId ?? "a user"}, got those of ${String(userId)}`,
      expectedUserId,
    );
  if (!(await bundleSelfSignatureVerifies(bundle)))
    throw new SecurityError("BAD_SIGNATURE", `the key bundle of ${bundle.email ?? userId} is not signed by its own signing key`, userId);
  const email = bundle.email;
  if (typeof email !== "string" || emailOrNull(email) !== email)
    throw new SecurityError("IDENTITY_MISMATCH", `the server gives user ${userId} an address that is not a normalized email`, userId);
  const keys = await keyFingerprint(bundle);
  const fingerprint = groupedFingerprint(keys);
  const statement = bundle.keyStatement;
  if (statement) {
    const bytes = keyStatementBytes({ userId, email, keys, version: statement.version });
    if (!(await statementVerifies(bytes, bundle.signingPublicKey, statement.signature))) {
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server pairs user ${userId}, ${email} and keys ${fingerprint} otherwise than the user's own signed key statement: it does not verify`,
        userId,
      );
    }
  }
  return { userId, email, keys, fingerprint };
}

/** A user's id, email and keys against what this device pinned: the same keys, the same email, a statement if one was seen, nobody else's email. */
export function checkAgainstPins(
  pins: PinIndex,
  user: { userId: string; email: string; fingerprint: string; stated: boolean },
  /** The user's pin, when it is not the kept one (followed through their key log). */
  pinned = pins.byUser.get(user.userId),
): void {
  const { userId, email, fingerprint } = user;
  if (pinned) {
    if (pinned.fingerprint !== fingerprint) throw keyChanged(userId, email, pinned.fingerprint, fingerprint);
    if (pinned.email !== undefined && pinned.email !== email)
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server shows ${email} for user ${userId}, whom this device pinned as ${pinned.email}`,
        userId,
      );
    if (pinned.stated && !user.stated)
      throw new SecurityError(
        "IDENTITY_MISMATCH",
        `the server withholds the signed key statement of ${email}, which this device saw before`,
        userId,
      );
  }
  const owner = pins.userOfEmail.get(email);
  if (owner !== undefined && owner !== userId)
    throw new SecurityError(
      "IDENTITY_MISMATCH",
      `the server shows ${email} for user ${userId}, but this device pinned ${email} as user ${owner}`,
      userId,
    );
}

export function keyChanged(userId: string, email: string, pinned: string, now: string): SecurityError {
  return new SecurityError(
    "KEY_CHANGED",
    `the keys of ${email} (user ${userId}) changed since first seen (pinned ${pinned}, now ${now}); check the new fingerprint with them, then trust it`,
    userId,
  );
}

/** The address normalized as the server does, or null for text that is no address we accept. */
export function emailOrNull(text: string): string | null {
  try {
    return normalizeEmail(text);
  } catch {
    return null;
  }
}

/** `Trust.followKeyLog`'s rule, on a log already verified on its own: the pin it leads to, or the refusal. */
export function followKeyLogFrom(
  log: readonly VerifiedKeyEntry[],
  { userId, email }: { userId: string; email: string },
  pin: Pin,
  shownKeys: string,
): Pin {
  if (pin.keyVersion !== undefined) {
    const at = log[pin.keyVersion - 1];
    if (!at)
      throw new SecurityError(
        "KEY_LOG_ROLLBACK",
        `the server shows the key log of ${email} up to version ${log.length}, but this device followed it to version ${pin.keyVersion}`,
        userId,
      );
    if (at.hash !== pin.keyHash)
      throw new SecurityError(
        "KEY_LOG_FORK",
        `the server shows another version ${pin.keyVersion} of the keys of ${email} than the one this device followed: a forked key history`,
        userId,
      );
  }
  const from = log.findIndex((e) => groupedFingerprint(e.keys) === pin.fingerprint);
  const to = log.findIndex((e) => e.keys === shownKeys);
  if (from >= 0 && to >= 0 && to < from)
    throw new SecurityError(
      "KEY_LOG_ROLLBACK",
      `the server shows keys of ${email} that their signed key log replaced (version ${to + 1}, this device follows version ${from + 1})`,
      userId,
    );
  if (from < 0 || to !== log.length - 1) throw keyChanged(userId, email, pin.fingerprint, groupedFingerprint(shownKeys));
  const last = log[to]!;
  return { ...pin, fingerprint: groupedFingerprint(last.keys), keyVersion: last.entry.version, keyHash: last.hash };
}

/** Where `keys` (hex) stand in a verified log: its last entry's version and hash (else the log is not the one answered with them: `KEY_LOG_BROKEN`). */
export function placeInLog(log: readonly VerifiedKeyEntry[], userId: string, keys: string): { keyVersion: number; keyHash: string } {
  const last = log[log.length - 1]!;
  if (last.keys !== keys)
    throw new SecurityError("KEY_LOG_BROKEN", `the key log answered for ${userId} does not end with the keys answered`, userId);
  return { keyVersion: last.entry.version, keyHash: last.hash };
}

/** How many users of a member list carry each email: one shown for two users is taken as neither's. */
export function emailCounts(members: ReadonlyArray<{ email?: unknown }>): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  for (const m of members) counts.set(m?.email, (counts.get(m?.email) ?? 0) + 1);
  return counts;
}

/**
 * A member list's entry before its pin is checked: refused when its email is listed twice; true for
 * the caller's own entry, which must carry the caller's email and keys; false for anyone else.
 */
export async function ownOrShared(
  m: ServedBundle,
  account: { userId: string; email: string },
  ownKeys: string,
  sameEmail: ReadonlyMap<unknown, number>,
): Promise<boolean> {
  if ((sameEmail.get(m?.email) ?? 0) > 1)
    throw new SecurityError(
      "IDENTITY_MISMATCH",
      `the server lists ${String(m?.email)} for more than one user of your organization`,
      m?.userId,
    );
  if (m.userId !== account.userId) return false;
  if (m.email !== account.email || (await keyFingerprint(m)) !== ownKeys)
    throw new SecurityError("IDENTITY_MISMATCH", `the server lists you under another email or other keys (${m.email})`, m.userId);
  return true;
}

/** The member a person names by email or id, or `404`. */
export function memberNamed<T extends { userId: string; email: string }>(members: readonly T[], emailOrId: string): T {
  const id = emailOrId.trim().toLowerCase();
  const address = emailOrNull(emailOrId);
  const found = members.find((m) => m.userId === id || (address !== null && m.email === address));
  if (!found) throw new ApiError(404, "NOT_FOUND", `no user ${emailOrId} in your organization`);
  return found;
}

/**
 * A member a verified roster records at other keys than the pin (their `rotate` link, signed by the
 * pinned keys): when their log leads from the pin through those keys, the pin to keep, at the log's
 * head, so that a server later showing the replaced keys is refused (`KEY_LOG_ROLLBACK`) instead of
 * wrapped to. Undefined when the log does not lead there: wherever the keys are used, the bundle
 * checks refuse them.
 */
export function pinFollowingRecord(log: readonly VerifiedKeyEntry[], userId: string, pinned: Pin, recordedKey: string): Pin | undefined {
  const from = log.findIndex((e) => groupedFingerprint(e.keys) === pinned.fingerprint);
  const recorded = log.findIndex((e) => e.keys === recordedKey);
  if (from < 0 || recorded <= from) return undefined;
  try {
    return followKeyLogFrom(log, { userId, email: pinned.email ?? userId }, pinned, log[log.length - 1]!.keys);
  } catch (err) {
    if (err instanceof SecurityError) return undefined;
    throw err;
  }
}
