/**
 * Invite-token lookup by hash and the one-shot lock taken while a token is being consumed.
 * The lock spares the database from a stampede of redemptions of one token; the database update
 * that marks the invite used stays conditional and is the source of truth.
 * In-process here; `RedisInviteTokens` serves several nodes.
 */
import type { InviteId } from "../domain/ids";
import type { Invite } from "../domain/orgs/invites";
import type { Store } from "../store/port";
import { systemClock, type Clock } from "../clock";

export interface InviteTokens {
  /** The invite whose token hashes to `tokenHash`, or null. */
  find(tokenHash: string): Promise<Invite | null>;
  /** True for exactly one caller until `release` or `ttlMs` passes. */
  lockOnce(tokenHash: string, ttlMs: number): Promise<boolean>;
  release(tokenHash: string): Promise<void>;
  /** Drops what is cached of an invite whose status changed (used, revoked). */
  forget(inviteId: InviteId): Promise<void>;
  close(): Promise<void>;
}

export class MemoryInviteTokens implements InviteTokens {
  private readonly locks = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock = systemClock,
  ) {}

  find(tokenHash: string): Promise<Invite | null> {
    return this.store.invites.findInviteByTokenHash(tokenHash);
  }

  async lockOnce(tokenHash: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.nowMs();
    const until = this.locks.get(tokenHash);
    if (until !== undefined && until > now) return false;
    this.locks.set(tokenHash, now + ttlMs);
    return true;
  }

  async release(tokenHash: string): Promise<void> {
    this.locks.delete(tokenHash);
  }

  async forget(): Promise<void> {
    // Nothing cached: every lookup reads the store.
  }

  async close(): Promise<void> {
    this.locks.clear();
  }
}
