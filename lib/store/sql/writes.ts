/** Writes that several aggregates make inside their transactions (vaults, and an account's password change). */
import type { UserId, VaultId } from "../../domain/ids";
import { sql } from "./kysely";
import type { RosterEntry } from "../../domain/vaults/roster";
import type { Db } from "./context";

/** Stores a checked link and makes it the vault's head, in the caller's transaction. */
export async function appendRosterLink(trx: Db, vaultId: VaultId, entry: RosterEntry, now: string): Promise<void> {
  await trx
    .insertInto("roster_links")
    .values({ vault_id: vaultId, seq: entry.seq, hash: entry.hash, link: entry.json, created_at: now })
    .execute();
  await trx.updateTable("vaults").set({ roster_seq: entry.seq, roster_hash: entry.hash }).where("vault_id", "=", vaultId).execute();
}

/**
 * Locks the account's row (a write that changes nothing) and answers its key version: a password
 * change, which writes the row, and this transaction come one after the other.
 */
export async function lockAccount(trx: Db, userId: UserId): Promise<number> {
  await trx
    .updateTable("users")
    .set({ account_version: sql`account_version` })
    .where("user_id", "=", userId)
    .execute();
  const row = await trx.selectFrom("users").select("account_version").where("user_id", "=", userId).executeTakeFirst();
  return Number(row?.account_version ?? 0);
}

/** The user's personal vaults, by id (read under `lockAccount`, two creates at once see each other's). */
export async function personalVaultIds(trx: Db, userId: UserId): Promise<VaultId[]> {
  const rows = await trx
    .selectFrom("vault_members as m")
    .innerJoin("vaults as v", "v.vault_id", "m.vault_id")
    .select("m.vault_id")
    .where("m.user_id", "=", userId)
    .where("v.type", "=", "personal")
    .orderBy("m.vault_id")
    .execute();
  return rows.map((r) => r.vault_id);
}

/** Every vault the user is a member of, by id (a key rotation wraps each one's key again). */
export async function memberVaultIds(trx: Db, userId: UserId): Promise<VaultId[]> {
  const rows = await trx.selectFrom("vault_members").select("vault_id").where("user_id", "=", userId).orderBy("vault_id").execute();
  return rows.map((r) => r.vault_id);
}

/** The user's own wrap of a vault, replaced (a password change, a key rotation), with its link if the vault is signed. */
export async function replaceOwnWrap(
  trx: Db,
  userId: UserId,
  v: { vaultId: VaultId; encryptedVaultKey: string; wrapSignature: string },
  roster: RosterEntry | undefined,
  now: string,
): Promise<void> {
  if (roster) await appendRosterLink(trx, v.vaultId, roster, now);
  await trx
    .updateTable("vault_members")
    .set({ encrypted_vault_key: v.encryptedVaultKey, wrap_signature: v.wrapSignature, sender_id: userId, updated_at: now })
    .where("vault_id", "=", v.vaultId)
    .where("user_id", "=", userId)
    .execute();
  await trx.updateTable("vaults").set({ updated_at: now }).where("vault_id", "=", v.vaultId).execute();
}
