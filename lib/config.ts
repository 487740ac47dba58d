/**
 * Every setting of the service in one table (`SETTINGS`): its name, default, parser and meaning in
 * one row. The config is parsed from it, and the README's settings table and `.env.template` are
 * written from it (`npm run settings`; test/unit/lib/config.test.ts fails when they are stale).
 * Settings come from the environment; each default works on a fresh machine.
 */
import fs from "node:fs";
import path from "node:path";
import { parseDuration } from "./domain/duration";
import { MAX_INVITE_TTL_MS } from "./domain/invites";
import { DEFAULT_ITEM_HISTORY, MAX_ITEM_HISTORY } from "./domain/item-history";
import { defaultVaultMaxBytes, defaultVaultMaxItems, vaultLimitsProblem } from "./domain/vault-limits";
import type { LogFormat } from "./ops/request-scope";

export type RegistrationMode = "invite" | "open" | "disabled";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

type Env = Record<string, string | undefined>;

export interface Setting<T> {
  /** The environment variable. */
  env: string;
  /** The default as the README shows it. */
  shown: string;
  /** What `.env.template` writes: the value, or undefined for a commented-out example. */
  template?: string;
  /** An example for a setting without a default (`.env.template` writes it commented out). */
  example?: string;
  /** One line of Markdown: what it does. */
  meaning: string;
  /** The section of `.env.template` it belongs to. */
  group: SettingGroup;
  /** The value, from the raw text (undefined or "" when unset); throws a sentence naming the setting. */
  parse(raw: string | undefined, env: Env): T;
}

export type SettingGroup = "basics" | "operating" | "split" | "events";
export const SETTING_GROUPS: Record<SettingGroup, string> = {
  basics: "The service",
  operating: 'Operating it (README, "Operating it")',
  split: 'The split deployment (README, "The split deployment")',
  events: 'Domain events, the audit worker and the sweeper (README, "The audit log")',
};

const setting = <T>(row: Setting<T>): Setting<T> => row;

/** Every setting, in the order the README and `.env.template` list them. */
export const SETTINGS = {
  port: setting({
    env: "PORT",
    shown: "3000",
    template: "3000",
    group: "basics",
    meaning: "HTTP port of the gateway",
    parse: (raw) => int("PORT", raw, 3000, 0, 65535),
  }),
  host: setting({
    env: "HOST",
    shown: "127.0.0.1",
    template: "127.0.0.1",
    group: "basics",
    meaning: "interface the gateway listens on",
    parse: (raw) => raw || "127.0.0.1",
  }),
  dataDir: setting({
    env: "DATA_DIR",
    shown: "`./data`",
    template: "./data",
    group: "basics",
    meaning: "the embedded store and the generated JWT signing key (`jwt-secret`, mode 0600)",
    parse: (raw) => path.resolve(raw || "./data"),
  }),
  webDir: setting({
    env: "WEB_DIR",
    shown: "`dist/web`",
    group: "basics",
    meaning: "the built web vault, served under `/` (`npm run build` makes it; absent: the API alone)",
    parse: (raw) => (raw ? path.resolve(raw) : path.join(projectRoot(), "dist", "web")),
  }),
  registrationMode: setting({
    env: "REGISTRATION_MODE",
    shown: "`invite`",
    template: "invite",
    group: "basics",
    meaning:
      "`invite`: new users need an invite, except the very first one; `open`: anyone may register and gets a new organization; `disabled`: nobody may",
    parse: (raw): RegistrationMode => oneOf("REGISTRATION_MODE", raw, ["invite", "open", "disabled"] as const, "invite"),
  }),
  inviteTtlMs: setting({
    env: "INVITE_TTL",
    shown: "`72h`",
    template: "72h",
    group: "basics",
    meaning: "default invite lifetime (`<n><s|m|h|d>`, 1s to 30d)",
    parse: (raw) => {
      const ms = duration("INVITE_TTL", raw, "72h");
      if (ms < 1000 || ms > MAX_INVITE_TTL_MS) throw new Error(`Setting INVITE_TTL must be from 1s to 30d, got "${raw}"`);
      return ms;
    },
  }),
  accessTokenTtlSec: setting({
    env: "ACCESS_TOKEN_TTL",
    shown: "`15m`",
    template: "15m",
    group: "basics",
    meaning: "access-token (JWT) lifetime",
    parse: (raw) => Math.floor(duration("ACCESS_TOKEN_TTL", raw, "15m") / 1000),
  }),
  refreshTokenTtlMs: setting({
    env: "REFRESH_TOKEN_TTL",
    shown: "`30d`",
    template: "30d",
    group: "basics",
    meaning: "refresh-token lifetime",
    parse: (raw) => duration("REFRESH_TOKEN_TTL", raw, "30d"),
  }),
  sessionCheckIntervalMs: setting({
    env: "SESSION_CHECK_INTERVAL",
    shown: "`5s`",
    template: "5s",
    group: "basics",
    meaning:
      "the longest an ended session's access tokens still work on a gateway that did not hear of the end (`0s` to `1m`; `0s`: every request reads the session)",
    parse: (raw) => {
      const ms = raw === "0s" || raw === "0" ? 0 : duration("SESSION_CHECK_INTERVAL", raw, "5s");
      if (ms > 60_000) throw new Error(`Setting SESSION_CHECK_INTERVAL must be from 0s to 1m, got "${raw}"`);
      return ms;
    },
  }),
  jwtSecret: setting({
    env: "JWT_SECRET",
    shown: "generated",
    group: "basics",
    meaning:
      "HS256 key, base64 of at least 32 bytes; tokens name it by a key id (`kid`); unset: generated under `DATA_DIR` (one process only)",
    parse: (raw) => raw || undefined,
  }),
  jwtPreviousSecret: setting({
    env: "JWT_PREVIOUS_SECRET",
    shown: "unset",
    group: "basics",
    meaning:
      'after a rotation: the key `JWT_SECRET` replaced; its tokens are accepted until `JWT_PREVIOUS_SECRET_UNTIL` (see "Operating it")',
    parse: (raw, env) => previousSigningKey(env, raw).secret,
  }),
  jwtPreviousSecretUntilMs: setting({
    env: "JWT_PREVIOUS_SECRET_UNTIL",
    shown: "unset",
    example: "2026-01-31T12:00:00Z",
    group: "basics",
    meaning: "the ISO 8601 time until which the previous key's tokens are accepted (required with `JWT_PREVIOUS_SECRET`, and only with it)",
    parse: (_raw, env) => previousSigningKey(env, env.JWT_PREVIOUS_SECRET).untilMs,
  }),
  sealSecret: setting({
    env: "SEAL_SECRET",
    shown: "generated",
    group: "basics",
    meaning:
      "key that seals second-factor secrets at rest (base64 of at least 32 bytes), the same on every node; unset: generated under `DATA_DIR`, or on a split deployment derived from `JWT_SECRET` (set it before rotating that)",
    parse: (raw) => raw || undefined,
  }),
  webauthnRpId: setting({
    env: "WEBAUTHN_RP_ID",
    shown: "`localhost`",
    group: "basics",
    meaning: "the WebAuthn relying party id: the host name the web vault is served under (security keys and passkeys are bound to it)",
    parse: (raw) => raw || "localhost",
  }),
  webauthnOrigins: setting({
    env: "WEBAUTHN_ORIGINS",
    shown: "any `http://localhost:<port>`",
    example: "https://vault.example.com",
    group: "basics",
    meaning: "the origins (comma-separated) a WebAuthn answer may come from; unset: http://localhost on any port (development only)",
    parse: (raw) =>
      raw
        ? raw
            .split(",")
            .map((o) => o.trim())
            .filter(Boolean)
        : undefined,
  }),
  loginMaxFailures: setting({
    env: "LOGIN_MAX_FAILURES",
    shown: "10",
    template: "10",
    group: "basics",
    meaning:
      "failed logins for one email from one client address within the window before `429` (strangers' failures never lock the owner out)",
    parse: (raw) => int("LOGIN_MAX_FAILURES", raw, 10, 1),
  }),
  loginAddressMaxFailures: setting({
    env: "LOGIN_ADDRESS_MAX_FAILURES",
    shown: "50",
    template: "50",
    group: "basics",
    meaning: "failed logins from one client address, for any emails, within the window before `429` (password spraying)",
    parse: (raw) => int("LOGIN_ADDRESS_MAX_FAILURES", raw, 50, 1),
  }),
  loginEmailMaxFailures: setting({
    env: "LOGIN_EMAIL_MAX_FAILURES",
    shown: "100",
    template: "100",
    group: "basics",
    meaning:
      "failed logins for one email from all addresses within the window; past it only addresses the account signed in from in the last 30 days may try",
    parse: (raw) => int("LOGIN_EMAIL_MAX_FAILURES", raw, 100, 1),
  }),
  loginFailureWindowMs: setting({
    env: "LOGIN_FAILURE_WINDOW",
    shown: "`15m`",
    template: "15m",
    group: "basics",
    meaning: "the window of the failed-login counters",
    parse: (raw) => duration("LOGIN_FAILURE_WINDOW", raw, "15m"),
  }),
  preloginRateLimit: setting({
    env: "PRELOGIN_RATE_LIMIT",
    shown: "600",
    template: "600",
    group: "basics",
    meaning: "`GET /auth/prelogin` per client address per minute",
    parse: (raw) => int("PRELOGIN_RATE_LIMIT", raw, 600, 1),
  }),
  registerRateLimit: setting({
    env: "REGISTER_RATE_LIMIT",
    shown: "60",
    template: "60",
    group: "basics",
    meaning: "`POST /auth/register` per client address per hour",
    parse: (raw) => int("REGISTER_RATE_LIMIT", raw, 60, 1),
  }),
  redeemRateLimit: setting({
    env: "REDEEM_RATE_LIMIT",
    shown: "60",
    template: "60",
    group: "basics",
    meaning: "`POST /invites/redeem` per client address per minute",
    parse: (raw) => int("REDEEM_RATE_LIMIT", raw, 60, 1),
  }),
  trustedProxies: setting({
    env: "TRUST_PROXY",
    shown: "`0`",
    template: "0",
    group: "basics",
    meaning:
      "proxies in front that append to `X-Forwarded-For`: the client address for rate limits is the entry that many places from the right (`1`: the rightmost, written by your proxy); `0`: the socket address. Entries further left are the client's own writing and are ignored",
    parse: (raw) => (raw === "true" ? 1 : raw === "false" ? 0 : int("TRUST_PROXY", raw, 0, 0)),
  }),
  rekeyBodyLimitBytes: setting({
    env: "REKEY_BODY_LIMIT",
    shown: "64 MiB",
    template: "67108864",
    group: "basics",
    meaning: "body limit of the rekey route, bytes (all other routes: 1 MiB)",
    parse: (raw) => rekeyBodyLimit(raw),
  }),
  rekeyConcurrency: setting({
    env: "REKEY_CONCURRENCY",
    shown: "4",
    template: "4",
    group: "basics",
    meaning: "rekey bodies read and held at once per process; more answer `503` with `Retry-After: 1`",
    parse: (raw) => int("REKEY_CONCURRENCY", raw, 4, 1, 1024),
  }),
  vaultMaxBytes: setting({
    env: "VAULT_MAX_BYTES",
    shown: "half of `REKEY_BODY_LIMIT`",
    group: "basics",
    meaning:
      "ciphertext one vault may hold (its items', trash's and history's `encryptedData` and `encryptedName`, as base64 characters); a write past it is `413` (history gives way first). Bounded so that a full vault can always be rekeyed",
    parse: (raw, env): number => int("VAULT_MAX_BYTES", raw, defaultVaultMaxBytes(rekeyBodyLimit(env.REKEY_BODY_LIMIT)), 1024),
  }),
  vaultMaxItems: setting({
    env: "VAULT_MAX_ITEMS",
    shown: "50000 (fewer below a 64 MiB `REKEY_BODY_LIMIT`)",
    group: "basics",
    meaning: "items one vault may hold, its trash included; one more is `413` (kept revisions count too, and give way)",
    parse: (raw, env): number => int("VAULT_MAX_ITEMS", raw, defaultVaultMaxItems(rekeyBodyLimit(env.REKEY_BODY_LIMIT)), 1),
  }),
  itemHistory: setting({
    env: "ITEM_HISTORY",
    shown: "10",
    template: "10",
    group: "basics",
    meaning: "revisions kept per item (0: none); the oldest give way first, and whenever a vault needs the room for its items and trash",
    parse: (raw) => int("ITEM_HISTORY", raw, DEFAULT_ITEM_HISTORY, 0, MAX_ITEM_HISTORY),
  }),
  trashRetentionMs: setting({
    env: "TRASH_RETENTION",
    shown: "`30d`",
    template: "30d",
    group: "basics",
    meaning: "how long a deleted item stays in its vault's trash, where members can restore it, before the sweeper purges it",
    parse: (raw) => duration("TRASH_RETENTION", raw, "30d"),
  }),
  requestTimeoutMs: setting({
    env: "REQUEST_TIMEOUT",
    shown: "30000",
    template: "30000",
    group: "basics",
    meaning: "ms, for every call between services",
    parse: (raw) => int("REQUEST_TIMEOUT", raw, 30_000, 1000),
  }),
  logLevel: setting({
    env: "LOG_LEVEL",
    shown: "`info`",
    template: "info",
    group: "basics",
    meaning: "Moleculer log level",
    parse: (raw): LogLevel => oneOf("LOG_LEVEL", raw, ["fatal", "error", "warn", "info", "debug", "trace"] as const, "info"),
  }),
  logFormat: setting({
    env: "LOG_FORMAT",
    shown: "`text`",
    template: "text",
    group: "operating",
    meaning: "`text`: one readable line (`[time] LEVEL MODULE trace=<id>: message`); `json`: one JSON object a line",
    parse: (raw): LogFormat => oneOf("LOG_FORMAT", raw, ["text", "json"] as const, "text"),
  }),
  opsPort: setting({
    env: "OPS_PORT",
    shown: "unset",
    example: "9100",
    group: "operating",
    meaning: 'this node\'s operations port: `/livez`, `/readyz`, `/metrics` (see "Operating it"); unset: none',
    parse: (raw) => (raw ? int("OPS_PORT", raw, 0, 0, 65535) : undefined),
  }),
  metrics: setting({
    env: "METRICS",
    shown: "`on`",
    template: "on",
    group: "operating",
    meaning: "`off`: no metrics collected or served (only with `OPS_PORT`)",
    parse: (raw) => onOff("METRICS", raw, true),
  }),
  tracingZipkinUrl: setting({
    env: "TRACING_ZIPKIN_URL",
    shown: "unset",
    example: "http://127.0.0.1:9411",
    group: "operating",
    meaning:
      "a Zipkin v2 collector (`http://host:9411`; Jaeger and the OpenTelemetry Collector take Zipkin too) the node sends its spans to; unset: no tracing",
    parse: (raw) => httpUrl("TRACING_ZIPKIN_URL", raw),
  }),
  drainDelayMs: setting({
    env: "DRAIN_DELAY",
    shown: "`0`",
    template: "0",
    group: "operating",
    meaning: "on SIGTERM, how long the node answers not-ready while still serving, before it stops (`5s` behind a load balancer)",
    parse: (raw) => (raw && raw !== "0" ? duration("DRAIN_DELAY", raw, "0") : 0),
  }),
  scryptCost: setting({
    env: "SCRYPT_COST",
    shown: "16384",
    template: "16384",
    group: "operating",
    meaning: "scrypt N for stored auth hashes (a power of two, at least 16384)",
    parse: (raw) => {
      const n = int("SCRYPT_COST", raw, 16384, 16384);
      if ((n & (n - 1)) !== 0) throw new Error("Setting SCRYPT_COST must be a power of two");
      return n;
    },
  }),
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
    shown: "10",
    template: "10",
    group: "split",
    meaning: "connections in each process's PostgreSQL pool (at least 2)",
    parse: (raw) => int("PG_POOL_SIZE", raw, 10, 2),
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
    shown: "`vault-service`",
    template: "vault-service",
    group: "split",
    meaning: "nodes meet only nodes of their namespace; also prefixes Redis keys",
    parse: (raw) => {
      const ns = raw || "vault-service";
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(ns)) throw new Error(`Setting NAMESPACE must be 1 to 64 letters, digits, _ or -, got "${ns}"`);
      return ns;
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
    shown: "`1s`",
    template: "1s",
    group: "events",
    meaning: "delay before a failed event is delivered again; doubles per retry, up to 30 s",
    parse: (raw) => duration("EVENT_RETRY_DELAY", raw, "1s"),
  }),
  eventMaxDeliveries: setting({
    env: "EVENT_MAX_DELIVERIES",
    shown: "5",
    template: "5",
    group: "events",
    meaning: "deliveries before an event a worker keeps failing on is dead-lettered (an unavailable store never counts)",
    parse: (raw) => int("EVENT_MAX_DELIVERIES", raw, 5, 1),
  }),
  eventAckWaitMs: setting({
    env: "EVENT_ACK_WAIT",
    shown: "`30s`",
    template: "30s",
    group: "events",
    meaning: "JetStream: an unacknowledged delivery goes to the next worker after this long",
    parse: (raw) => duration("EVENT_ACK_WAIT", raw, "30s"),
  }),
  eventRetentionMs: setting({
    env: "EVENT_RETENTION",
    shown: "`7d`",
    template: "7d",
    group: "events",
    meaning: "JetStream: how long events stay in the stream",
    parse: (raw) => duration("EVENT_RETENTION", raw, "7d"),
  }),
  sweepIntervalMs: setting({
    env: "SWEEP_INTERVAL",
    shown: "`10m`",
    template: "10m",
    group: "events",
    meaning: "how often the sweeper purges expired invites, expired or revoked refresh tokens and ended sessions",
    parse: (raw) => duration("SWEEP_INTERVAL", raw, "10m"),
  }),
  inviteRetentionMs: setting({
    env: "INVITE_RETENTION",
    shown: "`90d`",
    template: "90d",
    group: "events",
    meaning:
      "how long an invite never used is kept after its expiry: redeeming its token answers 400 `INVITE_NOT_REDEEMABLE` until then, 404 after",
    parse: (raw) => duration("INVITE_RETENTION", raw, "90d"),
  }),
};

/** The JSON body limit of every route but rekey, in bytes: not a setting. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export type Config = { [K in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[K]["parse"]> } & {
  /** JSON body limit of every route but rekey (BODY_LIMIT_BYTES). */
  bodyLimitBytes: number;
};

export function loadConfig(env: Env = process.env): Config {
  const config: Record<string, unknown> = { bodyLimitBytes: BODY_LIMIT_BYTES };
  for (const [key, row] of Object.entries(SETTINGS)) config[key] = row.parse(env[row.env], env);
  const c = config as Config;
  const problem = vaultLimitsProblem({ maxBytes: c.vaultMaxBytes, maxItems: c.vaultMaxItems }, c.rekeyBodyLimitBytes);
  if (problem) throw new Error(`Settings VAULT_MAX_BYTES and VAULT_MAX_ITEMS: ${problem}`);
  return c;
}

function rekeyBodyLimit(raw: string | undefined): number {
  return int("REKEY_BODY_LIMIT", raw, 64 * 1024 * 1024, 1024 * 1024, 256 * 1024 * 1024);
}

function int(name: string, raw: string | undefined, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new Error(
      `Setting ${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got "${raw}"`,
    );
  return n;
}

function duration(name: string, raw: string | undefined, def: string): number {
  const text = raw || def;
  const ms = parseDuration(text);
  if (ms === null) throw new Error(`Setting ${name} must be a duration like 15m, 72h or 30d, got "${text}"`);
  return ms;
}

/** The folder holding package.json, from here (lib/ in the sources, dist/lib/ when built). */
function projectRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

function onOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (!raw) return fallback;
  if (raw !== "on" && raw !== "off") throw new Error(`Setting ${name} must be on or off, got "${raw}"`);
  return raw === "on";
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  const value = raw || fallback;
  if (!allowed.includes(value as T))
    throw new Error(`Setting ${name} must be ${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}, got "${value}"`);
  return value as T;
}

function httpUrl(name: string, raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new Error(`Setting ${name} must be an http:// or https:// URL`);
  return raw.replace(/\/+$/, "");
}

/** The key a rotation replaced, and until when its tokens are accepted: both or neither. */
function previousSigningKey(env: Env, previous: string | undefined): { secret: string | undefined; untilMs: number | undefined } {
  const secret = previous || undefined;
  const until = env.JWT_PREVIOUS_SECRET_UNTIL || undefined;
  if (!secret && !until) return { secret: undefined, untilMs: undefined };
  if (!secret || !until)
    throw new Error(
      "Settings JWT_PREVIOUS_SECRET and JWT_PREVIOUS_SECRET_UNTIL go together: the key a rotation replaced, and until when its tokens are accepted",
    );
  if (!env.JWT_SECRET) throw new Error("Setting JWT_PREVIOUS_SECRET needs JWT_SECRET, the key that replaced it");
  const untilMs = /^\d{4}-\d{2}-\d{2}T/.test(until) ? Date.parse(until) : NaN;
  if (!Number.isFinite(untilMs))
    throw new Error(`Setting JWT_PREVIOUS_SECRET_UNTIL must be an ISO 8601 time like 2026-01-31T12:00:00Z, got "${until}"`);
  return { secret, untilMs };
}

/** MONGO_URL, refused beside DATABASE_URL: one store holds the data, and the settings must say which. */
function serverStore(env: Env, raw: string | undefined): string | undefined {
  if (raw && env.DATABASE_URL) throw new Error("Set DATABASE_URL (PostgreSQL) or MONGO_URL (MongoDB), not both");
  if (raw && !/^mongodb(\+srv)?:\/\//.test(raw)) throw new Error("Setting MONGO_URL must be a mongodb:// or mongodb+srv:// URL");
  return raw || undefined;
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
    throw new Error(
      "A split deployment (TRANSPORTER is set) needs a server database shared by every node: set DATABASE_URL " +
        "to a PostgreSQL URL, or MONGO_URL to a MongoDB replica set. The embedded SQLite store serves one process only.",
    );
  }
  if (!config.jwtSecret) {
    throw new Error("A split deployment (TRANSPORTER is set) needs JWT_SECRET, the same on every node (base64 of >= 32 random bytes).");
  }
}
