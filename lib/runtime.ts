/**
 * What the services of one process share: settings, the store, and the ports for tokens and
 * counters. Built once per process from the settings and handed to every service.
 * Embedded by default; DATABASE_URL and REDIS_URL switch on PostgreSQL and Redis.
 */
import { createHmac } from "node:crypto";
import type { Config } from "./config";
import { AccessTokens } from "./auth/access-tokens";
import { loadOrCreateSecret } from "./auth/secrets";
import { MemoryCounters, type Counters } from "./limits/counters";
import { RedisCounters } from "./limits/redis-counters";
import { connectRedis, type RedisLog } from "./redis";
import { openStore, type Store } from "./store";
import { MemoryInviteTokens, type InviteTokens } from "./tokens/invite-tokens";
import { RedisInviteTokens } from "./tokens/redis-invite-tokens";

export interface Runtime {
  config: Config;
  store: Store;
  accessTokens: AccessTokens;
  counters: Counters;
  inviteTokens: InviteTokens;
  /** Keyed HMAC for values that must be stable but unguessable (prelogin's fake salts). */
  serverHmac(purpose: string, value: string): Buffer;
  close(): Promise<void>;
}

export async function createRuntime(config: Config, log: RedisLog): Promise<Runtime> {
  const secret = loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const store = await openStore(config, (m) => log.warn(m));
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, log, `${config.namespace}:`) : undefined;
  const counters = redis ? new RedisCounters(redis) : new MemoryCounters();
  const inviteTokens = redis ? new RedisInviteTokens(store, redis) : new MemoryInviteTokens(store);
  const hmacKey = createHmac("sha256", secret).update("server-hmac-key").digest();
  return {
    config,
    store,
    accessTokens: new AccessTokens(secret, config.accessTokenTtlSec),
    counters,
    inviteTokens,
    serverHmac: (purpose, value) => createHmac("sha256", hmacKey).update(`${purpose}\0${value}`).digest(),
    async close() {
      await inviteTokens.close();
      await counters.close();
      await redis?.close();
      await store.close();
    },
  };
}
