/**
 * Attachments on MongoDB (the port: ../port/attachments.ts; SQL: ../sql/attachments.ts). What the
 * server keeps of each is in `attachments` and `attachment_chunks`; each chunk's bytes are one
 * GridFS file named `<attachmentId>/<index>`. GridFS takes no part in transactions: a chunk's file
 * is written before the transaction that records it, and files no longer recorded are deleted once
 * it has committed; a file a crash left unrecorded is the sweeper's (`purgeStaleUploads`).
 *
 * A chunk stored and a finish both write the attachment's document, so that they conflict and one
 * retries on the other's outcome; begins in one organization all write its document, so that the
 * quota's sum is read and the new room taken with no other begin between.
 */
import { GridFSBucket, type ClientSession, type ObjectId } from "mongodb";
import type { AttachmentId, UserId, VaultId } from "../../domain/ids";
import {
  planAttachmentDelete,
  planAttachmentUpload,
  planAttachmentView,
  planChunkRead,
  planChunkWrite,
  planUploadFinish,
} from "../../domain/attachments/decisions";
import { attachmentNotFound } from "../../domain/attachments/refusals";
import { decideItemRead } from "../../domain/items/decisions";
import type { ArgsOf, AttachmentRecord, AttachmentStatus, AttachmentStore, VaultView } from "../port";
import type { MongoContext } from "./context";
import { ATTACHMENT_BUCKET, attachmentStateOf, chunkKey, itemKey, toAttachment, type AttachmentDoc } from "./documents";
import { writeOutbox } from "./outbox";

/** Uploads the sweeper looks at per round. */
const PURGE_BATCH = 500;

const bucketOf = (c: MongoContext) => new GridFSBucket(c.db, { bucketName: ATTACHMENT_BUCKET });

async function writeFile(c: MongoContext, attachmentId: AttachmentId, index: number, data: Uint8Array): Promise<ObjectId> {
  const stream = bucketOf(c).openUploadStream(chunkKey(attachmentId, index), { metadata: { attachmentId, index } });
  await new Promise<void>((resolve, reject) => {
    stream.once("finish", resolve);
    stream.once("error", reject);
    stream.end(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  });
  return stream.id;
}

async function readFile(c: MongoContext, fileId: ObjectId): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const part of bucketOf(c).openDownloadStream(fileId)) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Deletes chunk files no longer recorded (after the transaction that dropped them); one that fails is the sweeper's. */
async function deleteFiles(c: MongoContext, fileIds: readonly ObjectId[]): Promise<void> {
  const bucket = bucketOf(c);
  for (const id of fileIds) await bucket.delete(id).catch(() => undefined);
}

/** The actor's membership, read in the session: a non-member (or no such vault) is refused as items refuse one. */
async function asMember(c: MongoContext, session: ClientSession, vaultId: VaultId, actorId: UserId): Promise<VaultView> {
  const view = await c.vaultView(session, vaultId, actorId);
  if (!view) decideItemRead(null);
  return view;
}

/** Deletes attachments and their chunk records, in the caller's transaction; answers their chunks' files. */
async function dropAttachments(c: MongoContext, session: ClientSession, ids: readonly AttachmentId[]): Promise<ObjectId[]> {
  if (ids.length === 0) return [];
  const recorded = await c.attachmentChunks.find({ attachmentId: { $in: [...ids] } }, { session, projection: { fileId: 1 } }).toArray();
  await c.attachmentChunks.deleteMany({ attachmentId: { $in: [...ids] } }, { session });
  await c.attachments.deleteMany({ _id: { $in: [...ids] } }, { session });
  return recorded.map((r) => r.fileId);
}

/** Deletes the vault's attachments whose item is in neither its items nor its trash (purged, or the vault emptied). */
async function dropOrphaned(c: MongoContext, session: ClientSession, vaultId: VaultId): Promise<ObjectId[]> {
  const docs = await c.attachments.find({ vaultId }, { session, projection: { itemId: 1 } }).toArray();
  if (docs.length === 0) return [];
  const keys = [...new Set(docs.map((d) => itemKey(vaultId, d.itemId)))];
  const held = new Set<string>();
  for (const collection of [c.items, c.itemTrash])
    for (const d of await collection.find({ _id: { $in: keys } }, { session, projection: { _id: 1 } }).toArray()) held.add(d._id);
  const orphans = docs.filter((d) => !held.has(itemKey(vaultId, d.itemId))).map((d) => d._id);
  return dropAttachments(c, session, orphans);
}

/**
 * Runs `fn` in a transaction (`c.tx`) that deletes items or vaults: `drop(vaultId)`, called once
 * they are deleted, deletes the attachments they leave without an item; their files go once the
 * transaction has committed. `fn` may run more than once: only the last run's files are deleted.
 */
export async function txDroppingAttachments<T>(
  c: MongoContext,
  fn: (session: ClientSession, drop: (vaultId: VaultId) => Promise<void>) => Promise<T>,
): Promise<T> {
  let dropped: ObjectId[] = [];
  const result = await c.tx((session) => {
    dropped = [];
    return fn(session, async (vaultId) => void dropped.push(...(await dropOrphaned(c, session, vaultId))));
  });
  await deleteFiles(c, dropped);
  return result;
}

/** Deletes uploads begun before `startedBefore` and never finished, then files no chunk records that are as old. */
export async function purgeStaleUploads(c: MongoContext, startedBefore: string): Promise<number> {
  let total = 0;
  for (;;) {
    const stale = await c.attachments
      .find({ complete: false, createdAt: { $lt: startedBefore } }, { projection: { _id: 1 } })
      .sort({ createdAt: 1 })
      .limit(PURGE_BATCH)
      .toArray();
    for (const { _id: id } of stale) {
      const dropped = await c.tx(async (session) => {
        // Not finished meanwhile: the finish wrote the document, and this delete conflicts with it.
        const stillStale = await c.attachments.findOne({ _id: id, complete: false }, { session, projection: { _id: 1 } });
        return stillStale ? dropAttachments(c, session, [id]) : undefined;
      });
      if (dropped) {
        await deleteFiles(c, dropped);
        total += 1;
      }
    }
    if (stale.length < PURGE_BATCH) break;
  }
  const bucket = bucketOf(c);
  for await (const f of bucket.find({ uploadDate: { $lt: new Date(startedBefore) } }, { projection: { _id: 1 } }))
    if (!(await c.attachmentChunks.findOne({ fileId: f._id }, { projection: { _id: 1 } })))
      await bucket.delete(f._id).catch(() => undefined);
  return total;
}

export class MongoAttachments implements AttachmentStore {
  constructor(private readonly c: MongoContext) {}

  async beginUpload(args: ArgsOf<AttachmentStore["beginUpload"]>): Promise<AttachmentStatus> {
    const { vaultId, actorId, itemId, attachmentId, size, limits, now } = args;
    return this.c.tx(async (session) => {
      // The vault's document written: an item deleted or purged meanwhile conflicts with this begin.
      await this.c.lockVault(session, vaultId);
      const { orgId } = await asMember(this.c, session, vaultId, actorId);
      await this.c.orgs.updateOne({ _id: orgId }, { $inc: { attachmentSeq: 1 } }, { session });
      const key = itemKey(vaultId, itemId);
      const live = await this.c.items.findOne({ _id: key }, { session, projection: { _id: 1 } });
      const trashed = live ? null : await this.c.itemTrash.findOne({ _id: key }, { session, projection: { _id: 1 } });
      const plan = planAttachmentUpload(
        {
          item: live ? "live" : trashed ? "trashed" : "absent",
          idTaken: (await this.c.attachments.findOne({ _id: attachmentId }, { session, projection: { _id: 1 } })) !== null,
          onItem: await this.c.attachments.countDocuments({ vaultId, itemId }, { session }),
          orgBytes: (await usageIn(this.c, orgId, session)).bytes,
        },
        size,
        limits,
      );
      const doc: AttachmentDoc = {
        _id: attachmentId,
        vaultId,
        itemId,
        orgId,
        size,
        chunkCount: plan.chunkCount,
        sealedBytes: plan.sealedBytes,
        complete: false,
        uploadedBy: actorId,
        createdAt: now,
        completedAt: null,
      };
      await this.c.attachments.insertOne(doc, { session });
      return { ...toAttachment(doc), received: [] };
    });
  }

  async putChunk({ vaultId, actorId, attachmentId, index, data }: ArgsOf<AttachmentStore["putChunk"]>): Promise<void> {
    // A file is written only for a chunk the rules would take now (and again in the transaction).
    await this.c.consistentRead(async (session) => {
      await asMember(this.c, session, vaultId, actorId);
      const a = await this.c.attachments.findOne({ _id: attachmentId, vaultId }, { session });
      planChunkWrite(attachmentStateOf(a), actorId, index, data.length);
    });
    const fileId = await writeFile(this.c, attachmentId, index, data);
    let replaced: ObjectId | undefined;
    try {
      replaced = await this.c.tx(async (session) => {
        await asMember(this.c, session, vaultId, actorId);
        const a = await this.c.attachments.findOneAndUpdate(
          { _id: attachmentId, vaultId },
          { $inc: { writeSeq: 1 } },
          { session, returnDocument: "after" },
        );
        planChunkWrite(attachmentStateOf(a), actorId, index, data.length);
        const before = await this.c.attachmentChunks.findOneAndUpdate(
          { _id: chunkKey(attachmentId, index) },
          { $set: { attachmentId, index, sealedBytes: data.length, fileId } },
          { session, upsert: true, returnDocument: "before" },
        );
        return before?.fileId;
      });
    } catch (err) {
      await deleteFiles(this.c, [fileId]);
      throw err;
    }
    if (replaced) await deleteFiles(this.c, [replaced]);
  }

  async finishUpload({ vaultId, actorId, attachmentId, now, events }: ArgsOf<AttachmentStore["finishUpload"]>): Promise<AttachmentRecord> {
    return this.c.tx(async (session) => {
      await asMember(this.c, session, vaultId, actorId);
      const a = await this.c.attachments.findOneAndUpdate(
        { _id: attachmentId, vaultId },
        { $inc: { writeSeq: 1 } },
        { session, returnDocument: "after" },
      );
      const received = await this.c.attachmentChunks.find({ attachmentId }, { session, projection: { index: 1 } }).toArray();
      if (!planUploadFinish(attachmentStateOf(a), actorId, new Set(received.map((r) => r.index)))) return toAttachment(a!);
      await this.c.attachments.updateOne({ _id: attachmentId }, { $set: { complete: true, completedAt: now } }, { session });
      await writeOutbox(this.c, session, events);
      return { ...toAttachment(a!), complete: true, completedAt: now };
    });
  }

  async getAttachment({ vaultId, actorId, attachmentId }: ArgsOf<AttachmentStore["getAttachment"]>): Promise<AttachmentStatus> {
    return this.c.consistentRead(async (session) => {
      await asMember(this.c, session, vaultId, actorId);
      const a = await this.c.attachments.findOne({ _id: attachmentId, vaultId }, { session });
      planAttachmentView(attachmentStateOf(a), actorId);
      const received = await this.c.attachmentChunks
        .find({ attachmentId }, { session, projection: { index: 1 } })
        .sort({ index: 1 })
        .toArray();
      return { ...toAttachment(a!), received: received.map((r) => r.index) };
    });
  }

  async readChunk({ vaultId, actorId, attachmentId, index }: ArgsOf<AttachmentStore["readChunk"]>): Promise<Uint8Array> {
    const fileId = await this.c.consistentRead(async (session) => {
      await asMember(this.c, session, vaultId, actorId);
      planChunkRead(attachmentStateOf(await this.c.attachments.findOne({ _id: attachmentId, vaultId }, { session })), index);
      return (await this.c.attachmentChunks.findOne({ _id: chunkKey(attachmentId, index) }, { session }))?.fileId;
    });
    if (!fileId) throw attachmentNotFound();
    try {
      return await readFile(this.c, fileId);
    } catch (err) {
      // Deleted with its attachment since the read.
      if ((err as { code?: unknown }).code === "ENOENT") throw attachmentNotFound();
      throw err;
    }
  }

  async listAttachments({ vaultId, actorId, itemId }: ArgsOf<AttachmentStore["listAttachments"]>): Promise<AttachmentRecord[]> {
    const docs = await this.c.consistentRead(async (session) => {
      await asMember(this.c, session, vaultId, actorId);
      return this.c.attachments.find({ vaultId, itemId }, { session }).sort({ createdAt: 1, _id: 1 }).toArray();
    });
    return docs.filter((d) => mayView(d, actorId)).map(toAttachment);
  }

  async deleteAttachment({ vaultId, actorId, attachmentId, events }: ArgsOf<AttachmentStore["deleteAttachment"]>): Promise<void> {
    const files = await this.c.tx(async (session) => {
      await asMember(this.c, session, vaultId, actorId);
      planAttachmentDelete(attachmentStateOf(await this.c.attachments.findOne({ _id: attachmentId, vaultId }, { session })), actorId);
      await writeOutbox(this.c, session, events);
      return dropAttachments(this.c, session, [attachmentId]);
    });
    await deleteFiles(this.c, files);
  }

  usage({ orgId }: ArgsOf<AttachmentStore["usage"]>): Promise<{ bytes: number; files: number }> {
    return usageIn(this.c, orgId);
  }

  purgeStaleUploads({ startedBefore }: ArgsOf<AttachmentStore["purgeStaleUploads"]>): Promise<number> {
    return purgeStaleUploads(this.c, startedBefore);
  }
}

async function usageIn(c: MongoContext, orgId: AttachmentDoc["orgId"], session?: ClientSession): Promise<{ bytes: number; files: number }> {
  const [sum] = await c.attachments
    .aggregate<{ bytes: number; files: number }>(
      [{ $match: { orgId } }, { $group: { _id: null, bytes: { $sum: "$sealedBytes" }, files: { $sum: 1 } } }],
      session && { session },
    )
    .toArray();
  return { bytes: sum?.bytes ?? 0, files: sum?.files ?? 0 };
}

/** Whether the actor sees the attachment in a list (planAttachmentView's rule). */
function mayView(d: AttachmentDoc, actorId: UserId): boolean {
  try {
    planAttachmentView(attachmentStateOf(d), actorId);
    return true;
  } catch {
    return false;
  }
}
