/** The documents of attachments (SQL: migration 025's `attachments` and `attachment_chunks`); each chunk's bytes are a GridFS file. */
import type { ObjectId } from "mongodb";
import type { AttachmentId, ItemId, OrgId, UserId, VaultId } from "../../../domain/ids";
import type { AttachmentState } from "../../../domain/attachments/decisions";
import type { AttachmentRecord } from "../../port";

/** An attachment; `_id` is its id. */
export interface AttachmentDoc {
  _id: AttachmentId;
  vaultId: VaultId;
  itemId: ItemId;
  /** The vault's organization, whose quota it counts against. */
  orgId: OrgId;
  size: number;
  chunkCount: number;
  /** The room it takes of the quota from its upload's start. */
  sealedBytes: number;
  complete: boolean;
  uploadedBy: UserId;
  createdAt: string;
  completedAt: string | null;
  /** Bumped by each chunk stored and by the finish: a chunk and a finish at once conflict, and one retries. */
  writeSeq?: number;
}

/** A chunk that arrived; `_id` is `chunkKey(attachmentId, index)`, its bytes the GridFS file `fileId`. */
export interface AttachmentChunkDoc {
  _id: string;
  attachmentId: AttachmentId;
  index: number;
  sealedBytes: number;
  fileId: ObjectId;
}

export const chunkKey = (attachmentId: AttachmentId, index: number): string => `${attachmentId}/${index}`;

/** The GridFS bucket of chunk files (collections `attachment_files.files` and `.chunks`); each file named `chunkKey`. */
export const ATTACHMENT_BUCKET = "attachment_files";

export function toAttachment(d: AttachmentDoc): AttachmentRecord {
  return {
    attachmentId: d._id,
    vaultId: d.vaultId,
    itemId: d.itemId,
    size: d.size,
    chunkCount: d.chunkCount,
    complete: d.complete,
    uploadedBy: d.uploadedBy,
    createdAt: d.createdAt,
    completedAt: d.completedAt,
  };
}

export const attachmentStateOf = (d: AttachmentDoc | null | undefined): AttachmentState | undefined =>
  d ? { size: d.size, uploadedBy: d.uploadedBy, complete: d.complete } : undefined;
