/**
 * Attachments on SQL (the port: ../port/attachments.ts; MongoDB: ../mongo/attachments.ts). Each
 * write locks the vault's row (shared: attachment writes change neither the item log nor the
 * vault's sizes, and wait only for what takes it exclusively: an item purge, a rekey, the vault's
 * deletion) and the attachment's row, then decides with the `plan*` of
 * lib/domain/attachments/decisions.ts. Begins of one organization take the organization's named
 * lock besides, so that the quota's sum is read and the new upload's room taken with no other
 * begin between, in whichever of its vaults. Chunk bytes are files for the embedded store
 * (attachment-files.ts), else in their rows.
 */
import type { Transaction } from "kysely";
import type { AttachmentId, ItemId, OrgId, UserId, VaultId } from "../../domain/ids";
import {
  planAttachmentDelete,
  planAttachmentUpload,
  planAttachmentView,
  planChunkRead,
  planChunkWrite,
  planUploadFinish,
  type AttachmentState,
  type UploadSnapshot,
} from "../../domain/attachments/decisions";
import { attachmentIdTaken, attachmentNotFound } from "../../domain/attachments/refusals";
import { decideItemRead } from "../../domain/items/decisions";
import type { ArgsOf, AttachmentRecord, AttachmentStatus, AttachmentStore, VaultStore } from "../port";
import type { ChunkFiles, StagedChunk } from "./attachment-files";
import { chunks, type Db, type SqlContext } from "./context";
import { ACTOR } from "./item-rows";
import { writeOutbox } from "./outbox";
import type { AttachmentsTable, Database } from "./schema";

/** Uploads the sweeper deletes per transaction. */
const PURGE_BATCH = 500;

const toRecord = (r: AttachmentsTable): AttachmentRecord => ({
  attachmentId: r.attachment_id,
  vaultId: r.vault_id,
  itemId: r.item_id,
  size: Number(r.size),
  chunkCount: Number(r.chunk_count),
  complete: Number(r.complete) === 1,
  uploadedBy: r.uploaded_by,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

const stateOf = (r: AttachmentsTable | undefined): AttachmentState | undefined =>
  r && { size: Number(r.size), uploadedBy: r.uploaded_by, complete: Number(r.complete) === 1 };

/** Locks the vault's row and checks the actor's membership: a non-member (or no such vault) is refused as items refuse one. */
async function lockAsMember(c: SqlContext, trx: Db, vaultId: VaultId, actorId: UserId): Promise<{ orgId: OrgId }> {
  const vault = await c.engine.lockVault(trx, vaultId, "share");
  const member = vault && (await ACTOR.run(trx, { vaultId, actorId })).rows[0];
  if (!vault || !member) decideItemRead(null);
  return { orgId: vault.org_id };
}

/** The attachment's row in the vault, locked for the rest of the transaction where `lock` says so. */
/** Whether an attachment of any vault has this id (an id is the store's, whole: it names a chunk folder too). */
async function idInUse(db: Db, attachmentId: AttachmentId): Promise<boolean> {
  return (
    (await db.selectFrom("attachments").select("attachment_id").where("attachment_id", "=", attachmentId).executeTakeFirst()) !== undefined
  );
}

async function attachmentRow(db: Db, c: SqlContext, a: { vaultId: VaultId; attachmentId: AttachmentId }, lock?: "update" | "share") {
  const q = db.selectFrom("attachments").selectAll().where("attachment_id", "=", a.attachmentId).where("vault_id", "=", a.vaultId);
  return (lock ? c.engine.rowLock(q, lock) : q).executeTakeFirst();
}

/** The indexes of the chunks stored, ascending. */
async function receivedOf(db: Db, attachmentId: AttachmentId): Promise<number[]> {
  const rows = await db.selectFrom("attachment_chunks").select("idx").where("attachment_id", "=", attachmentId).orderBy("idx").execute();
  return rows.map((r) => Number(r.idx));
}

/**
 * Deletes the vault's attachments whose item is in neither its items nor its trash (purged, or
 * the vault emptied), in the caller's transaction under the vault's exclusive lock; their chunk
 * rows go with them. Answers their ids.
 */
async function dropOrphaned(trx: Db, vaultId: VaultId): Promise<AttachmentId[]> {
  const rows = await trx
    .deleteFrom("attachments")
    .where("vault_id", "=", vaultId)
    .where((eb) =>
      eb.not(
        eb.or(
          (["items", "item_trash"] as const).map((table) =>
            eb.exists(
              eb
                .selectFrom(table)
                .select("item_id")
                .where("vault_id", "=", vaultId)
                .whereRef(`${table}.item_id`, "=", "attachments.item_id"),
            ),
          ),
        ),
      ),
    )
    .returning("attachment_id")
    .execute();
  return rows.map((r) => r.attachment_id);
}

/**
 * Runs `fn` in a transaction (`c.tx`) that deletes items or vaults: `drop(vaultId)`, called once
 * they are deleted, deletes the attachments they leave without an item, and their chunk files go
 * once the transaction has committed. Every such write runs through here.
 */
export async function txDroppingAttachments<T>(
  c: SqlContext,
  fn: (trx: Transaction<Database>, drop: (vaultId: VaultId) => Promise<void>) => Promise<T>,
): Promise<T> {
  const dropped: AttachmentId[] = [];
  const result = await c.tx((trx) => fn(trx, async (vaultId) => void dropped.push(...(await dropOrphaned(trx, vaultId)))));
  await c.chunks?.remove(dropped);
  return result;
}

/** Deletes uploads begun before `startedBefore` and never finished, batch by batch; and, for chunk files, folders no attachment owns. */
export async function purgeStaleUploads(c: SqlContext, startedBefore: string): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = await c.tx(async (trx) => {
      const stale = trx
        .selectFrom("attachments")
        .select("attachment_id")
        .where("complete", "=", 0)
        .where("created_at", "<", startedBefore)
        .orderBy("created_at")
        .limit(PURGE_BATCH);
      // Locked: one finished meanwhile is no longer selected once the lock is granted.
      const found = (await c.engine.rowLock(stale, "update").execute()).map((r) => r.attachment_id);
      if (found.length > 0) await trx.deleteFrom("attachments").where("attachment_id", "in", found).execute();
      return found;
    });
    await c.chunks?.remove(ids);
    total += ids.length;
    if (ids.length < PURGE_BATCH) break;
  }
  if (c.chunks) await removeOrphanFolders(c, c.chunks, startedBefore);
  return total;
}

/** Folders left by a crash between a delete's commit and its files' removal: no row, and untouched since `before`. */
async function removeOrphanFolders(c: SqlContext, files: NonNullable<SqlContext["chunks"]>, before: string): Promise<void> {
  const folders = (await files.foldersChangedBefore(Date.parse(before))) as AttachmentId[];
  for (const batch of chunks(folders, 500)) {
    const owned = await c.db.selectFrom("attachments").select("attachment_id").where("attachment_id", "in", batch).execute();
    const kept = new Set(owned.map((r) => r.attachment_id));
    await files.remove(batch.filter((id) => !kept.has(id)));
  }
}

export class SqlAttachments implements AttachmentStore {
  /** `vaults` answers the membership reads (its prepared statement). */
  constructor(
    private readonly c: SqlContext,
    private readonly vaults: VaultStore,
  ) {}

  async beginUpload(args: ArgsOf<AttachmentStore["beginUpload"]>): Promise<AttachmentStatus> {
    const { vaultId, actorId, itemId, attachmentId, size, limits, now } = args;
    return this.c.tx(async (trx) => {
      const { orgId } = await lockAsMember(this.c, trx, vaultId, actorId);
      // One begin of the organization at a time, in whichever of its vaults: the sum read below and
      // this insert have no other begin between them (SQLite: the single connection serializes them).
      await this.c.engine.lockName(trx, `attachment-quota:${orgId}`);
      const plan = planAttachmentUpload(await this.uploadSnapshot(trx, { vaultId, itemId, attachmentId, orgId }), size, limits);
      const row: AttachmentsTable = {
        attachment_id: attachmentId,
        vault_id: vaultId,
        item_id: itemId,
        org_id: orgId,
        size,
        chunk_count: plan.chunkCount,
        sealed_bytes: plan.sealedBytes,
        complete: 0,
        uploaded_by: actorId,
        created_at: now,
        completed_at: null,
      };
      // An id taken meanwhile in another organization (whose begins hold another lock): refused as one taken before.
      const res = await trx
        .insertInto("attachments")
        .values(row)
        .onConflict((oc) => oc.column("attachment_id").doNothing())
        .executeTakeFirst();
      if (Number(res.numInsertedOrUpdatedRows) !== 1) throw attachmentIdTaken();
      return { ...toRecord(row), received: [] };
    });
  }

  private async uploadSnapshot(
    trx: Db,
    s: { vaultId: VaultId; itemId: ItemId; attachmentId: AttachmentId; orgId: OrgId },
  ): Promise<UploadSnapshot> {
    const itemIn = async (table: "items" | "item_trash") =>
      (await trx
        .selectFrom(table)
        .select("item_id")
        .where("vault_id", "=", s.vaultId)
        .where("item_id", "=", s.itemId)
        .executeTakeFirst()) !== undefined;
    const taken = await idInUse(trx, s.attachmentId);
    const onItem = await trx
      .selectFrom("attachments")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("vault_id", "=", s.vaultId)
      .where("item_id", "=", s.itemId)
      .executeTakeFirstOrThrow();
    return {
      item: (await itemIn("items")) ? "live" : (await itemIn("item_trash")) ? "trashed" : "absent",
      idTaken: taken,
      onItem: Number(onItem.n),
      orgBytes: (await this.usageIn(trx, s.orgId)).bytes,
    };
  }

  async putChunk({ vaultId, actorId, attachmentId, index, data }: ArgsOf<AttachmentStore["putChunk"]>): Promise<void> {
    const files = this.c.chunks;
    // A file is written only for a chunk the rules would take now (and again under the lock).
    if (files) {
      await this.vaults.getVault({ vaultId, userId: actorId });
      planChunkWrite(stateOf(await attachmentRow(this.c.db, this.c, { vaultId, attachmentId })), actorId, index, data.length);
    }
    let staged: StagedChunk | undefined;
    try {
      staged = files && (await files.stage(attachmentId, index, data));
      await this.c.tx(async (trx) => {
        await lockAsMember(this.c, trx, vaultId, actorId);
        // Shared: chunks of one upload are stored side by side; a finish or a delete waits for them.
        planChunkWrite(stateOf(await attachmentRow(trx, this.c, { vaultId, attachmentId }, "share")), actorId, index, data.length);
        await staged?.place();
        const bytes = staged ? null : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        await trx
          .insertInto("attachment_chunks")
          .values({ attachment_id: attachmentId, idx: index, sealed_bytes: data.length, data: bytes })
          .onConflict((oc) => oc.columns(["attachment_id", "idx"]).doUpdateSet({ sealed_bytes: data.length, data: bytes }))
          .execute();
      });
    } catch (err) {
      await staged?.discard();
      if (files) await this.afterChunkFailed(files, attachmentId, err);
      throw err;
    }
  }

  /**
   * A chunk not stored on the embedded store, its upload deleted while it was being written: the
   * delete removes the folder once it has committed, and this write may have made the folder again
   * (left without a row) or lost its file midway. The folder goes as the delete's did, and a file
   * lost midway is refused as the upload is now, not found, never failed as a missing file.
   */
  private async afterChunkFailed(files: ChunkFiles, attachmentId: AttachmentId, err: unknown): Promise<void> {
    if (await idInUse(this.c.db, attachmentId)) return;
    await files.remove([attachmentId]);
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw attachmentNotFound();
  }

  async finishUpload({ vaultId, actorId, attachmentId, now, events }: ArgsOf<AttachmentStore["finishUpload"]>): Promise<AttachmentRecord> {
    return this.c.tx(async (trx) => {
      await lockAsMember(this.c, trx, vaultId, actorId);
      const row = await attachmentRow(trx, this.c, { vaultId, attachmentId }, "update");
      if (!planUploadFinish(stateOf(row), actorId, new Set(await receivedOf(trx, attachmentId)))) return toRecord(row!);
      await trx.updateTable("attachments").set({ complete: 1, completed_at: now }).where("attachment_id", "=", attachmentId).execute();
      await writeOutbox(trx, events);
      return toRecord({ ...row!, complete: 1, completed_at: now });
    });
  }

  async getAttachment({ vaultId, actorId, attachmentId }: ArgsOf<AttachmentStore["getAttachment"]>): Promise<AttachmentStatus> {
    await this.vaults.getVault({ vaultId, userId: actorId });
    const row = await attachmentRow(this.c.db, this.c, { vaultId, attachmentId });
    planAttachmentView(stateOf(row), actorId);
    return { ...toRecord(row!), received: await receivedOf(this.c.db, attachmentId) };
  }

  async readChunk({ vaultId, actorId, attachmentId, index }: ArgsOf<AttachmentStore["readChunk"]>): Promise<Uint8Array> {
    await this.vaults.getVault({ vaultId, userId: actorId });
    planChunkRead(stateOf(await attachmentRow(this.c.db, this.c, { vaultId, attachmentId })), index);
    // A whole file's chunks never change: read after the check, they are the file's, or gone with it.
    const bytes = this.c.chunks
      ? await this.c.chunks.read(attachmentId, index)
      : (
          await this.c.db
            .selectFrom("attachment_chunks")
            .select("data")
            .where("attachment_id", "=", attachmentId)
            .where("idx", "=", index)
            .executeTakeFirst()
        )?.data;
    if (!bytes) throw attachmentNotFound();
    return bytes;
  }

  async listAttachments({ vaultId, actorId, itemId }: ArgsOf<AttachmentStore["listAttachments"]>): Promise<AttachmentRecord[]> {
    await this.vaults.getVault({ vaultId, userId: actorId });
    const rows = await this.c.db
      .selectFrom("attachments")
      .selectAll()
      .where("vault_id", "=", vaultId)
      .where("item_id", "=", itemId)
      .orderBy("created_at")
      .orderBy("attachment_id")
      .execute();
    return rows.filter((r) => mayView(r, actorId)).map(toRecord);
  }

  async deleteAttachment({ vaultId, actorId, attachmentId, events }: ArgsOf<AttachmentStore["deleteAttachment"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await lockAsMember(this.c, trx, vaultId, actorId);
      planAttachmentDelete(stateOf(await attachmentRow(trx, this.c, { vaultId, attachmentId }, "update")), actorId);
      await trx.deleteFrom("attachments").where("attachment_id", "=", attachmentId).execute();
      await writeOutbox(trx, events);
    });
    await this.c.chunks?.remove([attachmentId]);
  }

  usage({ orgId }: ArgsOf<AttachmentStore["usage"]>): Promise<{ bytes: number; files: number }> {
    return this.usageIn(this.c.db, orgId);
  }

  private async usageIn(db: Db, orgId: OrgId): Promise<{ bytes: number; files: number }> {
    const r = await db
      .selectFrom("attachments")
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number | string>("sealed_bytes"), eb.lit(0)).as("bytes"),
        eb.fn.countAll<number | string>().as("files"),
      ])
      .where("org_id", "=", orgId)
      .executeTakeFirstOrThrow();
    return { bytes: Number(r.bytes), files: Number(r.files) };
  }

  purgeStaleUploads({ startedBefore }: ArgsOf<AttachmentStore["purgeStaleUploads"]>): Promise<number> {
    return purgeStaleUploads(this.c, startedBefore);
  }
}

/** Whether the actor sees the attachment in a list (planAttachmentView's rule). */
function mayView(r: AttachmentsTable, actorId: UserId): boolean {
  try {
    planAttachmentView(stateOf(r), actorId);
    return true;
  } catch {
    return false;
  }
}
