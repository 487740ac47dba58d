/** The rules of attachments (lib/domain/attachments/decisions.ts): beginning an upload, its chunks, finishing it, who reads and deletes. */
import {
  planAttachmentDelete,
  planAttachmentUpload,
  planAttachmentView,
  planChunkRead,
  planChunkTarget,
  planChunkWrite,
  planUploadFinish,
  type AttachmentState,
  type UploadSnapshot,
} from "../../../../../lib/domain/attachments/decisions";
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
} from "../../../../../lib/domain/attachments/refusals";
import type { UserId } from "../../../../../lib/domain/ids";
import type { AppError } from "../../../../../lib/errors";
import { asRefusal, outcomeOf } from "../../../../helpers/refusal";

const MIB = 1024 * 1024;
const ada = "00000000-0000-4000-8000-00000000000a" as UserId;
const bob = "00000000-0000-4000-8000-00000000000b" as UserId;
const limits = { maxFileBytes: 10 * MIB, perItem: 3, orgQuotaBytes: 20 * MIB };
const fresh: UploadSnapshot = { item: "live", idTaken: false, onItem: 0, orgBytes: 0 };
/** A file of 2.5 MiB: chunks 0 and 1 of 1 MiB, chunk 2 of half of one; 28 bytes more each, sealed. */
const size = 2.5 * MIB;
const uploading: AttachmentState = { size, uploadedBy: ada, complete: false };
const whole: AttachmentState = { ...uploading, complete: true };

const row = (name: string, fn: () => unknown, expected: AppError | "ok"): [string, () => unknown, AppError | "ok"] => [name, fn, expected];

test.each([
  row("an upload to a live item within every limit", () => planAttachmentUpload(fresh, size, limits), "ok"),
  row("an empty file", () => planAttachmentUpload(fresh, 0, limits), "ok"),
  row("a file of exactly ATTACHMENT_MAX_BYTES", () => planAttachmentUpload(fresh, limits.maxFileBytes, limits), "ok"),
  row("to an item in the trash", () => planAttachmentUpload({ ...fresh, item: "trashed" }, size, limits), attachmentItemNotFound()),
  row("to an item that is not there", () => planAttachmentUpload({ ...fresh, item: "absent" }, size, limits), attachmentItemNotFound()),
  row("with an attachmentId in use", () => planAttachmentUpload({ ...fresh, idTaken: true }, size, limits), attachmentIdTaken()),
  row(
    "one byte past ATTACHMENT_MAX_BYTES",
    () => planAttachmentUpload(fresh, limits.maxFileBytes + 1, limits),
    attachmentTooLarge(limits.maxFileBytes + 1, limits.maxFileBytes),
  ),
  row(
    "to an item with ATTACHMENTS_PER_ITEM already",
    () => planAttachmentUpload({ ...fresh, onItem: 3 }, size, limits),
    tooManyAttachments(3),
  ),
  row(
    "past the organization's quota (the file's sealed size counts)",
    () => planAttachmentUpload({ ...fresh, orgBytes: 20 * MIB - size }, size, limits),
    attachmentQuotaFull(20 * MIB - size, size + 3 * 28, 20 * MIB),
  ),
  row("exactly up to the quota", () => planAttachmentUpload({ ...fresh, orgBytes: 20 * MIB - size - 3 * 28 }, size, limits), "ok"),

  row("a full chunk in the middle, by its uploader", () => planChunkWrite(uploading, ada, 1, MIB + 28), "ok"),
  row("the short last chunk", () => planChunkWrite(uploading, ada, 2, MIB / 2 + 28), "ok"),
  row("the one empty chunk of an empty file", () => planChunkWrite({ ...uploading, size: 0 }, ada, 0, 28), "ok"),
  row("to no upload", () => planChunkWrite(undefined, ada, 0, MIB + 28), attachmentNotFound()),
  row("by another member", () => planChunkWrite(uploading, bob, 0, MIB + 28), notYourUpload()),
  row("to a finished upload", () => planChunkWrite(whole, ada, 0, MIB + 28), uploadFinished()),
  row("to a finished upload, by another member", () => planChunkWrite(whole, bob, 0, MIB + 28), uploadFinished()),
  row("past the last chunk", () => planChunkWrite(uploading, ada, 3, 28), chunkIndexOutOfRange(3, 3)),
  row("a last chunk of a full chunk's size", () => planChunkWrite(uploading, ada, 2, MIB + 28), chunkWrongSize(2, MIB / 2 + 28, MIB + 28)),
  row("a middle chunk one byte short", () => planChunkWrite(uploading, ada, 0, MIB + 27), chunkWrongSize(0, MIB + 28, MIB + 27)),

  // Before a chunk's body is read: the same refusals as the write, but its size.
  row("a chunk's target, its uploader's upload in progress", () => planChunkTarget(uploading, ada, 2), "ok"),
  row("a chunk's target: no upload", () => planChunkTarget(undefined, ada, 0), attachmentNotFound()),
  row("a chunk's target: another member's upload", () => planChunkTarget(uploading, bob, 0), notYourUpload()),
  row("a chunk's target: a finished upload", () => planChunkTarget(whole, ada, 0), uploadFinished()),
  row("a chunk's target: past the last chunk", () => planChunkTarget(uploading, ada, 3), chunkIndexOutOfRange(3, 3)),

  row("finishing with every chunk stored", () => planUploadFinish(uploading, ada, new Set([2, 0, 1])), "ok"),
  row("finishing with chunk 1 missing", () => planUploadFinish(uploading, ada, new Set([0, 2])), uploadIncomplete(1, 3)),
  row("finishing with none stored", () => planUploadFinish(uploading, ada, new Set()), uploadIncomplete(0, 3)),
  row("finishing another member's upload", () => planUploadFinish(uploading, bob, new Set([0, 1, 2])), notYourUpload()),
  row("finishing no upload", () => planUploadFinish(undefined, ada, new Set()), attachmentNotFound()),

  row("a whole file, seen by another member", () => planAttachmentView(whole, bob), "ok"),
  row("an upload in progress, seen by its uploader", () => planAttachmentView(uploading, ada), "ok"),
  row("an upload in progress, seen by another member", () => planAttachmentView(uploading, bob), attachmentNotFound()),
  row("a chunk of a whole file", () => planChunkRead(whole, 2), "ok"),
  row("a chunk of an upload in progress", () => planChunkRead(uploading, 0), attachmentNotFound()),
  row("a chunk past the last", () => planChunkRead(whole, 3), chunkIndexOutOfRange(3, 3)),
  row("deleting a whole file, any member", () => planAttachmentDelete(whole, bob), "ok"),
  row("deleting another member's upload in progress", () => planAttachmentDelete(uploading, bob), attachmentNotFound()),
  row("deleting one's own upload in progress", () => planAttachmentDelete(uploading, ada), "ok"),
])("%s", (_name, fn, expected) => {
  expect(outcomeOf(fn)).toEqual(expected === "ok" ? "ok" : asRefusal(expected));
});

test("an upload reserves its sealed size and says how many chunks to send; a finish that finished it says so, a repeated one does not", () => {
  expect(planAttachmentUpload(fresh, size, limits)).toEqual({ chunkCount: 3, sealedBytes: size + 3 * 28 });
  expect(planAttachmentUpload(fresh, 0, limits)).toEqual({ chunkCount: 1, sealedBytes: 28 });
  expect(planUploadFinish(uploading, ada, new Set([0, 1, 2]))).toBe(true);
  expect(planUploadFinish(whole, ada, new Set([0, 1, 2]))).toBe(false);
});
