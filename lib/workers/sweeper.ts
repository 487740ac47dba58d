/**
 * The sweeper's job: purge what has expired (lib/store/port.ts `purgeExpired`: invites that were
 * never used, INVITE_RETENTION after their expiry; refresh tokens expired or revoked; sessions
 * expired (an ended one is kept until then, so that its device is told why it ended); remembered
 * devices expired; items in a trash TRASH_RETENTION after their delete, with their attachments;
 * attachment uploads unfinished ATTACHMENT_UPLOAD_WINDOW after their start; sends expired, or
 * unfinished as long, with their parts, and the parts of sends whose last view was taken), holding the
 * `sweeper` lease so that of the nodes that schedule it, one sweeps at a time.
 */
import type { Locks } from "../locks";
import type { PurgeCounts, Store } from "../store/port";

export const SWEEP_LOCK = "sweeper";
/** How long a send may stay unfinished where no upload window is set. */
const SEND_UNFINISHED_MS = 86_400_000;

export type SweepOutcome = ({ ran: true } & PurgeCounts & { sends: number }) | { ran: false };

export interface SweepPolicy {
  /** How long a sweeper that dies mid-sweep keeps the others out. */
  leaseMs: number;
  /** How long an invite that was never used is kept after its expiry (redeeming it answers 400 until then, 404 after). */
  inviteRetentionMs: number;
  /** How long a deleted item stays in its vault's trash (TRASH_RETENTION). */
  trashRetentionMs?: number;
  /** How long an attachment upload, or a send, may stay unfinished (ATTACHMENT_UPLOAD_WINDOW). */
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
      sends: await store.sends.purgeSends({
        now: now.toISOString(),
        staleBefore: new Date(now.getTime() - (policy.uploadWindowMs ?? SEND_UNFINISHED_MS)).toISOString(),
      }),
    };
  } finally {
    await lease.release();
  }
}
