/** A user's verified key log followed from this device's pin: where keys stand in it, and the pin it leads to. */
import { SecurityError } from "../../errors";
import { groupedFingerprint } from "../../../protocol/crypto/keys";
import type { Pin } from "../../pins";
import type { VerifiedKeyEntry } from "../../../protocol/formats/key-log";
import { keyChanged } from "./pin-checks";

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
