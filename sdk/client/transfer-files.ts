/**
 * The files of an import and of an export (sdk/client/transfer.ts). An import adds its items first
 * (in bulk, without files), then uploads each item's files as new attachments of it, with new ids
 * and keys (the Attachments part): a file that fails is said, by item and file name, and the rest go
 * on. An encrypted export downloads each file its items name, checked as any download, and carries
 * its bytes, up to EXPORT_FILE_BYTES all together; a file past that, or one the server does not hand
 * over as its item names it, is listed as left out. Neither ever writes a file's key or its id on
 * the server into an export.
 */
import { MAX_ATTACHMENT_NAME, type ItemAttachment } from "../attachments/attachment";
import { SecurityError } from "../errors";
import type { ItemContent } from "../item-types";
import type { ExportedFile, ExportedItem, FileLeftOut } from "../transfer/export";
import type { ImportFile } from "../transfer/types";
import type { Attachments } from "./attachments";

/** Files counted as they go: each uploaded (an import) or downloaded (an export). */
export interface FileProgress {
  phase: "files";
  done: number;
  total: number;
}

/** A file of an imported item that did not come in, and why. */
export interface FileFailure {
  item: string;
  file: string;
  why: string;
}

/** An item just added, with the files it is to get. */
export interface ItemFiles {
  itemId: string;
  name: string;
  files: readonly ImportFile[];
}

/** Why a file's name cannot be an attachment's, or undefined. */
function nameProblem(name: string): string | undefined {
  if (name.trim() === "" || [...name].length > MAX_ATTACHMENT_NAME)
    return `its name is empty or longer than ${MAX_ATTACHMENT_NAME} characters, as no attachment's may be`;
  return undefined;
}

/** Uploads each item's files (one new revision each); answers how many came in and which did not. */
export async function uploadFiles(
  attachments: Attachments,
  vaultId: string,
  targets: readonly ItemFiles[],
  onProgress: (p: FileProgress) => void = () => {},
): Promise<{ files: number; failed: FileFailure[] }> {
  const total = targets.reduce((n, t) => n + t.files.length, 0);
  const failed: FileFailure[] = [];
  let files = 0;
  let done = 0;
  for (const { itemId, name: item, files: toSend } of targets)
    for (const file of toSend) {
      const problem = nameProblem(file.name);
      try {
        if (problem) throw new Error(problem);
        await attachments.upload(vaultId, itemId, file.name, file.data);
        files++;
      } catch (err) {
        failed.push({ item, file: file.name, why: (err as Error).message });
      }
      onProgress({ phase: "files", done: ++done, total });
    }
  return { files, failed };
}

/** What an encrypted export carries of files, and what it left out. */
export interface ExportFiles {
  /** Bytes the export may still carry (starts at EXPORT_FILE_BYTES, shared by every vault of the export). */
  room: number;
  carried: number;
  leftOut: FileLeftOut[];
}

/**
 * The vault's items for an encrypted export: each file its items name downloaded and checked, its
 * bytes carried while `budget` has room; one past it, or one the server does not hand over as its
 * item names it (ATTACHMENT_WITHHELD, ATTACHMENT_TAMPERED), listed in `budget.leftOut` and not in
 * its item. Any other failure (the server gone, the session ended) stops the export.
 */
export async function withFileBytes(
  attachments: Attachments,
  vault: { vaultId: string; name: string },
  items: readonly ItemContent[],
  budget: ExportFiles,
  why: { pastRoom: string },
  onProgress: (p: FileProgress) => void = () => {},
): Promise<ExportedItem[]> {
  const total = items.reduce((n, i) => n + (i.attachments?.length ?? 0), 0);
  let done = 0;
  const out: ExportedItem[] = [];
  for (const { attachments: named, ...content } of items) {
    const carried: ExportedFile[] = [];
    for (const file of named ?? []) {
      const left = (reason: string) =>
        budget.leftOut.push({ vault: vault.name, item: content.name, file: file.name, size: file.size, why: reason });
      if (file.size > budget.room) left(why.pastRoom);
      else {
        const data = await downloaded(attachments, vault.vaultId, file, left);
        if (data) {
          carried.push({ name: file.name, size: file.size, ...(file.type !== undefined && { type: file.type }), data });
          budget.room -= file.size;
          budget.carried++;
        }
      }
      onProgress({ phase: "files", done: ++done, total });
    }
    out.push({ ...content, ...(carried.length > 0 && { attachments: carried }) });
  }
  return out;
}

async function downloaded(
  attachments: Attachments,
  vaultId: string,
  file: ItemAttachment,
  left: (why: string) => void,
): Promise<Uint8Array | undefined> {
  try {
    return await attachments.download(vaultId, file);
  } catch (err) {
    if (!(err instanceof SecurityError)) throw err;
    left(`${err.message} [${err.code}]`);
    return undefined;
  }
}
