/**
 * Every setting of the service in one table (`SETTINGS`, the files of settings/ in order): its
 * name, default, parser and meaning in one row. The config is parsed from it, and the operators'
 * settings table (docs/operator/configuration.md) and `.env.template` are written from it
 * (`npm run settings`; test/unit/lib/config.test.ts fails when they are stale). Settings come from
 * the environment; each default works on a fresh machine.
 */
import { vaultLimitsProblem } from "../domain/vaults/limits";
import type { Env } from "./parse";
import { OPERATING_SETTINGS } from "./settings/operating";
import { SERVICE_SETTINGS } from "./settings/service";
import { SIGN_IN_SETTINGS } from "./settings/sign-in";
import { SPLIT_SETTINGS } from "./settings/split-deployment";
import { VAULT_SETTINGS } from "./settings/vaults";
import { ATTACHMENT_SETTINGS } from "./settings/attachments";
import { SEND_SETTINGS } from "./settings/sends";

export { SETTING_GROUPS, type LogLevel, type RegistrationMode, type Setting, type SettingGroup } from "./parse";

/** Every setting, in the order the settings table and `.env.template` list them. */
export const SETTINGS = {
  ...SERVICE_SETTINGS,
  ...SIGN_IN_SETTINGS,
  ...VAULT_SETTINGS,
  ...ATTACHMENT_SETTINGS,
  ...SEND_SETTINGS,
  ...OPERATING_SETTINGS,
  ...SPLIT_SETTINGS,
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
