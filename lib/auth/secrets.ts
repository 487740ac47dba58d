import fs from "node:fs";
import path from "node:path";
import { createHmac, randomBytes } from "node:crypto";
import type { Config } from "../config";
import { ensureDataDir } from "../config/data-dir";
import type { SigningKeys } from "./access-tokens";

/** The access-token keys the settings name: JWT_SECRET (or the generated one), and the key it replaced. */
export function signingKeys(config: Config): SigningKeys {
  const current = loadOrCreateSecret(config.jwtSecret, config.dataDir);
  if (!config.jwtPreviousSecret) return { current };
  const previous = Buffer.from(config.jwtPreviousSecret, "base64");
  if (previous.length < 32) throw new Error("Setting JWT_PREVIOUS_SECRET must be base64 of at least 32 bytes");
  return { current, previous: { secret: previous, untilMs: config.jwtPreviousSecretUntilMs! } };
}

/**
 * The server's signing secret: configured (`JWT_SECRET`, base64), or created on first start and
 * kept under DATA_DIR (mode 0600), so issued tokens survive a restart.
 */
export function loadOrCreateSecret(
  configured: string | undefined,
  dataDir: string,
  fileName = "jwt-secret",
  setting = "JWT_SECRET",
): Buffer {
  if (configured) {
    const secret = Buffer.from(configured, "base64");
    if (secret.length < 32) throw new Error(`Setting ${setting} must be base64 of at least 32 bytes`);
    return secret;
  }
  ensureDataDir(dataDir);
  const file = path.join(dataDir, fileName);
  try {
    // 'wx': of several processes starting at once on one DATA_DIR, one writes and all read that.
    fs.writeFileSync(file, randomBytes(32).toString("base64") + "\n", { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  fs.chmodSync(file, 0o600); // also when an older start left it readable by others
  const secret = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64");
  if (secret.length < 32) throw new Error(`${file} does not hold a secret of at least 32 bytes`);
  return secret;
}

/**
 * The key that seals second-factor secrets at rest (lib/auth/sealed.ts): SEAL_SECRET; unset, one
 * generated under DATA_DIR (`seal-secret`), or on a split deployment one derived from JWT_SECRET,
 * which every node has. Unlike the access-token key it must outlive rotations: an operator who
 * rotates JWT_SECRET sets SEAL_SECRET first (README "Rotating the signing key").
 */
export function sealKeys(config: Config): Buffer[] {
  if (config.sealSecret) return [loadOrCreateSecret(config.sealSecret, config.dataDir, "seal-secret", "SEAL_SECRET")];
  if (!config.transporter) return [loadOrCreateSecret(undefined, config.dataDir, "seal-secret", "SEAL_SECRET")];
  // Derived: during a rotation the previous key's derivation still opens what it sealed.
  const derive = (secret: Uint8Array) => createHmac("sha256", secret).update("seal-secret-v1").digest();
  const keys = signingKeys(config);
  return [derive(keys.current), ...(keys.previous ? [derive(keys.previous.secret)] : [])];
}
