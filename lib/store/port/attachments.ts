/**
 * Attachments: files on items, as sealed chunks (lib/domain/attachments/decisions.ts for the rules,
 * protocol/formats/attachments.ts for the chunks). Where the chunks live is the adapter's: files
 * under DATA_DIR for the embedded store, rows of a chunk table on PostgreSQL, GridFS on MongoDB.
 * An attachment belongs to one item of one vault: purging the item (from the trash, by hand or by
 * the sweeper) or deleting the vault deletes its files with it, in the same transaction.
 */
import type { AttachmentId, ItemId, OrgId, UserId, VaultId } from "../../domain/ids";
import type { AttachmentLimits } from "../../domain/attachments/decisions";
import type { OnVault } from "./vaults";
import type { WithEvents } from "./outbox";

export interface AttachmentRecord {
  attachmentId: AttachmentId;
  vaultId: VaultId;
  itemId: ItemId;
  /** The file's plaintext size, as its uploader declared it (the chunks' sealed sizes follow from it). */
  size: number;
  chunkCount: number;
  /** Whether every chunk arrived and the upload was finished: only then may members read it. */
  complete: boolean;
  uploadedBy: UserId;
  createdAt: string;
  /** When the upload was finished; null while in progress. */
  completedAt: string | null;
}

/** An attachment, with the chunks that have arrived (its uploader's view of an upload in progress). */
export interface AttachmentStatus extends AttachmentRecord {
  /** The indexes stored, ascending. */
  received: number[];
}

/** The attachment a request names, in a vault, and the member making it. */
export type OnAttachment = OnVault & { attachmentId: AttachmentId };

export interface AttachmentStore {
  /** Begins an upload (planAttachmentUpload): 404 when the item is not live in the vault, 409 on a used id, 413 past a limit. */
  beginUpload(
    args: OnVault & { itemId: ItemId; attachmentId: AttachmentId; size: number; limits: AttachmentLimits; now: string },
  ): Promise<AttachmentStatus>;
  /** Stores one sealed chunk (planChunkWrite), in place of one sent before at that index. */
  putChunk(args: OnAttachment & { index: number; data: Uint8Array }): Promise<void>;
  /** Finishes an upload once every chunk is there (planUploadFinish); answers a finished one as it is. */
  finishUpload(args: OnAttachment & { now: string } & WithEvents): Promise<AttachmentRecord>;
  /** An attachment, with the chunks stored (planAttachmentView). */
  getAttachment(args: OnAttachment): Promise<AttachmentStatus>;
  /** One sealed chunk of a whole file (planChunkRead). */
  readChunk(args: OnAttachment & { index: number }): Promise<Uint8Array>;
  /** An item's attachments any member may read (whole ones), and the caller's own uploads in progress; oldest first. */
  listAttachments(args: OnVault & { itemId: ItemId }): Promise<AttachmentRecord[]>;
  /** Deletes an attachment and its chunks (planAttachmentDelete). */
  deleteAttachment(args: OnAttachment & WithEvents): Promise<void>;
  /** Sealed bytes and files an organization's attachments hold, uploads in progress included. */
  usage(args: { orgId: OrgId }): Promise<{ bytes: number; files: number }>;
  /** Deletes uploads begun before `startedBefore` and never finished (the sweeper); how many. */
  purgeStaleUploads(args: { startedBefore: string }): Promise<number>;
}
