/**
 * A send's password, checked as a login's is (lib/auth/logins.ts): three counters of attempts within
 * LOGIN_FAILURE_WINDOW (this send from this address, LOGIN_MAX_FAILURES; this address on any send,
 * LOGIN_ADDRESS_MAX_FAILURES; this send from anywhere, LOGIN_EMAIL_MAX_FAILURES), counted before
 * the slow comparison and given back when it succeeds; then the proof against its scrypt hash.
 * The server holds only that hash of a proof derived from the password under a salt it never sees
 * (protocol/formats/sends.ts): it cannot guess the password offline.
 */
import { retryAfterSec } from "../domain/accounts/address-limits";
import { decideLoginAttempt } from "../domain/accounts/login-limits";
import type { SendId } from "../domain/ids";
import { sendPasswordRateLimited, sendPasswordWrong } from "../domain/sends/refusals";
import type { Runtime } from "../runtime";
import { authHashMatches, hashAuthHash } from "./auth-hash";

/** The slow hash a new send's password proof is kept as. */
export const hashSendProof = (rt: Runtime, proof: string): Promise<string> =>
  hashAuthHash(Buffer.from(proof, "base64"), rt.config.scryptCost);

/** Counts the attempt, compares the proof; 429 past a counter, 401 when wrong. */
export async function checkSendPassword(rt: Runtime, sendId: SendId, address: string, proof: string, hash: string): Promise<void> {
  const { config, counters, metrics } = rt;
  const window = config.loginFailureWindowMs;
  const limits = {
    perEmailAndAddress: config.loginMaxFailures,
    perAddress: config.loginAddressMaxFailures,
    perEmail: config.loginEmailMaxFailures,
  };
  const keys = [`send-pw:${sendId}|${address}`, `send-pw-address:${address}`, `send-pw:${sendId}`] as const;
  const attempts = { emailAndAddress: 0, address: 0, email: 0, knownAddress: false };
  const counted: string[] = [];
  for (const [i, field] of (["emailAndAddress", "address", "email"] as const).entries()) {
    const w = await counters.add(keys[i], 1, window);
    counted.push(keys[i]);
    attempts[field] = w.count;
    const verdict = decideLoginAttempt(attempts, limits);
    if (!verdict.ok) {
      metrics.rateLimited("send-password");
      throw sendPasswordRateLimited(verdict.refusal, retryAfterSec(w.resetInMs));
    }
  }
  if (!(await authHashMatches(Buffer.from(proof, "base64"), hash))) throw sendPasswordWrong();
  await Promise.all(counted.map((k) => counters.add(k, -1, window)));
}
