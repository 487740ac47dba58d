// Invite tokens with Redis: the lookup cached and a one-shot lock; the database stays the truth.
// Design: docs/design/invite-token-cache.md
import type { InviteId } from "../domain/ids";
import type { Invite } from "../domain/orgs/invites";
import type { Store } from "../store/port";
import type { RedisLink } from "../redis";
import type { InviteTokens } from "./invite-tokens";
import { systemClock, type Clock } from "../clock";

const BY_HASH = "invite:hash:";
const BY_ID = "invite:id:";
const LOCK = "invite:lock:";
const FORGOTTEN = "-";
/** Outlasts any lookup that read the database before the invite changed and writes the cache after. */
const TOMBSTONE_MS = 60_000;

// Fills the cache unless the invite was changed (tombstoned) since.
const FILL = `
if redis.call('GET', KEYS[2]) == '${FORGOTTEN}' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1`;

// Drops the cached invite and leaves a tombstone for lookups in flight.
const FORGET = `
local hash = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], '${FORGOTTEN}', 'PX', ARGV[1])
if hash and hash ~= '${FORGOTTEN}' then redis.call('DEL', ARGV[2] .. hash) end
return 1`;

export class RedisInviteTokens implements InviteTokens {
  private readonly unforgotten = new Set<InviteId>();

  constructor(
    private readonly store: Store,
    private readonly redis: RedisLink,
    private readonly clock: Clock = systemClock,
  ) {
    redis.onReconnect(() => void this.retryForgets());
  }

  async find(tokenHash: string): Promise<Invite | null> {
    const cached = await this.redis.client.get(BY_HASH + tokenHash).catch(() => null);
    if (cached) return JSON.parse(cached) as Invite;
    const invite = await this.store.invites.findInviteByTokenHash(tokenHash);
    const ttlMs = invite ? Date.parse(invite.expiresAt) - this.clock.nowMs() : 0;
    if (invite && ttlMs > 0) {
      await this.redis.client
        .eval(FILL, 2, BY_HASH + tokenHash, BY_ID + invite.inviteId, JSON.stringify(invite), tokenHash, Math.ceil(ttlMs))
        .catch(() => undefined);
    }
    return invite;
  }

  async lockOnce(tokenHash: string, ttlMs: number): Promise<boolean> {
    try {
      return (await this.redis.client.set(LOCK + tokenHash, "1", "PX", ttlMs, "NX")) === "OK";
    } catch {
      return true; // the database's conditional update decides alone
    }
  }

  async release(tokenHash: string): Promise<void> {
    await this.redis.client.del(LOCK + tokenHash).catch(() => undefined);
  }

  async forget(inviteId: InviteId): Promise<void> {
    try {
      // The cache key of the hash gets the client's prefix here, by hand: it is built inside the script.
      await this.redis.client.eval(FORGET, 1, BY_ID + inviteId, TOMBSTONE_MS, this.redis.client.options.keyPrefix + BY_HASH);
      this.unforgotten.delete(inviteId);
    } catch {
      this.unforgotten.add(inviteId);
    }
  }

  private async retryForgets(): Promise<void> {
    for (const inviteId of [...this.unforgotten]) await this.forget(inviteId);
  }

  async close(): Promise<void> {
    this.unforgotten.clear();
  }
}
