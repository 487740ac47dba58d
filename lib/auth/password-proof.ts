/**
 * The current master password, proven by its auth hash from a signed-in session (a password change,
 * removing a second factor, new recovery codes): at most LOGIN_MAX_FAILURES wrong ones per session
 * and LOGIN_EMAIL_MAX_FAILURES per account per LOGIN_FAILURE_WINDOW (a stolen access token must not
 * become a way to guess the password, nor to keep its owner from changing it: the owner ends the
 * thief's session and goes on), each counted before the slow comparison and given back when it
 * matches.
 */
import type { Config } from "../config";
import type { Counters } from "../limits/counters";
import { retryAfterSec } from "../domain/accounts/address-limits";
import { rateLimited, wrongCurrentPassword } from "../domain/accounts/refusals";
import type { UserRecord } from "../store/port";
import { authHashMatches } from "./auth-hash";

export async function proveCurrentPassword(
  deps: { config: Config; counters: Counters },
  user: Pick<UserRecord, "userId" | "authHash">,
  sessionId: string | undefined,
  presented: string,
): Promise<void> {
  const { config, counters } = deps;
  const window = config.loginFailureWindowMs;
  const limits: Array<[string, number]> = [
    [`password-check:${user.userId}|${sessionId ?? "-"}`, config.loginMaxFailures],
    [`password-check:${user.userId}`, config.loginEmailMaxFailures],
  ];
  const counted: string[] = [];
  for (const [key, limit] of limits) {
    const w = await counters.add(key, 1, window);
    counted.push(key);
    if (w.count > limit) {
      await Promise.all(counted.map((k) => counters.add(k, -1, window)));
      throw rateLimited("Too many wrong current passwords; try again later", retryAfterSec(w.resetInMs));
    }
  }
  if (!(await authHashMatches(Buffer.from(presented, "base64"), user.authHash))) throw wrongCurrentPassword();
  await Promise.all(counted.map((k) => counters.add(k, -1, window)));
}
