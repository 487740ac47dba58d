/**
 * `client.attachments`: files on items, sealed here in chunks under a key each item holds (the part:
 * attachments.ts; the format: protocol/formats/attachments.ts).
 */
import type { Bytes } from "../../../protocol/encoding";
import type { ItemAttachment } from "../../attachments/attachment";
import type { AttachmentSource } from "../../attachments/source";
import type { PendingUpload, UploadOptions } from "../attachments";
import type { Parts } from "../parts";
import type { Item } from "../types";
import { lc } from "./ids";

export interface AttachmentsApi {
  /** Seals and uploads a file in chunks (each sent again while the server is away), then names it in the item; answers the item as written. */
  upload(vaultId: string, itemId: string, name: string, source: AttachmentSource, opts?: UploadOptions): Promise<Item>;
  /** Finishes an upload broken off (`onBegun` heard it): only the chunks the server lacks are sent. */
  resume(pending: PendingUpload, source: AttachmentSource, opts?: Pick<UploadOptions, "onProgress">): Promise<Item>;
  /**
   * A file an item, kept revision or trashed item opened by this client names, checked chunk by chunk
   * (`ATTACHMENT_WITHHELD`, `ATTACHMENT_TAMPERED`); with `write`, handed over a chunk at a time and not kept.
   */
  download(vaultId: string, file: ItemAttachment, write?: (chunk: Bytes) => void | Promise<void>): Promise<Bytes | undefined>;
  /** Takes a file off its item (a new revision); its chunks are deleted once no kept revision names it. */
  remove(vaultId: string, itemId: string, attachmentId: string): Promise<Item>;
  /**
   * Deletes the item's files on the server that neither it nor a kept revision names, uploaded at
   * least `graceMs` ago (default an hour: a file finished just now may be about to be named); answers how many.
   */
  tidy(vaultId: string, itemId: string, opts?: { graceMs?: number }): Promise<number>;
}

export function attachmentsApi({ attachments }: Pick<Parts, "attachments">): AttachmentsApi {
  return {
    upload: (vaultId, itemId, name, source, opts) => attachments.upload(lc(vaultId), lc(itemId), name, source, opts),
    resume: (pending, source, opts) =>
      attachments.resume({ ...pending, vaultId: lc(pending.vaultId), itemId: lc(pending.itemId) }, source, opts),
    download: (vaultId, file, write) => attachments.download(lc(vaultId), file, write),
    remove: (vaultId, itemId, attachmentId) => attachments.remove(lc(vaultId), lc(itemId), lc(attachmentId)),
    tidy: (vaultId, itemId, opts = {}) => attachments.tidy(lc(vaultId), lc(itemId), opts.graceMs),
  };
}
