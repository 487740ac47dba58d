/** Housekeeping: the sweeper's purge, and what operators ask of the database (readiness, pool, backup). */

/** What a sweep removed. */
export interface PurgeCounts {
  invites: number;
  refreshTokens: number;
  sessions: number;
  /** Items purged from trashes (with their history). */
  trash: number;
  /** Remembered devices past their expiry. */
  rememberedDevices: number;
  /** Attachment uploads never finished (with their chunks). */
  uploads: number;
}

/** A connection pool: open connections, the idle ones, and requests waiting for one. */
export interface PoolUsage {
  total: number;
  idle: number;
  waiting: number;
}

export interface Housekeeping {
  /**
   * Deletes invites that were never used (pending or revoked) and expired before
   * `invitesExpiredBefore` (until then an expired token is still known, and answers "not
   * redeemable" rather than "not found"), refresh tokens that are expired at `now` or revoked, and
   * sessions that have ended or expired (their access tokens are refused alike without them), and
   * remembered devices expired at `now` (their tokens no longer skip anything).
   * Used invites, active tokens and used tokens not yet expired (they detect the reuse of a
   * stolen token) stay. With `trashDeletedBefore`, items deleted into a trash before it are purged,
   * with their history and attachments. With `uploadsStartedBefore`, attachment uploads begun
   * before it and never finished are deleted (`AttachmentStore.purgeStaleUploads`).
   */
  purgeExpired(args: {
    now: string;
    invitesExpiredBefore: string;
    trashDeletedBefore?: string;
    uploadsStartedBefore?: string;
  }): Promise<PurgeCounts>;
  /** Resolves once the database answers a trivial query; rejects when it cannot be reached (readiness). */
  ping(): Promise<void>;
  /** The connection pool's figures, for a store with a pool (PostgreSQL); else undefined. */
  poolUsage(): PoolUsage | undefined;
  /**
   * The embedded store only: a consistent copy of the whole database written to `file` (which must
   * not exist), with the bytes of its attachments' chunk files, while the service goes on serving. Server databases have their own tools
   * (pg_dump, mongodump): they refuse.
   */
  backupTo(file: string): Promise<void>;
}
