/** The item writes' statements and rows on SQL, and the lock every write takes first (items.ts, item-creates.ts). */
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import { decideItemWriteStep, type ItemChange, type ItemLink, type LockedForItemLog } from "../../domain/items/log";
import * as itemRules from "../../domain/items/decisions";
import { itemChangedMeanwhile } from "../../domain/items/refusals";
import type { LockedForItems, StoredItemState } from "../../domain/items/decisions";
import { appendItemLink, chunks, itemLogHead, rosterHeadOf, type Db, type SqlContext } from "./context";
import { sizesOfRow } from "./item-history";
import { param, prepared } from "./prepared";
import type { ItemsTable } from "./schema";

/** A row as the item rules read it. */
export const rowState = (r: ItemsTable): StoredItemState => ({
  revision: Number(r.revision),
  encryptedName: r.encrypted_name,
  encryptedData: r.encrypted_data,
});

// The item writes' statements, compiled once (prepared.ts).
const ITEM_ROW = prepared("item_row", (db) =>
  db.selectFrom("items").selectAll().where("vault_id", "=", param<VaultId>("vaultId")).where("item_id", "=", param<ItemId>("itemId")),
);
/** The actor's membership, as a write checks it once the vault is locked: one taken out of the organization acts no more. */
const actorOf = (db: Db) =>
  db
    .selectFrom("vault_members as m")
    .innerJoin("users as u", "u.user_id", "m.user_id")
    .select(["m.role", "u.signing_public_key"])
    .where("m.vault_id", "=", param<VaultId>("vaultId"))
    .where("m.user_id", "=", param<UserId>("actorId"))
    .where("u.removed_at", "is", null);
export const ACTOR = prepared("item_actor", actorOf);
/**
 * The same and, in the same statement, where the item id is already used (live, or in the trash):
 * what a create decides on. One statement, read after the lock, so under READ COMMITTED it sees
 * every write committed before the lock was granted, as two reads after it would.
 */
const ACTOR_AND_PRESENCE = prepared("item_actor_presence", (db) =>
  actorOf(db).select((eb) => {
    const usedIn = (table: "items" | "item_trash") =>
      eb.exists(
        eb
          .selectFrom(table)
          .select("item_id")
          .where("vault_id", "=", param<VaultId>("vaultId"))
          .where("item_id", "=", param<ItemId>("itemId")),
      );
    return [usedIn("items").as("taken"), usedIn("item_trash").as("in_trash")];
  }),
);
/** One item of a vault, if there is such an item in that vault. */
export async function itemRow(db: Db, vaultId: VaultId, itemId: ItemId): Promise<ItemsTable | undefined> {
  return (await ITEM_ROW.run(db, { vaultId, itemId })).rows[0];
}

/** What an update writes over an item's row. */
export type ItemRowWrite = Pick<ItemsTable, "encrypted_data" | "encrypted_name" | "revision" | "key_version" | "updated_at">;

/**
 * An update's write: made only while the row is still at the revision `read` was read at, under
 * the vault's lock, else `itemChangedMeanwhile` (the store's own race). Every writer of an item's
 * row locks its vault first, so this condition is the last line behind the lock.
 */
export async function writeItemAt(
  trx: Db,
  read: Pick<ItemsTable, "vault_id" | "item_id" | "revision">,
  write: ItemRowWrite,
): Promise<void> {
  const res = await trx
    .updateTable("items")
    .set({
      encrypted_data: write.encrypted_data,
      encrypted_name: write.encrypted_name,
      revision: write.revision,
      key_version: write.key_version,
      updated_at: write.updated_at,
    })
    .where("vault_id", "=", read.vault_id)
    .where("item_id", "=", read.item_id)
    .where("revision", "=", read.revision)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw itemChangedMeanwhile();
}

/** A new item's row: revision and key version as decided under the lock. */
export function newItemRow(
  c: { vaultId: VaultId; itemId: ItemId; write: { encryptedData: string; encryptedName: string }; now: string },
  revision: number,
  keyVersion: number,
): ItemsTable {
  return {
    item_id: c.itemId,
    vault_id: c.vaultId,
    encrypted_data: c.write.encryptedData,
    encrypted_name: c.write.encryptedName,
    revision,
    key_version: keyVersion,
    created_at: c.now,
    updated_at: c.now,
  };
}

/** Of `itemIds`, those the vault's items hold (`taken`) and those its trash holds (`inTrash`). */
export async function usedIds(
  trx: Db,
  vaultId: VaultId,
  itemIds: readonly ItemId[],
): Promise<{ taken: Set<string>; inTrash: Set<string> }> {
  const taken = new Set<string>();
  const inTrash = new Set<string>();
  for (const chunk of chunks(itemIds, 500)) {
    const [live, trashed] = await Promise.all([
      trx.selectFrom("items").select("item_id").where("vault_id", "=", vaultId).where("item_id", "in", chunk).execute(),
      trx.selectFrom("item_trash").select("item_id").where("vault_id", "=", vaultId).where("item_id", "in", chunk).execute(),
    ]);
    for (const r of live) taken.add(r.item_id);
    for (const r of trashed) inTrash.add(r.item_id);
  }
  return { taken, inTrash };
}

/**
 * Locks the vault and checks the caller's membership. A write that may grow the vault takes it
 * exclusively, so that two writes cannot both fit under the vault's limit and together pass it;
 * an export's record takes it shared (never beside a rekey).
 */
export async function lockForItems(
  c: SqlContext,
  trx: Db,
  vaultId: VaultId,
  actorId: UserId,
  mode: "share" | "update",
  /** A create's item id: where it is already used is read with the membership. */
  creating?: ItemId,
): Promise<LockedForItems & { sizesAtLock: ReturnType<typeof sizesOfRow>; presence?: { taken: boolean; inTrash: boolean } }> {
  const vault = await c.engine.lockVault(trx, vaultId, mode);
  const member =
    vault &&
    (creating === undefined
      ? (await ACTOR.run(trx, { vaultId, actorId })).rows[0]
      : (await ACTOR_AND_PRESENCE.run(trx, { vaultId, actorId, itemId: creating })).rows[0]);
  // A non-member (or a vault that is not there) is refused here, before anything else is read.
  if (!vault || !member) itemRules.decideItemRead(null);
  const found = member as { taken?: unknown; in_trash?: unknown };
  return {
    // EXISTS answers 1 or 0 on SQLite, true or false on PostgreSQL.
    ...(creating !== undefined && { presence: { taken: Number(found.taken) === 1, inTrash: Number(found.in_trash) === 1 } }),
    role: member.role,
    keyVersion: Number(vault.key_version),
    itemLog: itemLogHead(vaultId, vault),
    roster: rosterHeadOf(vault),
    signingPublicKey: member.signing_public_key,
    // As read with the lock: what the write's limits are checked against, without a read of their
    // own. A snapshot: a step that writes items, trash or revisions before its use would need a fresh read.
    sizesAtLock: sizesOfRow(vault),
  };
}

/** The write's step in the vault's item log (decideItemLinkStep), stored in the write's transaction. */
export async function logStep(
  trx: Db,
  locked: LockedForItemLog,
  args: { vaultId: VaultId; actorId: UserId; itemLink?: ItemLink; now: string },
  change: ItemChange,
): Promise<void> {
  const entry = decideItemWriteStep(args, locked, change);
  if (entry) await appendItemLink(trx, args.vaultId, entry, args.now);
}
