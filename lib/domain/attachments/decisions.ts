/**
 * Attachments: files on items, sealed on the client in chunks (protocol/formats/attachments.ts).
 * The server keeps their chunks and what it must know to keep them (which item, how large, how
 * many chunks have arrived, who began the upload) and never a name, a type or a key: those are in
 * the item's sealed content. Each request's rule is one `plan*` here, called by both store adapters
 * on the state they read under the vault's lock; they keep no rule of their own.
 *
 * An upload is begun with the file's size (checked against ATTACHMENT_MAX_BYTES, the item's
 * ATTACHMENTS_PER_ITEM and the organization's ATTACHMENT_ORG_QUOTA, which counts an upload in
 * progress at its full size so that two at once cannot pass it), takes its chunks in any order and
 * again (a resumed upload sends what did not arrive), and is finished once every chunk is there.
 * Only then may anyone read it; before, only its uploader sees how far it got.
 */
import { chunkCountOf, chunkSealedBytes, sealedSizeOf } from "../../../protocol/formats/attachments";
import type { UserId } from "../ids";
import {
  attachmentIdTaken,
  attachmentItemNotFound,
  attachmentNotFound,
  attachmentQuotaFull,
  attachmentTooLarge,
  chunkIndexOutOfRange,
  chunkWrongSize,
  notYourUpload,
  tooManyAttachments,
  uploadFinished,
  uploadIncomplete,
} from "./refusals";

export { ATTACHMENT_CHUNK_BYTES, chunkCountOf, chunkSealedBytes, sealedSizeOf } from "../../../protocol/formats/attachments";

/** The settings an upload is checked against. */
export interface AttachmentLimits {
  /** ATTACHMENT_MAX_BYTES: one file's plaintext size, at most. */
  maxFileBytes: number;
  /** ATTACHMENTS_PER_ITEM. */
  perItem: number;
  /** ATTACHMENT_ORG_QUOTA: sealed bytes an organization's files hold, uploads in progress included. */
  orgQuotaBytes: number;
}

/** An attachment as the server knows it. */
export interface AttachmentState {
  size: number;
  uploadedBy: UserId;
  complete: boolean;
}

/** What beginning an upload finds under the vault's lock. */
export interface UploadSnapshot {
  /** The item the file goes on: in the vault, in its trash, or neither. */
  item: "live" | "trashed" | "absent";
  /** The attachmentId is in use (in any vault). */
  idTaken: boolean;
  /** Attachments the item has, uploads in progress included. */
  onItem: number;
  /** Sealed bytes the organization's attachments hold, uploads in progress included. */
  orgBytes: number;
}

/** What a new upload stores: its chunk count, and the sealed bytes it reserves of the quota. */
export interface UploadPlan {
  chunkCount: number;
  sealedBytes: number;
}

export function planAttachmentUpload(s: UploadSnapshot, size: number, limits: AttachmentLimits): UploadPlan {
  if (s.item !== "live") throw attachmentItemNotFound();
  if (s.idTaken) throw attachmentIdTaken();
  if (size > limits.maxFileBytes) throw attachmentTooLarge(size, limits.maxFileBytes);
  if (s.onItem >= limits.perItem) throw tooManyAttachments(limits.perItem);
  const sealedBytes = sealedSizeOf(size);
  if (s.orgBytes + sealedBytes > limits.orgQuotaBytes) throw attachmentQuotaFull(s.orgBytes, sealedBytes, limits.orgQuotaBytes);
  return { chunkCount: chunkCountOf(size), sealedBytes };
}

/**
 * Whether a chunk may be sent to an upload at `index`, before its body is read (the same refusals
 * as `planChunkWrite`, which makes this check again with the chunk in hand, under the lock).
 */
export function planChunkTarget(a: AttachmentState | undefined, actorId: UserId, index: number): AttachmentState {
  if (!a) throw attachmentNotFound();
  if (a.uploadedBy !== actorId) throw a.complete ? uploadFinished() : notYourUpload();
  if (a.complete) throw uploadFinished();
  const count = chunkCountOf(a.size);
  if (!Number.isInteger(index) || index < 0 || index >= count) throw chunkIndexOutOfRange(index, count);
  return a;
}

/** A chunk sent to an upload: stored (in place of one sent before at that index), or refused. */
export function planChunkWrite(a: AttachmentState | undefined, actorId: UserId, index: number, sealedLength: number): void {
  const state = planChunkTarget(a, actorId, index);
  const expected = chunkSealedBytes(state.size, index);
  if (sealedLength !== expected) throw chunkWrongSize(index, expected, sealedLength);
}

/**
 * Finishing an upload: `received` holds the indexes stored. Finishing one finished already is
 * answered as it is (the answer to the first may have been lost); `true` when this call finishes it.
 */
export function planUploadFinish(a: AttachmentState | undefined, actorId: UserId, received: ReadonlySet<number>): boolean {
  if (!a) throw attachmentNotFound();
  if (a.uploadedBy !== actorId) throw a.complete ? uploadFinished() : notYourUpload();
  if (a.complete) return false;
  const count = chunkCountOf(a.size);
  for (let i = 0; i < count; i++) if (!received.has(i)) throw uploadIncomplete(i, count);
  return true;
}

/** Who sees an attachment: any member once it is whole; its uploader while it is being uploaded. */
export function planAttachmentView(a: AttachmentState | undefined, actorId: UserId): AttachmentState {
  if (!a || (!a.complete && a.uploadedBy !== actorId)) throw attachmentNotFound();
  return a;
}

/** Reading a chunk: of a whole file only, at an index it has. */
export function planChunkRead(a: AttachmentState | undefined, index: number): void {
  if (!a || !a.complete) throw attachmentNotFound();
  const count = chunkCountOf(a.size);
  if (!Number.isInteger(index) || index < 0 || index >= count) throw chunkIndexOutOfRange(index, count);
}

/** Deleting: any member deletes a whole file (as any member deletes an item); an upload in progress, its uploader (or it is left to expire). */
export function planAttachmentDelete(a: AttachmentState | undefined, actorId: UserId): void {
  planAttachmentView(a, actorId);
}
