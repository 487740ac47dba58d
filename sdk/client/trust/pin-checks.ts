/** A bundle against this device's pins, and the refusal of a key that changed without a signed step in the user's key log. */
import { SecurityError } from "../../errors";
import type { Pin } from "../../pins";

/** Pins by user id, and which user id each pinned email belongs to: read once per check of a list. */
export interface PinIndex {
  byUser: Map<string, Pin>;
  userOfEmail: Map<string, string>;
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

/** New keys for a pinned user that no signed step of their key log leads to (`KEY_CHANGED`). */
export function keyChanged(userId: string, email: string, pinned: string, now: string): SecurityError {
  return new SecurityError(
    "KEY_CHANGED",
    `the keys of ${email} (user ${userId}) changed since first seen (pinned ${pinned}, now ${now}); check the new fingerprint with them, then trust it`,
    userId,
  );
}
