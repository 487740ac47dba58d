/** The split deployment, and the domain events, the audit worker and the sweeper. */
import { duration, int, serverStore, setting } from "../parse";

export const SPLIT_SETTINGS = {
  services: setting({
    env: "SERVICES",
    shown: "all",
    example: "api,vaults",
    group: "split",
    meaning: "comma-separated subset of services for this process",
    parse: (raw) =>
      raw
        ? raw
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined,
  }),
  databaseUrl: setting({
    env: "DATABASE_URL",
    shown: "unset",
    example: "postgres://postgres@127.0.0.1:5432/vault",
    group: "split",
    meaning: "PostgreSQL URL; unset: the embedded SQLite store",
    parse: (raw) => raw || undefined,
  }),
  pgPoolSize: setting({
    env: "PG_POOL_SIZE",
    default: "10",
    group: "split",
    meaning: "connections in each process's PostgreSQL pool (at least 2)",
    parse: (raw) => int("PG_POOL_SIZE", raw, 2),
  }),
  mongoUrl: setting({
    env: "MONGO_URL",
    shown: "unset",
    example: "mongodb://127.0.0.1:27017/vault?replicaSet=rs0",
    group: "split",
    meaning: "MongoDB URL of a replica set (transactions), instead of `DATABASE_URL`, never with it",
    parse: (raw, env) => serverStore(env, raw),
  }),
  redisUrl: setting({
    env: "REDIS_URL",
    shown: "unset",
    example: "redis://127.0.0.1:6379",
    group: "split",
    meaning: "Redis for invite tokens, one-shot locks, shared rate limits; unset: in-process",
    parse: (raw) => raw || undefined,
  }),
  transporter: setting({
    env: "TRANSPORTER",
    shown: "unset",
    example: "nats://127.0.0.1:4222",
    group: "split",
    meaning: "NATS URL; set: this process is one node of a split deployment (which needs `DATABASE_URL` or `MONGO_URL`, and `JWT_SECRET`)",
    parse: (raw) => raw || undefined,
  }),
  namespace: setting({
    env: "NAMESPACE",
    default: "vault-service",
    group: "split",
    meaning: "nodes meet only nodes of their namespace; also prefixes Redis keys",
    parse: (raw) => {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new Error(`Setting NAMESPACE must be 1 to 64 letters, digits, _ or -, got "${raw}"`);
      return raw;
    },
  }),
  nodeId: setting({
    env: "NODE_ID",
    shown: "host-pid",
    group: "split",
    meaning: "Moleculer node id; a stable one lets a restarted node take its place at once",
    parse: (raw) => raw || undefined,
  }),
  eventRetryDelayMs: setting({
    env: "EVENT_RETRY_DELAY",
    default: "1s",
    group: "events",
    meaning: "delay before a failed event is delivered again; doubles per retry, up to 30 s",
    parse: (raw) => duration("EVENT_RETRY_DELAY", raw),
  }),
  eventMaxDeliveries: setting({
    env: "EVENT_MAX_DELIVERIES",
    default: "5",
    group: "events",
    meaning: "deliveries before an event a worker keeps failing on is dead-lettered (an unavailable store never counts)",
    parse: (raw) => int("EVENT_MAX_DELIVERIES", raw, 1),
  }),
  eventAckWaitMs: setting({
    env: "EVENT_ACK_WAIT",
    default: "30s",
    group: "events",
    meaning: "JetStream: an unacknowledged delivery goes to the next worker after this long",
    parse: (raw) => duration("EVENT_ACK_WAIT", raw),
  }),
  eventRetentionMs: setting({
    env: "EVENT_RETENTION",
    default: "7d",
    group: "events",
    meaning: "JetStream: how long events stay in the stream",
    parse: (raw) => duration("EVENT_RETENTION", raw),
  }),
  sweepIntervalMs: setting({
    env: "SWEEP_INTERVAL",
    default: "10m",
    group: "events",
    meaning:
      "how often the sweeper purges expired invites, expired or revoked refresh tokens, ended sessions and expired remembered devices",
    parse: (raw) => duration("SWEEP_INTERVAL", raw),
  }),
  inviteRetentionMs: setting({
    env: "INVITE_RETENTION",
    default: "90d",
    group: "events",
    meaning:
      "how long an invite never used is kept after its expiry: redeeming its token answers 400 `INVITE_NOT_REDEEMABLE` until then, 404 after",
    parse: (raw) => duration("INVITE_RETENTION", raw),
  }),
};
