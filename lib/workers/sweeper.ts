/**
 * The sweeper's job: purge what has expired (lib/store/port.ts `purgeExpired`: invites that were
 * never used, INVITE_RETENTION after their expiry; refresh tokens expired or revoked; sessions ended
 * or expired; remembered devices expired; items in a trash TRASH_RETENTION after their delete, with
 * their attachments; attachment uploads unfinished ATTACHMENT_UPLOAD_WINDOW after their start), holding the
 * `sweeper` lease so that of the nodes that schedule it, one sweeps at a time.
 */
import type { Locks } from "../locks";
import type { PurgeCounts, Store } from "../store/port";

export const SWEEP_LOCK = "sweeper";

export type SweepOutcome = ({ ran: true } & PurgeCounts) | { ran: false };

export interface SweepPolicy {
  /** How long a sweeper that dies mid-sweep keeps the others out. */
  leaseMs: number;
  /** How long an invite that was never used is kept after its expiry (redeeming it answers 400 until then, 404 after). */
  inviteRetentionMs: number;
  /** How long a deleted item stays in its vault's trash (TRASH_RETENTION). */
  trashRetentionMs?: number;
  /** How long an attachment upload may stay unfinished (ATTACHMENT_UPLOAD_WINDOW). */
  uploadWindowMs?: number;
}

export async function sweepOnce(store: Store, locks: Locks, policy: SweepPolicy, now: Date = new Date()): Promise<SweepOutcome> {
  const lease = await locks.tryAcquire(SWEEP_LOCK, policy.leaseMs);
  if (!lease) return { ran: false };
  try {
    return {
      ran: true,
      ...(await store.housekeeping.purgeExpired({
        now: now.toISOString(),
        invitesExpiredBefore: new Date(now.getTime() - policy.inviteRetentionMs).toISOString(),
        ...(policy.trashRetentionMs !== undefined && {
          trashDeletedBefore: new Date(now.getTime() - policy.trashRetentionMs).toISOString(),
        }),
        ...(policy.uploadWindowMs !== undefined && {
          uploadsStartedBefore: new Date(now.getTime() - policy.uploadWindowMs).toISOString(),
        }),
      })),
    };
  } finally {
    await lease.release();
  }
}
