/**
 * The Redis connection behind the token lookup, the one-shot locks and the shared rate limits.
 *
 * When Redis is down, nothing waits for it: commands fail at once (no offline queue, a 1 s
 * command deadline) and each user of Redis falls back as documented in its own file. The
 * connection keeps retrying in the background; one line is logged when it drops and one when it
 * is back. The URL is never logged.
 */
import Redis from "ioredis";

export interface RedisLink {
  client: Redis;
  /** Runs `fn` each time the connection is ready again after an outage. */
  onReconnect(fn: () => void): void;
  close(): Promise<void>;
}

export interface RedisLog {
  warn(message: string): void;
  info(message: string): void;
}

export async function connectRedis(url: string, log: RedisLog, prefix: string): Promise<RedisLink> {
  const client = new Redis(url, {
    keyPrefix: prefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    lazyConnect: true,
  });
  let down = false;
  const listeners: Array<() => void> = [];
  client.on("error", (err: Error) => {
    if (down) return;
    down = true;
    log.warn(`Redis unavailable (${err.message.replace(/\/\/[^@/]*@/, "//")}); falling back until it returns`);
  });
  client.on("ready", () => {
    if (!down) return;
    down = false;
    log.info("Redis is back");
    for (const fn of listeners) fn();
  });
  // A server that is down at start is not fatal: the fallbacks serve until it comes up.
  await client.connect().catch(() => undefined);
  return {
    client,
    onReconnect: (fn) => void listeners.push(fn),
    async close() {
      client.disconnect();
    },
  };
}
