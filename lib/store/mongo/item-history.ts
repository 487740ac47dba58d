/**
 * Item history and the trash on MongoDB (the rules: lib/domain/items/history.ts; SQL:
 * ../sql/item-history.ts). Each function runs in the caller's transaction (`session`), after the
 * caller locked the vault (`lockVault`).
 */
import type { ClientSession, Collection } from "mongodb";
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import { decideRekeyExtras, historyToDrop, revisionsBeyond, type RevisionKey } from "../../domain/items/history";
import type { VaultLimits, VaultSize } from "../../domain/vaults/limits";
import type { RekeyInput } from "../port";
import type { MongoContext } from "./context";
import { itemKey, itemRevisionKey, type ItemDoc, type ItemRevisionDoc, type TrashedItemDoc } from "./documents";

/** Ids per `$in` of a delete: far below the 16 MB a command may hold, whatever the vault's size. */
const IDS_PER_DELETE = 1_000;

/** An entry's stored size, as `itemBytes` (lib/domain/vaults/limits.ts) counts it: base64 is one byte a character. */
const BYTES = { $add: [{ $strLenBytes: "$encryptedData" }, { $strLenBytes: "$encryptedName" }] };

/** `all` in slices of at most `size`, in order. */
export function* chunks<T>(all: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
}

/** A vault's item in its trash, if it is there. */
export function trashDoc(c: MongoContext, session: ClientSession, vaultId: VaultId, itemId: ItemId): Promise<TrashedItemDoc | null> {
  return c.itemTrash.findOne({ _id: itemKey(vaultId, itemId) }, { session });
}

/** What one collection holds of the vault: entries, and their ciphertexts' bytes. */
async function sizeOf<T extends ItemDoc | ItemRevisionDoc>(
  coll: Collection<T>,
  session: ClientSession,
  vaultId: VaultId,
): Promise<VaultSize> {
  const [r] = await coll
    .aggregate<{ items: number; bytes: number }>(
      [{ $match: { vaultId } }, { $group: { _id: null, items: { $sum: 1 }, bytes: { $sum: BYTES } } }],
      { session },
    )
    .toArray();
  return { items: r?.items ?? 0, bytes: r?.bytes ?? 0 };
}

/** What counts against a write's growth: the items and the trash (history gives way, `makeRoom`). */
export async function firmSizeOf(c: MongoContext, session: ClientSession, vaultId: VaultId): Promise<VaultSize> {
  // One after the other: a session runs one operation at a time.
  const items = await sizeOf(c.items, session, vaultId);
  const trash = await sizeOf(c.itemTrash, session, vaultId);
  return { items: items.items + trash.items, bytes: items.bytes + trash.bytes };
}

/** Everything the vault stores: items, trash and history, in bytes (a rekey re-encrypts all of it). */
export async function storedBytesOf(c: MongoContext, session: ClientSession, vaultId: VaultId): Promise<number> {
  const firm = await firmSizeOf(c, session, vaultId);
  const history = await sizeOf(c.itemRevisions, session, vaultId);
  return firm.bytes + history.bytes;
}

/** Keeps the revision an update replaces (`doc`, as it was read under the lock), and drops the item's revisions beyond `keep`. */
export async function keepRevision(c: MongoContext, session: ClientSession, doc: ItemDoc, keep: number, now: string): Promise<void> {
  if (keep > 0)
    await c.itemRevisions.insertOne(
      {
        _id: itemRevisionKey(doc.vaultId, doc.itemId, doc.revision),
        vaultId: doc.vaultId,
        itemId: doc.itemId,
        revision: doc.revision,
        encryptedData: doc.encryptedData,
        encryptedName: doc.encryptedName,
        keyVersion: doc.keyVersion,
        createdAt: doc.updatedAt,
        replacedAt: now,
      },
      { session },
    );
  const stored = await c.itemRevisions
    .find({ vaultId: doc.vaultId, itemId: doc.itemId }, { session, projection: { revision: 1 } })
    .toArray();
  const drop = revisionsBeyond(
    stored.map((r) => r.revision),
    keep,
  );
  if (drop.length > 0)
    await deleteRevisions(
      c,
      session,
      doc.vaultId,
      drop.map((revision) => ({ itemId: doc.itemId, revision })),
    );
}

/** Drops the vault's oldest revisions while it holds more than its limits (a write made it grow; `firm`: its items and trash after the write). */
export async function makeRoom(
  c: MongoContext,
  session: ClientSession,
  vaultId: VaultId,
  limits: VaultLimits,
  firm: VaultSize,
): Promise<void> {
  const history = await sizeOf(c.itemRevisions, session, vaultId);
  const size = { items: firm.items + history.items, bytes: firm.bytes + history.bytes };
  const over = { bytes: size.bytes - limits.maxBytes, items: size.items - limits.maxItems };
  if (over.bytes <= 0 && over.items <= 0) return;
  const oldest = await c.itemRevisions
    .aggregate<{ itemId: ItemId; revision: number; bytes: number }>(
      [
        { $match: { vaultId } },
        // Sizes first, so that the sort holds no ciphertext.
        { $project: { _id: 0, itemId: 1, revision: 1, replacedAt: 1, bytes: BYTES } },
        { $sort: { replacedAt: 1, itemId: 1, revision: 1 } },
      ],
      { session },
    )
    .toArray();
  await deleteRevisions(c, session, vaultId, historyToDrop(over, oldest));
}

async function deleteRevisions(c: MongoContext, session: ClientSession, vaultId: VaultId, keys: readonly RevisionKey[]): Promise<void> {
  for (const chunk of chunks(keys, IDS_PER_DELETE))
    await c.itemRevisions.deleteMany(
      { vaultId, _id: { $in: chunk.map((k) => itemRevisionKey(vaultId, k.itemId as ItemId, k.revision)) } },
      { session },
    );
}

/** Moves an item document (as read under the lock, and deleted from `items`) to the trash. */
export async function moveToTrash(c: MongoContext, session: ClientSession, doc: ItemDoc, actorId: UserId, now: string): Promise<void> {
  await c.itemTrash.insertOne({ ...doc, deletedAt: now, deletedBy: actorId }, { session });
}

/** Deletes trashed items of the vault for good, with their history. */
export async function deleteFromTrash(
  c: MongoContext,
  session: ClientSession,
  vaultId: VaultId,
  itemIds: readonly ItemId[],
): Promise<number> {
  let deleted = 0;
  for (const chunk of chunks(itemIds, IDS_PER_DELETE)) {
    await c.itemRevisions.deleteMany({ vaultId, itemId: { $in: chunk } }, { session });
    deleted += (await c.itemTrash.deleteMany({ _id: { $in: chunk.map((id) => itemKey(vaultId, id)) } }, { session })).deletedCount;
  }
  return deleted;
}

/** A rekey's history and trash: the entries it re-encrypted stored under the new key version, every other one dropped. */
export async function rekeyHistoryAndTrash(
  c: MongoContext,
  session: ClientSession,
  vaultId: VaultId,
  rekey: Pick<RekeyInput, "history" | "trash">,
  keyVersion: number,
): Promise<void> {
  const history = await c.itemRevisions.find({ vaultId }, { session, projection: { itemId: 1, revision: 1 } }).toArray();
  const trash = await c.itemTrash.find({ vaultId }, { session, projection: { itemId: 1 } }).toArray();
  const given = { history: rekey.history ?? [], trash: rekey.trash ?? [] };
  const { dropHistory, dropTrash } = decideRekeyExtras(
    { history: history.map((r) => ({ itemId: r.itemId, revision: r.revision })), trash: trash.map((t) => t.itemId) },
    given,
  );
  await deleteRevisions(c, session, vaultId, dropHistory);
  await deleteFromTrash(c, session, vaultId, dropTrash as ItemId[]);
  // One bulk write per collection; the driver splits it into batches the server accepts.
  if (given.history.length > 0) {
    const res = await c.itemRevisions.bulkWrite(
      given.history.map((r) => ({
        updateOne: {
          filter: { _id: itemRevisionKey(vaultId, r.itemId, r.revision) },
          update: { $set: { encryptedData: r.encryptedData, encryptedName: r.encryptedName, keyVersion } },
        },
      })),
      { session, ordered: true },
    );
    if (res.matchedCount !== given.history.length) throw new Error("rekey: history documents changed inside the transaction");
  }
  if (given.trash.length > 0) {
    const res = await c.itemTrash.bulkWrite(
      given.trash.map((t) => ({
        updateOne: {
          filter: { _id: itemKey(vaultId, t.itemId) },
          update: { $set: { encryptedData: t.encryptedData, encryptedName: t.encryptedName, keyVersion } },
        },
      })),
      { session, ordered: true },
    );
    if (res.matchedCount !== given.trash.length) throw new Error("rekey: trash documents changed inside the transaction");
  }
}
