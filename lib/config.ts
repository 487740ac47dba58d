/**
 * Every setting of the service, its default and its meaning, in one place.
 * Settings come from the environment; each default works on a fresh machine.
 */
import fs from "node:fs";
import path from "node:path";
import { parseDuration } from "./domain/duration";
import type { LogFormat } from "./ops/request-scope";

export type RegistrationMode = "invite" | "open" | "disabled";

export interface Config {
  /** HTTP port of the gateway. */
  port: number;
  /** Interface the gateway listens on. */
  host: string;
  /** The operations port of this node (`OPS_PORT`): probes and metrics, apart from the API. Unset: none. */
  opsPort: number | undefined;
  /** Metrics on the operations port (`METRICS`, `on` by default; only with OPS_PORT). */
  metrics: boolean;
  /** `text` (default) or `json`, one object a line (`LOG_FORMAT`). */
  logFormat: LogFormat;
  /** A Zipkin v2 collector to send traces to (`TRACING_ZIPKIN_URL`, e.g. http://zipkin:9411). Unset: no tracing. */
  tracingZipkinUrl: string | undefined;
  /** On SIGTERM, how long the node stays up answering not-ready before it stops (`DRAIN_DELAY`). */
  drainDelayMs: number;
  /** Where the embedded store and the generated JWT signing key live. */
  dataDir: string;
  /** The built web vault the gateway serves under `/` (`WEB_DIR`; default the project's dist/web). Not built: no web vault. */
  webDir: string;
  /** `invite` (default): new users need an invite, except the very first one. */
  registrationMode: RegistrationMode;
  /** Default lifetime of an invite, in ms (`INVITE_TTL`, e.g. `72h`). */
  inviteTtlMs: number;
  /** Access-token lifetime in seconds (`ACCESS_TOKEN_TTL`, e.g. `15m`). */
  accessTokenTtlSec: number;
  /** Refresh-token lifetime in ms (`REFRESH_TOKEN_TTL`, e.g. `30d`). */
  refreshTokenTtlMs: number;
  /** HS256 secret for access tokens (`JWT_SECRET`, base64, >= 32 bytes). Generated under DATA_DIR when unset. */
  jwtSecret: string | undefined;
  /** The key JWT_SECRET replaced (`JWT_PREVIOUS_SECRET`, base64): its tokens are accepted until `jwtPreviousSecretUntilMs`. */
  jwtPreviousSecret: string | undefined;
  /** When the previous key stops being accepted (`JWT_PREVIOUS_SECRET_UNTIL`, an ISO 8601 time; required with it). */
  jwtPreviousSecretUntilMs: number | undefined;
  /** Failed logins for one email allowed in the window before 429 (`LOGIN_MAX_FAILURES`). */
  loginMaxFailures: number;
  /** Window of the failed-login counter, ms (`LOGIN_FAILURE_WINDOW`, e.g. `15m`). */
  loginFailureWindowMs: number;
  /** Redeem requests allowed per client address per minute (`REDEEM_RATE_LIMIT`). */
  redeemRateLimit: number;
  /**
   * Proxies in front that append to X-Forwarded-For (`TRUST_PROXY`, a count; `true` is 1): the
   * client is the entry that many places from the right. 0 (default): the socket address counts.
   */
  trustedProxies: number;
  /** JSON body limit of every route but rekey, in bytes. */
  bodyLimitBytes: number;
  /** JSON body limit of the rekey route (`REKEY_BODY_LIMIT`, bytes), large enough for 10,000 items of 2 KiB. */
  rekeyBodyLimitBytes: number;
  /** Rekey bodies read and held at once per process (`REKEY_CONCURRENCY`); more answer 503 with Retry-After. */
  rekeyConcurrency: number;
  /** Per-call timeout between services, ms (`REQUEST_TIMEOUT`). */
  requestTimeoutMs: number;
  /** Moleculer log level (`LOG_LEVEL`). */
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace";
  /** scrypt cost N for stored auth hashes (`SCRYPT_COST`, power of two >= 16384). */
  scryptCost: number;
  /** PostgreSQL connection URL (`DATABASE_URL`). Unset: the embedded SQLite store under DATA_DIR. */
  databaseUrl: string | undefined;
  /** Connections in this process's PostgreSQL pool (`PG_POOL_SIZE`). */
  pgPoolSize: number;
  /** MongoDB URL (`MONGO_URL`), a replica set (transactions). Set instead of DATABASE_URL, never with it. */
  mongoUrl: string | undefined;
  /** Redis URL (`REDIS_URL`) for the invite-token lookup, one-shot locks and shared rate limits. Unset: in-process. */
  redisUrl: string | undefined;
  /** Moleculer namespace (`NAMESPACE`): nodes meet only nodes of their namespace; also prefixes Redis keys. */
  namespace: string;
  /** Moleculer node id (`NODE_ID`), default host-pid. A stable id lets a restarted node take its place at once. */
  nodeId: string | undefined;
  /** NATS URL (`TRANSPORTER`, e.g. nats://127.0.0.1:4222). Set: this process is one node of a split deployment. */
  transporter: string | undefined;
  /** Delay before a failed event is delivered again, ms (`EVENT_RETRY_DELAY`); it doubles per retry, up to 30 s. */
  eventRetryDelayMs: number;
  /** Deliveries of an event before a worker that keeps failing on it dead-letters it (`EVENT_MAX_DELIVERIES`). */
  eventMaxDeliveries: number;
  /** JetStream: a delivery not acknowledged within this time goes to the next worker, ms (`EVENT_ACK_WAIT`). */
  eventAckWaitMs: number;
  /** JetStream: how long events stay in the stream, ms (`EVENT_RETENTION`). */
  eventRetentionMs: number;
  /** How often the sweeper purges expired invites and refresh tokens, ms (`SWEEP_INTERVAL`). */
  sweepIntervalMs: number;
  /**
   * How long an invite that was never used (pending or revoked) is kept after its expiry, ms
   * (`INVITE_RETENTION`, default 90d): until then redeeming its token answers 400
   * INVITE_NOT_REDEEMABLE; after, the token is unknown (404).
   */
  inviteRetentionMs: number;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`Setting ${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function duration(env: Env, name: string, def: string): number {
  const raw = env[name] || def;
  const ms = parseDuration(raw);
  if (ms === null) throw new Error(`Setting ${name} must be a duration like 15m, 72h or 30d, got "${raw}"`);
  return ms;
}

function namespace(raw: string | undefined): string {
  const ns = raw || "vault-service";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(ns)) throw new Error(`Setting NAMESPACE must be 1 to 64 letters, digits, _ or -, got "${ns}"`);
  return ns;
}

export function loadConfig(env: Env = process.env): Config {
  const mode = (env.REGISTRATION_MODE || "invite") as RegistrationMode;
  if (!["invite", "open", "disabled"].includes(mode)) {
    throw new Error(`Setting REGISTRATION_MODE must be invite, open or disabled, got "${mode}"`);
  }
  const logLevel = (env.LOG_LEVEL || "info") as Config["logLevel"];
  if (!["fatal", "error", "warn", "info", "debug", "trace"].includes(logLevel)) {
    throw new Error(`Setting LOG_LEVEL is not a log level: "${logLevel}"`);
  }
  const scryptCost = int(env, "SCRYPT_COST", 16384, 16384);
  if ((scryptCost & (scryptCost - 1)) !== 0) throw new Error("Setting SCRYPT_COST must be a power of two");
  return {
    port: int(env, "PORT", 3000, 0),
    opsPort: env.OPS_PORT ? int(env, "OPS_PORT", 0, 0) : undefined,
    metrics: onOff(env, "METRICS", true),
    logFormat: oneOf(env, "LOG_FORMAT", ["text", "json"] as const, "text"),
    tracingZipkinUrl: httpUrl(env, "TRACING_ZIPKIN_URL"),
    drainDelayMs: env.DRAIN_DELAY && env.DRAIN_DELAY !== "0" ? duration(env, "DRAIN_DELAY", "0") : 0,
    host: env.HOST || "127.0.0.1",
    dataDir: path.resolve(env.DATA_DIR || "./data"),
    webDir: env.WEB_DIR ? path.resolve(env.WEB_DIR) : path.join(projectRoot(), "dist", "web"),
    registrationMode: mode,
    inviteTtlMs: duration(env, "INVITE_TTL", "72h"),
    accessTokenTtlSec: Math.floor(duration(env, "ACCESS_TOKEN_TTL", "15m") / 1000),
    refreshTokenTtlMs: duration(env, "REFRESH_TOKEN_TTL", "30d"),
    jwtSecret: env.JWT_SECRET || undefined,
    ...previousSigningKey(env),
    loginMaxFailures: int(env, "LOGIN_MAX_FAILURES", 10, 1),
    loginFailureWindowMs: duration(env, "LOGIN_FAILURE_WINDOW", "15m"),
    redeemRateLimit: int(env, "REDEEM_RATE_LIMIT", 60, 1),
    trustedProxies: env.TRUST_PROXY === "true" ? 1 : env.TRUST_PROXY === "false" ? 0 : int(env, "TRUST_PROXY", 0, 0),
    bodyLimitBytes: 1024 * 1024,
    rekeyBodyLimitBytes: int(env, "REKEY_BODY_LIMIT", 64 * 1024 * 1024, 1024 * 1024),
    rekeyConcurrency: int(env, "REKEY_CONCURRENCY", 4, 1),
    requestTimeoutMs: int(env, "REQUEST_TIMEOUT", 30_000, 1000),
    logLevel,
    scryptCost,
    databaseUrl: env.DATABASE_URL || undefined,
    pgPoolSize: int(env, "PG_POOL_SIZE", 10, 2),
    mongoUrl: serverStore(env),
    redisUrl: env.REDIS_URL || undefined,
    namespace: namespace(env.NAMESPACE),
    nodeId: env.NODE_ID || undefined,
    transporter: env.TRANSPORTER || undefined,
    eventRetryDelayMs: duration(env, "EVENT_RETRY_DELAY", "1s"),
    eventMaxDeliveries: int(env, "EVENT_MAX_DELIVERIES", 5, 1),
    eventAckWaitMs: duration(env, "EVENT_ACK_WAIT", "30s"),
    eventRetentionMs: duration(env, "EVENT_RETENTION", "7d"),
    sweepIntervalMs: duration(env, "SWEEP_INTERVAL", "10m"),
    inviteRetentionMs: duration(env, "INVITE_RETENTION", "90d"),
  };
}

/** The folder holding package.json, from here (lib/ in the sources, dist/lib/ when built). */
function projectRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (!raw) return fallback;
  if (raw !== "on" && raw !== "off") throw new Error(`Setting ${name} must be on or off, got "${raw}"`);
  return raw === "on";
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name] || fallback;
  if (!allowed.includes(raw as T)) throw new Error(`Setting ${name} must be ${allowed.join(" or ")}, got "${raw}"`);
  return raw as T;
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new Error(`Setting ${name} must be an http:// or https:// URL`);
  return raw.replace(/\/+$/, "");
}

/** The key a rotation replaced, and until when its tokens are accepted: both or neither. */
function previousSigningKey(env: Env): Pick<Config, "jwtPreviousSecret" | "jwtPreviousSecretUntilMs"> {
  const secret = env.JWT_PREVIOUS_SECRET || undefined;
  const until = env.JWT_PREVIOUS_SECRET_UNTIL || undefined;
  if (!secret && !until) return { jwtPreviousSecret: undefined, jwtPreviousSecretUntilMs: undefined };
  if (!secret || !until) throw new Error("Settings JWT_PREVIOUS_SECRET and JWT_PREVIOUS_SECRET_UNTIL go together: the key a rotation replaced, and until when its tokens are accepted");
  if (!env.JWT_SECRET) throw new Error("Setting JWT_PREVIOUS_SECRET needs JWT_SECRET, the key that replaced it");
  const untilMs = /^\d{4}-\d{2}-\d{2}T/.test(until) ? Date.parse(until) : NaN;
  if (!Number.isFinite(untilMs)) throw new Error(`Setting JWT_PREVIOUS_SECRET_UNTIL must be an ISO 8601 time like 2026-01-31T12:00:00Z, got "${until}"`);
  return { jwtPreviousSecret: secret, jwtPreviousSecretUntilMs: untilMs };
}

/** MONGO_URL, refused beside DATABASE_URL: one store holds the data, and the settings must say which. */
function serverStore(env: Env): string | undefined {
  if (env.MONGO_URL && env.DATABASE_URL) throw new Error("Set DATABASE_URL (PostgreSQL) or MONGO_URL (MongoDB), not both");
  if (env.MONGO_URL && !/^mongodb(\+srv)?:\/\//.test(env.MONGO_URL)) throw new Error("Setting MONGO_URL must be a mongodb:// or mongodb+srv:// URL");
  return env.MONGO_URL || undefined;
}

/**
 * What a node of a split deployment (TRANSPORTER set) needs and the embedded default does not: a
 * server database every node shares, and one signing key for all of them.
 */
export function checkSplitDeployment(config: Config): void {
  if (!config.transporter) return;
  if (!/^nats:\/\//.test(config.transporter)) {
    throw new Error(`Setting TRANSPORTER must be a NATS URL like nats://127.0.0.1:4222, got "${config.transporter}"`);
  }
  if (!config.databaseUrl && !config.mongoUrl) {
    throw new Error("A split deployment (TRANSPORTER is set) needs a server database shared by every node: set DATABASE_URL " +
      "to a PostgreSQL URL, or MONGO_URL to a MongoDB replica set. The embedded SQLite store serves one process only.");
  }
  if (!config.jwtSecret) {
    throw new Error("A split deployment (TRANSPORTER is set) needs JWT_SECRET, the same on every node (base64 of >= 32 random bytes).");
  }
}
