/**
 * The sweeper's job: purge what has expired (lib/store/port.ts `purgeExpired`: invites past their
 * expiry that were never used, refresh tokens expired or revoked), holding the `sweeper` lease so
 * that of the nodes that schedule it, one sweeps at a time.
 */
import { timestamp } from "../domain/encoding";
import type { Locks } from "../locks";
import type { PurgeCounts, Store } from "../store/port";

export const SWEEP_LOCK = "sweeper";

export type SweepOutcome = ({ ran: true } & PurgeCounts) | { ran: false };

/** `leaseMs` bounds how long a sweeper that dies mid-sweep keeps the others out. */
export async function sweepOnce(store: Store, locks: Locks, leaseMs: number, now: string = timestamp()): Promise<SweepOutcome> {
  const lease = await locks.tryAcquire(SWEEP_LOCK, leaseMs);
  if (!lease) return { ran: false };
  try {
    return { ran: true, ...(await store.purgeExpired(now)) };
  } finally {
    await lease.release();
  }
}
