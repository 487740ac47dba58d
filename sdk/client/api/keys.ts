/**
 * `client.keys`: other users' keys, checked and pinned (the part: trust/), this account's own
 * fingerprint, and the rotation of this account's keys (keys.ts).
 */
import { groupedFingerprint, keyFingerprint } from "../../../protocol/crypto/keys";
import type { KeyRotationResult } from "../keys";
import type { RecoveryRenewal } from "../recovery";
import type { EmergencyRenewal } from "../emergency";
import type { Parts } from "../parts";
import type { ServedBundle, TrustLevel } from "../types";
import { lc } from "./ids";

export interface KeysApi {
  /** A user's public keys, checked against their statement, the pins and the invite, and pinned. */
  of(userId: string): Promise<ServedBundle>;
  /**
   * The fingerprint the server currently shows for a user (consistent in itself: self-signed, its
   * statement verifying, but not yet checked against the pins), and the pinned one with its source.
   */
  fingerprint(userId: string): Promise<{ current: string; pinned?: string; email: string; trust?: TrustLevel }>;
  /** This account's own key fingerprint, grouped: what others compare theirs with. */
  own(): Promise<string>;
  /**
   * Accepts a user's keys as they are now, under the email the person checking was shown: call
   * only after comparing the fingerprint with them out of band.
   */
  trust(userId: string, fingerprint: string, email: string): Promise<void>;
  /** A user's key log, verified on its own (each step signed by the key before it and its own): oldest first. */
  log(userId: string): Promise<Array<{ version: number; fingerprint: string; at?: string }>>;
  /**
   * Replaces the account's RSA and Ed25519 keys: a signed step in the account's key log, every
   * vault's key wrapped to the new keys, the account's other sessions ended. Peers follow the key
   * log from the keys they pinned, without a warning.
   */
  rotate(opts?: { rsaBits?: number }): Promise<KeyRotationResult & { recovery: RecoveryRenewal; emergency: EmergencyRenewal }>;
}

export function keysApi({
  core,
  trust,
  keyRotations,
  recovery,
  emergency,
}: Pick<Parts, "core" | "trust" | "keyRotations" | "recovery" | "emergency">): KeysApi {
  return {
    of: (userId) => trust.userKeys(lc(userId)),
    fingerprint: (userId) => trust.fingerprint(lc(userId)),
    own: async () => groupedFingerprint(await keyFingerprint(core.account)),
    trust: (userId, fingerprint, email) => trust.trustUser(lc(userId), fingerprint, email),
    log: async (userId) =>
      (await trust.verifiedKeyLog(lc(userId))).map((e) => ({
        version: e.entry.version,
        fingerprint: groupedFingerprint(e.keys),
        ...(e.entry.at !== undefined && { at: e.entry.at }),
      })),
    // The recovery enrolment is bound to the account's keys: made again, or said to be stale; emergency grants stay stale until made again.
    rotate: async (opts) => ({
      ...(await keyRotations.rotateKeys(opts)),
      recovery: await recovery.renew(),
      emergency: await emergency.staleAfterChange(),
    }),
  };
}
