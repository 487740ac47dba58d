/**
 * Remembered devices: a second step answered with `rememberDevice` gives the device a token
 * (256 random bits; the server keeps its hash) that stands in for the second factor at the
 * account's next logins from that device, for REMEMBERED_DEVICE_TTL_MS. The token alone does
 * nothing: the password must be right too. A token that does not serve (unknown, another
 * account's, expired, or with a wrong password) is not refused: the login asks the second factor
 * as if none was sent, so a guesser learns nothing of tokens. A password change, a factor removed,
 * an account recovery and a removal from the organization forget every device of the account (in
 * the store, in the same transaction). Remembering one and forgetting one are audit records
 * (`user.device_remembered`, `user.device_forgotten`); the sweeper purges the expired ones.
 *
 * No policy of this release asks for a factor at every login (there is no "security key at each
 * login" policy): a remembered device stands in for any of the account's factors. Such a policy
 * would refuse here (`SECOND_FACTOR_EACH_LOGIN`).
 */
import { rememberedDeviceNotFound } from "./refusals";
import type { UserId } from "../ids";

/** How long a device stays remembered: 30 days from the second step that remembered it. */
export const REMEMBERED_DEVICE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** The most devices one account keeps remembered: remembering one more forgets the least recently used beyond it. */
export const MAX_REMEMBERED_DEVICES = 20;

export interface RememberedDevice {
  deviceId: string;
  userId: UserId;
  deviceName: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
}

/** Why a login with a device token still asks the second factor (never told to the client). */
export type SecondStepKept =
  "NO_DEVICE_TOKEN" | "UNKNOWN_DEVICE" | "OTHER_ACCOUNTS_DEVICE" | "DEVICE_EXPIRED" | "WRONG_PASSWORD" | "SECOND_FACTOR_EACH_LOGIN";

export type RememberedLoginPlan = { skipSecondStep: true; deviceId: string } | { skipSecondStep: false; because: SecondStepKept };

/**
 * Whether a login with the right password skips its second step for a remembered device: only a
 * device of this account, not expired at `now`, with the password right and no policy asking a
 * factor at each login.
 */
export function planRememberedLogin(args: {
  sentToken: boolean;
  device: RememberedDevice | null;
  userId: UserId;
  passwordRight: boolean;
  now: string;
  factorEachLogin?: boolean;
}): RememberedLoginPlan {
  const { device } = args;
  if (!args.sentToken) return { skipSecondStep: false, because: "NO_DEVICE_TOKEN" };
  if (!device) return { skipSecondStep: false, because: "UNKNOWN_DEVICE" };
  if (device.userId !== args.userId) return { skipSecondStep: false, because: "OTHER_ACCOUNTS_DEVICE" };
  if (device.expiresAt <= args.now) return { skipSecondStep: false, because: "DEVICE_EXPIRED" };
  if (!args.passwordRight) return { skipSecondStep: false, because: "WRONG_PASSWORD" };
  if (args.factorEachLogin) return { skipSecondStep: false, because: "SECOND_FACTOR_EACH_LOGIN" };
  return { skipSecondStep: true, deviceId: device.deviceId };
}

/** A device to forget must be one of the caller's (another's, or none: 404, alike). */
export function planForgetDevice(device: Pick<RememberedDevice, "userId"> | null, callerId: UserId): void {
  if (!device || device.userId !== callerId) throw rememberedDeviceNotFound();
}

/** The devices beyond the cap, the least recently used first out (ids, most recently used first in). */
export function rememberedOverCap(byRecentUse: string[], max = MAX_REMEMBERED_DEVICES): string[] {
  return byRecentUse.slice(max);
}
