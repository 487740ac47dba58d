/** A user's key log, and what a key rotation locks and writes in vaults, on SQL (MongoDB: ../mongo/key-log.ts). */
import type { UserId, VaultId } from "../../domain/ids";
import type { HeldVault as HeldRotationVault, KeyLogEntry, KeyRotation } from "../../domain/accounts/key-rotation";
import type { RosterEntry } from "../../domain/vaults/roster";
import type { Db, SqlContext } from "./context";
import { memberVaultIds, replaceOwnWrap } from "./writes";

/** The user's stored key log, oldest first. */
export async function keyLogIn(db: Db, userId: UserId): Promise<KeyLogEntry[]> {
  const rows = await db.selectFrom("key_log").select("entry").where("user_id", "=", userId).orderBy("version").execute();
  return rows.map((r) => JSON.parse(r.entry) as KeyLogEntry);
}

export async function insertKeyLogEntry(trx: Db, entry: KeyLogEntry, hash: string, now: string): Promise<void> {
  await trx
    .insertInto("key_log")
    .values({ user_id: entry.userId as UserId, version: entry.version, hash, entry: JSON.stringify(entry), created_at: now })
    .execute();
}

/** Every vault the user is in, each locked in id order (as every vault write locks its vault before the account), with the wraps they sent there. */
export async function lockHeldVaults(c: SqlContext, trx: Db, userId: UserId): Promise<HeldRotationVault[]> {
  const held: HeldRotationVault[] = [];
  for (const vaultId of await memberVaultIds(trx, userId)) {
    const snapshot = await c.snapshot(trx, vaultId);
    if (!snapshot) continue;
    const sentWraps = await trx
      .selectFrom("vault_members")
      .select(["user_id", "encrypted_vault_key"])
      .where("vault_id", "=", vaultId)
      .where("sender_id", "=", userId)
      .execute();
    held.push({ snapshot, sentWraps: sentWraps.map((w) => ({ userId: w.user_id, encryptedVaultKey: w.encrypted_vault_key })) });
  }
  return held;
}

/** A rotation's vault writes: each vault's new wrap with its roster link, and the wraps re-signed. */
export async function writeRotatedWraps(
  trx: Db,
  userId: UserId,
  rotation: KeyRotation,
  rosters: ReadonlyMap<VaultId, RosterEntry | undefined>,
  now: string,
): Promise<void> {
  for (const v of rotation.vaults) {
    await replaceOwnWrap(trx, userId, v, rosters.get(v.vaultId), now);
    for (const r of v.resigned)
      await trx
        .updateTable("vault_members")
        .set({ wrap_signature: r.wrapSignature })
        .where("vault_id", "=", v.vaultId)
        .where("user_id", "=", r.userId)
        .where("sender_id", "=", userId)
        .execute();
  }
}
