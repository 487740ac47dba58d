/**
 * Files on items (design: docs/design/attachments.md). A file is sealed here, chunk by chunk, under
 * a key of its own (protocol/formats/attachments.ts), uploaded in chunks that a broken connection
 * or a restarted server node only delays (each chunk is sent again until it lands; an upload broken
 * off altogether is taken up with `resume`), and then named in its item, key and all, by a signed
 * item write. Reading it back, every chunk must open under that key as that file's chunk at that
 * place, and the last as the last: what the server drops, swaps, cuts short or rolls back is
 * refused by name (`ATTACHMENT_WITHHELD`, `ATTACHMENT_TAMPERED`), never saved.
 */
import { fromBase64, toBase64, type Bytes } from "../../protocol/encoding";
import { SecurityError } from "../../protocol/errors";
import { randomBytes } from "../../protocol/crypto/primitives";
import { ATTACHMENT_CHUNK_BYTES, chunkCountOf, chunkPlainBytes, openChunk, sealChunk } from "../../protocol/formats/attachments";
import type { ItemAttachment } from "../attachments/attachment";
import { readSlice, sourceSize, type AttachmentSource } from "../attachments/source";
import { ApiError } from "../errors";
import type { ClientCore } from "./core";
import { retrying } from "./retrying";
import type { History } from "./history";
import type { Items } from "./items";
import type { Item } from "./types";

/** Chunks in flight at once: the server's fair share of one member (a quarter of ATTACHMENT_CONCURRENCY's default 8). */
const IN_FLIGHT = 2;
/** Files on the server no kept revision names are deleted by `tidy` only once this old: one uploaded just now is about to be named. */
export const TIDY_AFTER_MS = 60 * 60 * 1000;

/** An upload begun: what `resume` needs to finish it (the key included: keep it as secret as the item). */
export interface PendingUpload {
  vaultId: string;
  itemId: string;
  attachment: ItemAttachment;
}

export interface UploadOptions {
  /** The file's media type, kept with its name. */
  type?: string;
  /** Hears the upload begun (to keep for `resume`), then each chunk stored. */
  onBegun?: (pending: PendingUpload) => void;
  onProgress?: (sent: number, size: number) => void;
}

interface ServerStatus {
  attachmentId: string;
  size: number;
  complete: boolean;
  received: number[];
}

export class Attachments {
  constructor(
    private readonly core: ClientCore,
    private readonly items: Items,
    private readonly history: History,
  ) {}

  /** Seals and uploads a file, then names it in the item (a new revision); answers the item as written. */
  async upload(vaultId: string, itemId: string, name: string, source: AttachmentSource, opts: UploadOptions = {}): Promise<Item> {
    const attachment: ItemAttachment = {
      id: globalThis.crypto.randomUUID(),
      name,
      size: sourceSize(source),
      key: toBase64(randomBytes(32)),
      ...(opts.type && { type: opts.type }),
    };
    await this.core.http.request("POST", `${itemPath(vaultId, itemId)}/attachments`, {
      body: { attachmentId: attachment.id, size: attachment.size },
    });
    opts.onBegun?.({ vaultId, itemId, attachment });
    return this.send({ vaultId, itemId, attachment }, source, new Set(), opts);
  }

  /** Finishes an upload broken off (after `onBegun`): sends only the chunks the server does not have, then names the file in its item. */
  async resume(pending: PendingUpload, source: AttachmentSource, opts: Omit<UploadOptions, "onBegun" | "type"> = {}): Promise<Item> {
    if (sourceSize(source) !== pending.attachment.size) throw new Error("this is not the file the upload was begun with: its size differs");
    const status = await this.status(pending.vaultId, pending.attachment.id);
    return this.send(pending, source, new Set(status.complete ? [] : status.received), opts, status.complete);
  }

  private async send(p: PendingUpload, source: AttachmentSource, have: Set<number>, opts: UploadOptions, complete = false): Promise<Item> {
    const { vaultId, attachment } = p;
    if (!complete) {
      const key = fromBase64(attachment.key);
      const count = chunkCountOf(attachment.size);
      const todo = Array.from({ length: count }, (_, i) => i).filter((i) => !have.has(i));
      let sent = (count - todo.length) * ATTACHMENT_CHUNK_BYTES;
      // On a failure the other worker finishes the chunk it holds and takes no more, and the upload
      // rejects only then: nothing goes on in the background, and `resume` sees what arrived.
      let failed: { reason: unknown } | undefined;
      const worker = async () => {
        for (let i = todo.shift(); i !== undefined && !failed; i = todo.shift()) {
          const plain = await readSlice(source, i * ATTACHMENT_CHUNK_BYTES, chunkPlainBytes(attachment.size, i));
          const sealed = await sealChunk(key, attachment.id, i, i === count - 1, plain);
          await retrying(() =>
            this.core.http.request("PUT", `${filePath(vaultId, attachment.id)}/chunks/${i}`, { body: { data: toBase64(sealed) } }),
          );
          sent += plain.length;
          opts.onProgress?.(Math.min(sent, attachment.size), attachment.size);
        }
      };
      const stopOnFailure = (reason: unknown) => void (failed ??= { reason });
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, todo.length) }, () => worker().catch(stopOnFailure)));
      if (failed) throw failed.reason;
      await retrying(() => this.core.http.request("POST", `${filePath(vaultId, attachment.id)}/finish`, { body: {} }));
    }
    return this.name(p);
  }

  /** Names the file in its item: the item as it is now, with the file added (again, on a write that raced it). */
  private async name({ vaultId, itemId, attachment }: PendingUpload): Promise<Item> {
    for (let attempt = 1; ; attempt++) {
      const item = await this.items.getItem(vaultId, itemId);
      if (item.attachments?.some((a) => a.id === attachment.id)) return item;
      try {
        return await this.items.editItem(vaultId, itemId, withContent(item, [...(item.attachments ?? []), attachment]), {
          revision: item.revision,
        });
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && err.field === "revision" && attempt < 5)) throw err;
      }
    }
  }

  /**
   * A file an item, a kept revision or a trashed item this client opened names, read chunk by chunk
   * and checked; `write` hears each chunk's plaintext in order (nothing is kept), else the whole file
   * is answered. `ATTACHMENT_WITHHELD` when the server does not hand it over whole, `ATTACHMENT_TAMPERED`
   * when a chunk is not this file's at its place.
   */
  async download(vaultId: string, file: ItemAttachment, write?: (chunk: Bytes) => void | Promise<void>): Promise<Bytes | undefined> {
    const key = fromBase64(file.key);
    const count = chunkCountOf(file.size);
    const parts: Bytes[] = [];
    for (let i = 0; i < count; i++) {
      const sealed = await this.fetchChunk(vaultId, file, i);
      let plain: Bytes;
      try {
        plain = await openChunk(key, file.id, i, i === count - 1, sealed);
      } catch {
        throw new SecurityError("ATTACHMENT_TAMPERED", `chunk ${i} of ${file.name} does not open as that file's chunk ${i} of ${count}`);
      }
      if (plain.length !== chunkPlainBytes(file.size, i))
        throw new SecurityError("ATTACHMENT_TAMPERED", `chunk ${i} of ${file.name} is not the size its item names`);
      if (write) await write(plain);
      else parts.push(plain);
    }
    if (write) return undefined;
    const out = new Uint8Array(file.size);
    let at = 0;
    for (const p of parts) out.set(p, (at += p.length) - p.length);
    return out;
  }

  private async fetchChunk(vaultId: string, file: ItemAttachment, index: number): Promise<Bytes> {
    let answer: { index: number; data: string };
    try {
      answer = await retrying(() => this.core.http.request(`GET`, `${filePath(vaultId, file.id)}/chunks/${index}`));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404)
        throw new SecurityError("ATTACHMENT_WITHHELD", `the server does not hand over ${file.name} (chunk ${index})`);
      throw err;
    }
    if (answer?.index !== index || typeof answer.data !== "string")
      throw new SecurityError("ATTACHMENT_TAMPERED", `the server answered another chunk than ${index} of ${file.name}`);
    try {
      return fromBase64(answer.data);
    } catch {
      throw new SecurityError("ATTACHMENT_TAMPERED", `chunk ${index} of ${file.name} is not base64`);
    }
  }

  /** Takes a file off its item (a new revision); its chunks stay while a kept revision names it (`tidy`). */
  async remove(vaultId: string, itemId: string, attachmentId: string): Promise<Item> {
    for (let attempt = 1; ; attempt++) {
      const item = await this.items.getItem(vaultId, itemId);
      const kept = (item.attachments ?? []).filter((a) => a.id !== attachmentId);
      if (kept.length === (item.attachments ?? []).length) return item;
      try {
        const written = await this.items.editItem(vaultId, itemId, withContent(item, kept), { revision: item.revision });
        await this.tidy(vaultId, itemId);
        return written;
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && err.field === "revision" && attempt < 5)) throw err;
      }
    }
  }

  /**
   * Deletes the item's files on the server that neither the item nor any revision it keeps names
   * (a file taken off, once its last revision is gone; an upload that was never named), older than
   * `graceMs` (TIDY_AFTER_MS: one finished just now may be about to be named). Answers how many went.
   */
  async tidy(vaultId: string, itemId: string, graceMs = TIDY_AFTER_MS): Promise<number> {
    const now = Date.now();
    const [item, revisions, listed] = await Promise.all([
      this.items.getItem(vaultId, itemId),
      this.history.itemHistory(vaultId, itemId),
      this.core.http.request<{ attachments: Array<{ attachmentId: string; createdAt: string }> }>(
        "GET",
        `${itemPath(vaultId, itemId)}/attachments`,
      ),
    ]);
    const named = new Set([item, ...revisions].flatMap((c) => (c.attachments ?? []).map((a) => a.id)));
    let deleted = 0;
    for (const a of listed.attachments) {
      if (named.has(a.attachmentId) || now - Date.parse(a.createdAt) < graceMs) continue;
      await this.core.http.request("DELETE", filePath(vaultId, a.attachmentId));
      deleted++;
    }
    return deleted;
  }

  private status(vaultId: string, attachmentId: string): Promise<ServerStatus> {
    return this.core.http.request<ServerStatus>("GET", filePath(vaultId, attachmentId));
  }
}

const itemPath = (vaultId: string, itemId: string) => `/vaults/${encodeURIComponent(vaultId)}/items/${encodeURIComponent(itemId)}`;
const filePath = (vaultId: string, attachmentId: string) =>
  `/vaults/${encodeURIComponent(vaultId)}/attachments/${encodeURIComponent(attachmentId)}`;

/** An item's content with its files replaced (none: no `attachments` at all, as the item seals it). */
function withContent(item: Item, attachments: ItemAttachment[]) {
  const { itemId: _i, vaultId: _v, revision: _r, createdAt: _c, updatedAt: _u, attachments: _a, ...content } = item;
  return attachments.length > 0 ? { ...content, attachments } : content;
}
