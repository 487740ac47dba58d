/**
 * Named refusals of attachments: each constructor is the one place a refusal's code, message and
 * field are written, and each is thrown by one rule of this folder (decisions.ts).
 */
import { AppError, conflict, forbidden, invalid, notFound } from "../../errors";

/** The attachment is not in the vault (or not yet uploaded whole, to anyone but its uploader). */
export const attachmentNotFound = () => notFound("Attachment");

/** The item a new attachment names is not in the vault (a trashed item takes none). */
export const attachmentItemNotFound = () => notFound("Item");

/** A new attachment names an attachmentId in use. */
export const attachmentIdTaken = () => conflict("An attachment with this attachmentId already exists", "attachmentId");

/** A file larger than ATTACHMENT_MAX_BYTES. */
export const attachmentTooLarge = (size: number, max: number) =>
  new AppError(
    "PAYLOAD_TOO_LARGE",
    `A file of ${size} bytes is larger than the ${max} bytes one attachment may hold (ATTACHMENT_MAX_BYTES)`,
  );

/** An item with ATTACHMENTS_PER_ITEM attachments already (uploads in progress count). */
export const tooManyAttachments = (max: number) =>
  new AppError("PAYLOAD_TOO_LARGE", `An item holds at most ${max} attachments (ATTACHMENTS_PER_ITEM): delete one first`);

/** The organization's files would pass ATTACHMENT_ORG_QUOTA (uploads in progress count at their full size). */
export const attachmentQuotaFull = (used: number, size: number, quota: number) =>
  new AppError(
    "PAYLOAD_TOO_LARGE",
    `The organization's attachments hold ${used} bytes; ${size} more would pass its quota of ${quota} (ATTACHMENT_ORG_QUOTA). Delete files, or ask an operator for more room`,
  );

/** A chunk for an upload someone else began. */
export const notYourUpload = () => forbidden("Only the member who began this upload may send its chunks or finish it");

/** A chunk or a finish for an attachment that is uploaded whole already: its chunks never change. */
export const uploadFinished = () => conflict("This attachment is uploaded whole: its chunks cannot change", "attachmentId");

/** A chunk index the file does not have. */
export const chunkIndexOutOfRange = (index: number, count: number) =>
  invalid(`This file has ${count} chunk${count === 1 ? "" : "s"} (0 to ${count - 1}), not chunk ${index}`, "index");

/** A chunk whose sealed length is not the one its index has in a file of the declared size. */
export const chunkWrongSize = (index: number, expected: number, got: number) =>
  invalid(`Chunk ${index} of this file is ${expected} bytes sealed, not ${got}`, "data");

/** A finish before every chunk arrived: `missing` is the first absent one, where a resumed upload goes on. */
export const uploadIncomplete = (missing: number, count: number) =>
  conflict(`Chunk ${missing} of ${count} has not arrived: send it, then finish the upload`, "index");
