/**
 * Item history and the trash on SQL (the rules: lib/domain/items/history.ts). Each function runs in
 * the caller's transaction, under the vault's lock the caller took.
 */
import { sql } from "./kysely";
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import { decideRekeyExtras, historyToDrop, revisionsBeyond, type RevisionKey } from "../../domain/items/history";
import type { VaultLimits, VaultSize } from "../../domain/vaults/limits";
import type { ItemRecord, ItemRevisionRecord, RekeyInput, TrashedItemRecord } from "../port";
import { chunks, type Db } from "./context";
import type { ItemRevisionsTable, ItemsTable, ItemTrashTable, VaultsTable } from "./schema";

/**
 * A row's stored size, as `itemBytes` (lib/domain/vaults/limits.ts) counts it, in SQL: octet_length
 * reads no value (the sizes are in the rows' headers), and base64 is one byte a character.
 */
const ITEM_BYTES = sql<number>`octet_length(encrypted_data) + octet_length(encrypted_name)`;

export function toRevision(r: ItemRevisionsTable): ItemRevisionRecord {
  return {
    itemId: r.item_id,
    vaultId: r.vault_id,
    revision: Number(r.revision),
    encryptedData: r.encrypted_data,
    encryptedName: r.encrypted_name,
    keyVersion: Number(r.key_version),
    createdAt: r.created_at,
    replacedAt: r.replaced_at,
  };
}

/** An item row as the port answers it (its trash row too, with when and by whom it was deleted). */
export function toItem(r: ItemsTable): ItemRecord {
  return {
    itemId: r.item_id,
    vaultId: r.vault_id,
    encryptedData: r.encrypted_data,
    encryptedName: r.encrypted_name,
    revision: Number(r.revision),
    keyVersion: Number(r.key_version),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toTrashed(r: ItemTrashTable): TrashedItemRecord {
  return { ...toItem(r), deletedAt: r.deleted_at, deletedBy: r.deleted_by };
}

export function trashRow(db: Db, vaultId: VaultId, itemId: ItemId): Promise<ItemTrashTable | undefined> {
  return db.selectFrom("item_trash").selectAll().where("vault_id", "=", vaultId).where("item_id", "=", itemId).executeTakeFirst();
}

/** The sizes a vault row keeps (as read with its lock: LOCKED_VAULT_COLUMNS). */
export function sizesOfRow(r: Pick<VaultsTable, "firm_items" | "firm_bytes" | "history_items" | "history_bytes">): {
  firm: VaultSize;
  history: VaultSize;
} {
  const n = (v: unknown): number => {
    const x = Number(v);
    // A column left out of the read would turn every limit off (NaN compares false): fail instead.
    if (!Number.isFinite(x)) throw new Error("a vault's size counters were not read with it");
    return x;
  };
  return {
    firm: { items: n(r.firm_items), bytes: n(r.firm_bytes) },
    history: { items: n(r.history_items), bytes: n(r.history_bytes) },
  };
}

/** The vault's sizes as its row keeps them (triggers of migration 017 move them with every row written). */
async function sizesOf(db: Db, vaultId: VaultId): Promise<{ firm: VaultSize; history: VaultSize }> {
  const r = await db
    .selectFrom("vaults")
    .select(["firm_items", "firm_bytes", "history_items", "history_bytes"])
    .where("vault_id", "=", vaultId)
    .executeTakeFirst();
  return {
    firm: { items: Number(r?.firm_items ?? 0), bytes: Number(r?.firm_bytes ?? 0) },
    history: { items: Number(r?.history_items ?? 0), bytes: Number(r?.history_bytes ?? 0) },
  };
}

/** Everything the vault stores: items, trash and history, entries and bytes (a rekey re-encrypts all of it). */
async function storedSizeOf(db: Db, vaultId: VaultId): Promise<VaultSize> {
  const { firm, history } = await sizesOf(db, vaultId);
  return { items: firm.items + history.items, bytes: firm.bytes + history.bytes };
}

export const storedBytesOf = async (db: Db, vaultId: VaultId): Promise<number> => (await storedSizeOf(db, vaultId)).bytes;

/** Keeps the revision an update replaces (`row`, as it was), and drops the item's revisions beyond `keep`. */
export async function keepRevision(trx: Db, row: ItemsTable, keep: number, now: string): Promise<void> {
  if (keep > 0)
    await trx
      .insertInto("item_revisions")
      .values({
        vault_id: row.vault_id,
        item_id: row.item_id,
        revision: row.revision,
        encrypted_data: row.encrypted_data,
        encrypted_name: row.encrypted_name,
        key_version: row.key_version,
        created_at: row.updated_at,
        replaced_at: now,
      })
      .execute();
  const stored = await trx
    .selectFrom("item_revisions")
    .select("revision")
    .where("vault_id", "=", row.vault_id)
    .where("item_id", "=", row.item_id)
    .execute();
  const drop = revisionsBeyond(
    stored.map((r) => Number(r.revision)),
    keep,
  );
  if (drop.length > 0)
    await trx
      .deleteFrom("item_revisions")
      .where("vault_id", "=", row.vault_id)
      .where("item_id", "=", row.item_id)
      .where("revision", "in", drop)
      .execute();
}

/** Drops the vault's oldest revisions while it holds more than its limits (a write made it grow; `firm`: its items and trash after the write). */
export async function makeRoom(
  trx: Db,
  vaultId: VaultId,
  limits: VaultLimits,
  firm: VaultSize,
  /** The history's size, where the caller knows it has not changed since the vault was locked (read again otherwise). */
  knownHistory?: VaultSize,
): Promise<void> {
  const history = knownHistory ?? (await sizesOf(trx, vaultId)).history;
  const size = { items: firm.items + history.items, bytes: firm.bytes + history.bytes };
  const over = { bytes: size.bytes - limits.maxBytes, items: size.items - limits.maxItems };
  if (over.bytes <= 0 && over.items <= 0) return;
  const oldest = await trx
    .selectFrom("item_revisions")
    .select(["item_id", "revision", ITEM_BYTES.as("bytes")])
    .where("vault_id", "=", vaultId)
    .orderBy("replaced_at")
    .orderBy("item_id")
    .orderBy("revision")
    .execute();
  const drop = historyToDrop(
    over,
    oldest.map((r) => ({ itemId: r.item_id, revision: Number(r.revision), bytes: Number(r.bytes) })),
  );
  await deleteRevisions(trx, vaultId, drop);
}

async function deleteRevisions(trx: Db, vaultId: VaultId, keys: readonly RevisionKey[]): Promise<void> {
  for (const chunk of chunks(keys, 200))
    await trx
      .deleteFrom("item_revisions")
      .where("vault_id", "=", vaultId)
      .where((eb) => eb.or(chunk.map((k) => eb.and([eb("item_id", "=", k.itemId as ItemId), eb("revision", "=", k.revision)]))))
      .execute();
}

/** Moves an item row (as read under the lock) to the trash. */
export async function moveToTrash(trx: Db, row: ItemsTable, actorId: UserId, now: string): Promise<void> {
  await trx
    .insertInto("item_trash")
    .values({ ...row, deleted_at: now, deleted_by: actorId })
    .execute();
}

/** A rekey's history and trash: the entries it re-encrypted stored under the new key version, every other one dropped. */
export async function rekeyHistoryAndTrash(
  trx: Db,
  vaultId: VaultId,
  rekey: Pick<RekeyInput, "history" | "trash">,
  keyVersion: number,
  batchRows: number,
): Promise<void> {
  const [history, trash] = await Promise.all([
    trx.selectFrom("item_revisions").select(["item_id", "revision"]).where("vault_id", "=", vaultId).execute(),
    trx.selectFrom("item_trash").select("item_id").where("vault_id", "=", vaultId).execute(),
  ]);
  const given = { history: rekey.history ?? [], trash: rekey.trash ?? [] };
  const { dropHistory, dropTrash } = decideRekeyExtras(
    { history: history.map((r) => ({ itemId: r.item_id, revision: Number(r.revision) })), trash: trash.map((r) => r.item_id) },
    given,
  );
  await deleteRevisions(trx, vaultId, dropHistory);
  for (const chunk of chunks(dropTrash, 200)) {
    await trx
      .deleteFrom("item_revisions")
      .where("vault_id", "=", vaultId)
      .where("item_id", "in", chunk as ItemId[])
      .execute();
    await trx
      .deleteFrom("item_trash")
      .where("vault_id", "=", vaultId)
      .where("item_id", "in", chunk as ItemId[])
      .execute();
  }
  for (const chunk of chunks(given.history, batchRows)) {
    const values = sql.join(chunk.map((r) => sql`(${r.itemId}, ${r.revision}, ${r.encryptedData}, ${r.encryptedName})`));
    const res = await sql`UPDATE item_revisions SET encrypted_data = v.column3, encrypted_name = v.column4, key_version = ${keyVersion}
      FROM (VALUES ${values}) AS v WHERE item_revisions.vault_id = ${vaultId} AND item_revisions.item_id = v.column1
      AND item_revisions.revision = CAST(v.column2 AS INTEGER)`.execute(trx);
    if (Number(res.numAffectedRows) !== chunk.length) throw new Error("rekey: history rows changed under the lock");
  }
  for (const chunk of chunks(given.trash, batchRows)) {
    const values = sql.join(chunk.map((t) => sql`(${t.itemId}, ${t.encryptedData}, ${t.encryptedName})`));
    const res = await sql`UPDATE item_trash SET encrypted_data = v.column2, encrypted_name = v.column3, key_version = ${keyVersion}
      FROM (VALUES ${values}) AS v WHERE item_trash.vault_id = ${vaultId} AND item_trash.item_id = v.column1`.execute(trx);
    if (Number(res.numAffectedRows) !== chunk.length) throw new Error("rekey: trash rows changed under the lock");
  }
}
