// Attachments: files on items, encrypted on the client in chunks. Design: docs/design/attachments.md
//
// Each file has its own random 256-bit key, sealed in the item's content (so the vault key wraps it,
// and a rekey re-wraps it with the item, never touching the file's chunks), with the file's id,
// name and size. The file is cut into chunks of ATTACHMENT_CHUNK_BYTES (the last one shorter; an
// empty file is one empty chunk), each sealed with AES-256-GCM on its own:
//   chunk  = iv (12) || ciphertext || tag (16)
//   aad    = "vault-attachment-chunk/v1\n" || attachmentId (36 ASCII) || "\n" || index (u32, big-endian) || final (1 byte: 1 for the last chunk, else 0)
// The attachment id keeps a chunk from being taken for another file's, the index from being moved,
// the final flag from a file being cut short or run on. What the item's content names (id, key,
// size) is in the signed item log through the item's digest: a file dropped, swapped or rolled back
// by the server is caught by the client.
import { concatBytes, utf8, type Bytes } from "../encoding";
import { gcmDecrypt, gcmEncrypt } from "../crypto/primitives";

export const ATTACHMENT_CHUNK_CONTEXT = "vault-attachment-chunk/v1\n";
/** A chunk's plaintext: every chunk but the last holds exactly this many bytes. */
export const ATTACHMENT_CHUNK_BYTES = 1024 * 1024;
/** What AES-GCM adds to each chunk: its IV and tag. */
export const CHUNK_OVERHEAD_BYTES = 12 + 16;
/** The most chunks one file may have: 2^20 (a file of 1 TiB): the index fits its four bytes with room. */
export const MAX_ATTACHMENT_CHUNKS = 1 << 20;

/** How many chunks a file of `size` bytes is sealed in (an empty file: one). */
export const chunkCountOf = (size: number): number => Math.max(1, Math.ceil(size / ATTACHMENT_CHUNK_BYTES));

/** The plaintext length of chunk `index` of a file of `size` bytes. */
export function chunkPlainBytes(size: number, index: number): number {
  const count = chunkCountOf(size);
  if (!Number.isInteger(index) || index < 0 || index >= count) throw new RangeError(`a file of ${size} bytes has no chunk ${index}`);
  return index < count - 1 ? ATTACHMENT_CHUNK_BYTES : size - (count - 1) * ATTACHMENT_CHUNK_BYTES;
}

/** The sealed length of chunk `index` (what the server stores and answers). */
export const chunkSealedBytes = (size: number, index: number): number => chunkPlainBytes(size, index) + CHUNK_OVERHEAD_BYTES;

/** What the server stores of a whole file: its plaintext and each chunk's IV and tag. */
export const sealedSizeOf = (size: number): number => size + chunkCountOf(size) * CHUNK_OVERHEAD_BYTES;

/** The associated data of chunk `index` of attachment `attachmentId`. */
export function chunkAad(attachmentId: string, index: number, final: boolean): Bytes {
  const tail = new Uint8Array(5);
  new DataView(tail.buffer).setUint32(0, index, false);
  tail[4] = final ? 1 : 0;
  return concatBytes(utf8(`${ATTACHMENT_CHUNK_CONTEXT}${attachmentId}\n`), tail);
}

/** Seals one chunk of a file (`final`: the file's last). */
export function sealChunk(fileKey: Bytes, attachmentId: string, index: number, final: boolean, plaintext: Bytes): Promise<Bytes> {
  return gcmEncrypt(fileKey, plaintext, chunkAad(attachmentId, index, final));
}

/** Opens one chunk; throws when the key, the file, the index, the final flag or a single bit is wrong. */
export function openChunk(fileKey: Bytes, attachmentId: string, index: number, final: boolean, sealed: Bytes): Promise<Bytes> {
  return gcmDecrypt(fileKey, sealed, chunkAad(attachmentId, index, final));
}
