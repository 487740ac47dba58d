/**
 * What a backup of the embedded store carries besides the store: the key that seals authenticator
 * apps' secrets at rest (lib/auth/sealed.ts, `SEAL_SECRET`). A store restored without it holds
 * TOTP secrets nothing can open, and every account with an authenticator app is locked out of
 * sign-in but for its recovery codes.
 *
 * - The key generated under DATA_DIR (`seal-secret`, SEAL_SECRET unset) goes into the backup file,
 *   in a table of its own, with the store it seals: the backup is as private as DATA_DIR itself
 *   (written owner-only from its first byte, lib/ops/backup.ts), and a backup is for the day the
 *   disk that held DATA_DIR is gone. `restore` writes it back to DATA_DIR/seal-secret and takes the
 *   table out of the restored store (its pages overwritten), so that the store and the key are two
 *   files again.
 * - A configured key (SEAL_SECRET, or one derived on a split deployment) is the operator's to keep:
 *   the backup records only its id, and `restore` checks that the key it will run with opens the
 *   backup's sealed secrets.
 *
 * Either way `restore` refuses, naming what is missing, when the key it would leave in place does
 * not open them; `--without-seal-key` restores anyway (those accounts sign in with a recovery code
 * and enrol their app again). Design: docs/operator/backup-restore.md.
 */
import fs from "node:fs";
import path from "node:path";
import { createHash, randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import type { Config } from "../config";
import { sealKeys } from "../auth/secrets";
import { Sealer } from "../auth/sealed";
import { TOTP_SECRET_PURPOSE } from "../auth/factor-checks";

/** The generated seal key's file under DATA_DIR (lib/auth/secrets.ts). */
export const SEAL_KEY_FILE = "seal-secret";
/** The backup's own table: never in a running store. */
const TABLE = "backup_secrets";

/** The key this server seals with, and whether it is the one generated under DATA_DIR (carried in backups). */
export interface SealKeyInUse {
  key: Buffer;
  generated: boolean;
}

export function sealKeyInUse(config: Config): SealKeyInUse {
  return { key: sealKeys(config)[0]!, generated: !config.sealSecret && !config.transporter };
}

/** A key's id: public, stable, not the key (as the access-token keys' `kid`). */
export function sealKeyId(key: Buffer): string {
  return createHash("sha256").update("vault-service seal key id\0").update(key).digest("base64url").slice(0, 16);
}

/** Writes the seal key (when generated) and its id into the backup `file`, before it is linked into place. */
export function addBackupSecrets(file: string, seal: SealKeyInUse): void {
  const db = new DatabaseSync(file);
  try {
    db.exec(`CREATE TABLE ${TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const put = db.prepare(`INSERT INTO ${TABLE} (name, value) VALUES (?, ?)`);
    put.run("seal-key-id", sealKeyId(seal.key));
    if (seal.generated) put.run("seal-key", seal.key.toString("base64"));
  } finally {
    db.close();
  }
}

/** What a backup holds of the seal key, and of what it sealed. */
export interface BackupSeal {
  /** The key itself (a backup of a server with a generated key). */
  key?: Buffer;
  /** Its id (absent: a backup from before backups carried it). */
  keyId?: string;
  /** Authenticator-app secrets sealed in the backup. */
  sealedCount: number;
  /** One of them, to try a key on. */
  sample?: string;
}

export function readBackupSeal(file: string): BackupSeal {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const has = (table: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    const found: BackupSeal = { sealedCount: 0 };
    if (has(TABLE)) {
      const rows = db.prepare(`SELECT name, value FROM ${TABLE}`).all() as Array<{ name: string; value: string }>;
      const value = (name: string) => rows.find((r) => r.name === name)?.value;
      if (value("seal-key")) found.key = Buffer.from(value("seal-key")!, "base64");
      if (value("seal-key-id")) found.keyId = value("seal-key-id");
    }
    if (has("second_factors")) {
      const sealed = "FROM second_factors WHERE sealed_secret IS NOT NULL";
      found.sealedCount = (db.prepare(`SELECT count(*) AS n ${sealed}`).get() as { n: number }).n;
      const sample = db.prepare(`SELECT sealed_secret AS s ${sealed} LIMIT 1`).get() as { s: string } | undefined;
      if (sample) found.sample = sample.s;
    }
    return found;
  } finally {
    db.close();
  }
}

/** Whether `key` opens the backup's sealed secrets (trivially, when it holds none). */
export function opensSealed(seal: BackupSeal, key: Buffer | undefined): boolean {
  if (seal.sample === undefined) return true;
  return key !== undefined && new Sealer([key], () => 0).open(TOTP_SECRET_PURPOSE, seal.sample) !== null;
}

/**
 * What `restore` does with the seal key: write the backup's own to DATA_DIR/seal-secret, or leave
 * the key in place, whichever the restored server will seal with; or refuse, in a sentence, when
 * that key would not open the backup's sealed secrets.
 */
export function planSealKeyRestore(args: {
  backup: BackupSeal;
  /** SEAL_SECRET (or a derived key) on the restoring side. */
  configured?: Buffer;
  /** DATA_DIR/seal-secret as it is before the restore. */
  existing?: Buffer;
  withoutSealKey: boolean;
}): { write?: Buffer } {
  const { backup, configured, withoutSealKey } = args;
  const write = configured === undefined ? backup.key : undefined;
  const kept = configured ?? backup.key ?? args.existing;
  if (withoutSealKey || opensSealed(backup, kept)) return write ? { write } : {};
  const apps = `${backup.sealedCount} authenticator app secret(s)`;
  const lost = `; if that key is lost, pass --without-seal-key (those accounts then sign in with a recovery code and enrol their app again)`;
  if (configured !== undefined && backup.key)
    throw new Error(
      `The backup carries the key that seals its ${apps}, and SEAL_SECRET is another key: restore (and run the server) without SEAL_SECRET, so that the backup's key goes to DATA_DIR/${SEAL_KEY_FILE}${lost}`,
    );
  const which = backup.keyId
    ? `the key with id ${backup.keyId}`
    : `the key of the server it was made on (DATA_DIR/${SEAL_KEY_FILE}, or SEAL_SECRET there)`;
  throw new Error(
    `The backup's ${apps} are sealed with ${which}, which this backup does not carry and ${configured ? "SEAL_SECRET is not" : `DATA_DIR/${SEAL_KEY_FILE} does not hold`}: set SEAL_SECRET to that key, or copy that ${SEAL_KEY_FILE} file into DATA_DIR, and restore again${lost}`,
  );
}

/** The restoring side's keys: SEAL_SECRET as configured, and DATA_DIR/seal-secret if it exists. */
export function restoringKeys(config: Config): { configured?: Buffer; existing?: Buffer } {
  const file = path.join(config.dataDir, SEAL_KEY_FILE);
  const existing = fs.existsSync(file) ? Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64") : undefined;
  if (!config.sealSecret && !config.transporter) return existing ? { existing } : {};
  return { configured: sealKeys(config)[0]!, ...(existing && { existing }) };
}

/** Takes the backup's own table out of the store being restored, its pages overwritten. */
export function dropBackupSecrets(file: string): void {
  const db = new DatabaseSync(file);
  try {
    db.exec("PRAGMA secure_delete = ON");
    db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
  } finally {
    db.close();
  }
}

/** Puts `key` in place as DATA_DIR/seal-secret (0600), replacing any: written whole, then renamed. */
export function writeSealKey(dataDir: string, key: Buffer): void {
  const target = path.join(dataDir, SEAL_KEY_FILE);
  const incoming = `${target}.restore-${randomBytes(4).toString("hex")}`;
  try {
    const fd = fs.openSync(incoming, "wx", 0o600);
    try {
      fs.writeSync(fd, key.toString("base64") + "\n");
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(incoming, target);
  } finally {
    fs.rmSync(incoming, { force: true });
  }
}
