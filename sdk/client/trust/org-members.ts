/** The organization's member list as the server serves it: each email once, the caller's own entry, a member named. */
import { ApiError, SecurityError } from "../../errors";
import { keyFingerprint } from "../../../protocol/crypto/keys";
import type { ServedBundle } from "../types";
import { emailOrNull } from "./bundle";

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
