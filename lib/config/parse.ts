/** A setting's row, and the parsers its rows share: each throws a sentence naming the setting. */
import fs from "node:fs";
import path from "node:path";
import { parseDuration } from "../domain/duration";

export type RegistrationMode = "invite" | "open" | "disabled";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

export type Env = Record<string, string | undefined>;

/** What a row of the settings table has, whether or not it has a default. */
interface SettingBase {
  /** The environment variable. */
  env: string;
  /** One line of Markdown: what it does. */
  meaning: string;
  /** The section of `.env.template` it belongs to. */
  group: SettingGroup;
}

/**
 * A setting with a default, written once: as the environment would set it. The parser reads it
 * when the setting is unset (or empty), `.env.template` writes it, and the settings table shows it.
 */
export interface SettingWithDefault<T> extends SettingBase {
  default: string;
  /** The default in bytes: the settings table shows it in MiB. */
  unit?: "bytes";
  /** The value, from the raw text or the default; throws a sentence naming the setting. */
  parse(raw: string, env: Env): T;
}

/** A setting whose default is no value one would write (computed, generated, or none). */
export interface SettingWithoutDefault<T> extends SettingBase {
  /** What the settings table shows in place of a default. */
  shown: string;
  /** An example `.env.template` writes commented out. */
  example?: string;
  /** The value, from the raw text (undefined or "" when unset); throws a sentence naming the setting. */
  parse(raw: string | undefined, env: Env): T;
}

/** A row of the settings table, as the config and the documentation read it. */
export interface Setting<T> {
  env: string;
  /** The default as the settings table (docs/operator/configuration.md) shows it. */
  shown: string;
  /** What `.env.template` writes: the default, or undefined for a commented-out example. */
  template?: string;
  /** An example for a setting without a default (`.env.template` writes it commented out). */
  example?: string;
  meaning: string;
  group: SettingGroup;
  /** The value, from the raw text (undefined or "" when unset); throws a sentence naming the setting. */
  parse(raw: string | undefined, env: Env): T;
}

export type SettingGroup = "basics" | "operating" | "split" | "events";
export const SETTING_GROUPS: Record<SettingGroup, string> = {
  basics: "The service",
  operating: "Operating it (docs/operator/running.md)",
  split: "The split deployment (docs/operator/split-deployment.md)",
  events: "Domain events, the audit worker and the sweeper (docs/security/audit-log.md)",
};

const MIB = 1024 * 1024;

/** A default as the settings table shows it: a number as it is (bytes in MiB), anything else as code. */
function shownDefault(row: SettingWithDefault<unknown>): string {
  if (row.unit === "bytes" && Number(row.default) % MIB === 0) return `${Number(row.default) / MIB} MiB`;
  return /^\d+$/.test(row.default) ? row.default : `\`${row.default}\``;
}

/** A row of the settings table; with a default, its parser reads the default when the setting is unset or empty. */
export function setting<T>(row: SettingWithDefault<T>): Setting<T>;
export function setting<T>(row: SettingWithoutDefault<T>): Setting<T>;
export function setting<T>(row: SettingWithDefault<T> | SettingWithoutDefault<T>): Setting<T> {
  if (!("default" in row)) return row;
  const { default: fallback, unit: _unit, parse, ...rest } = row;
  return { ...rest, shown: shownDefault(row), template: fallback, parse: (raw, env) => parse(raw || fallback, env) };
}

/** A setting's value as the config reads it (its default when unset): for a setting whose default depends on another. */
export const valueOf = <T>(row: Setting<T>, env: Env): T => row.parse(env[row.env], env);

export function int(name: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new Error(
      `Setting ${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got "${raw}"`,
    );
  return n;
}

export function duration(name: string, raw: string): number {
  const ms = parseDuration(raw);
  if (ms === null) throw new Error(`Setting ${name} must be a duration like 15m, 72h or 30d, got "${raw}"`);
  return ms;
}

/** The folder holding package.json, from here (lib/ in the sources, dist/lib/ when built). */
export function projectRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

export function onOff(name: string, raw: string): boolean {
  if (raw !== "on" && raw !== "off") throw new Error(`Setting ${name} must be on or off, got "${raw}"`);
  return raw === "on";
}

export function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  if (!allowed.includes(raw as T))
    throw new Error(`Setting ${name} must be ${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}, got "${raw}"`);
  return raw as T;
}

export function httpUrl(name: string, raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new Error(`Setting ${name} must be an http:// or https:// URL`);
  return raw.replace(/\/+$/, "");
}

/** The key a rotation replaced, and until when its tokens are accepted: both or neither. */
export function previousSigningKey(env: Env, previous: string | undefined): { secret: string | undefined; untilMs: number | undefined } {
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
export function serverStore(env: Env, raw: string | undefined): string | undefined {
  if (raw && env.DATABASE_URL) throw new Error("Set DATABASE_URL (PostgreSQL) or MONGO_URL (MongoDB), not both");
  if (raw && !/^mongodb(\+srv)?:\/\//.test(raw)) throw new Error("Setting MONGO_URL must be a mongodb:// or mongodb+srv:// URL");
  return raw || undefined;
}
