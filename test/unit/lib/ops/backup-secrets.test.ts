/**
 * What `restore` does with the seal key (lib/ops/backup-secrets.ts `planSealKeyRestore`), as a
 * table: what the backup holds and what the restoring side has, in; the key to write, or the
 * sentence it refuses with, out. The sealed value is real (lib/auth/sealed.ts), so "opens" is tried.
 */
import { randomBytes } from "node:crypto";
import { Sealer } from "../../../../lib/auth/sealed";
import { TOTP_SECRET_PURPOSE } from "../../../../lib/auth/factor-checks";
import { planSealKeyRestore, sealKeyId, type BackupSeal } from "../../../../lib/ops/backup-secrets";

const key = randomBytes(32);
const other = randomBytes(32);
const sample = new Sealer([key], () => 0).seal(TOTP_SECRET_PURPOSE, "JBSWY3DPEHPK3PXP");
const id = sealKeyId(key);

/** Backups: with the key, with its id only, from before either, and one with nothing sealed. */
const carried: BackupSeal = { key, keyId: id, sealedCount: 2, sample };
const idOnly: BackupSeal = { keyId: id, sealedCount: 2, sample };
const old: BackupSeal = { sealedCount: 2, sample };
const noApps: BackupSeal = { sealedCount: 0 };

type Side = { configured?: Buffer; existing?: Buffer; withoutSealKey?: boolean };

test.each<[string, BackupSeal, Side, "writes the backup's key" | "keeps the key in place" | RegExp]>([
  ["the key carried, restored without SEAL_SECRET", carried, {}, "writes the backup's key"],
  ["the key carried, over another seal-secret", carried, { existing: other }, "writes the backup's key"],
  ["the key carried, and SEAL_SECRET is that key", carried, { configured: key }, "keeps the key in place"],
  [
    "the key carried, and SEAL_SECRET is another",
    carried,
    { configured: other },
    /SEAL_SECRET is another key: restore \(and run the server\) without SEAL_SECRET/,
  ],
  ["its id only, SEAL_SECRET is that key", idOnly, { configured: key }, "keeps the key in place"],
  [
    "its id only, SEAL_SECRET unset",
    idOnly,
    {},
    new RegExp(`sealed with the key with id ${id}, which this backup does not carry and DATA_DIR/seal-secret does not hold`),
  ],
  [
    "its id only, SEAL_SECRET another",
    idOnly,
    { configured: other },
    /which this backup does not carry and SEAL_SECRET is not: set SEAL_SECRET to that key/,
  ],
  ["an old backup, its key copied into DATA_DIR", old, { existing: key }, "keeps the key in place"],
  ["an old backup, no key", old, {}, /sealed with the key of the server it was made on .*--without-seal-key/],
  ["an old backup, another seal-secret in DATA_DIR", old, { existing: other }, /2 authenticator app secret\(s\)/],
  ["an old backup, no key, --without-seal-key", old, { withoutSealKey: true }, "keeps the key in place"],
  [
    "the key carried, another SEAL_SECRET, --without-seal-key",
    carried,
    { configured: other, withoutSealKey: true },
    "keeps the key in place",
  ],
  ["nothing sealed, no key anywhere", noApps, {}, "keeps the key in place"],
])("%s", (_what, backup, side, expected) => {
  const plan = () => planSealKeyRestore({ backup, ...side, withoutSealKey: side.withoutSealKey ?? false });
  if (expected instanceof RegExp) return expect(plan).toThrow(expected);
  expect(plan()).toEqual(expected === "writes the backup's key" ? { write: key } : {});
});
