/**
 * A file on an item, as the item holds it, sealed in the item's ciphertext: the attachment's id on
 * the server, the file's name, type and size, and the key its chunks are sealed with
 * (protocol/formats/attachments.ts). So the vault key wraps the file key, a rekey re-wraps it with
 * the item, and the signed item log, which names the item's digest, names the item's files: a file
 * the server drops, swaps or rolls back is caught on download.
 */
import { fromBase64 } from "../../protocol/encoding";
import { isCanonicalId } from "../../protocol/ids";

export interface ItemAttachment {
  /** The attachment's id on the server (a lower-case UUID), bound into every chunk's associated data. */
  id: string;
  /** The file's name, as shown and saved. */
  name: string;
  /** Its plaintext size in bytes. */
  size: number;
  /** The file key: 32 random bytes, base64. */
  key: string;
  /** Its media type, when known (`application/pdf`). */
  type?: string;
}

export const MAX_ATTACHMENT_NAME = 255;

const UNITS = ["KiB", "MiB", "GiB", "TiB"];

/** A file's size as a person reads it (the web vault, vaultctl): bytes below 1 KiB, else one decimal of the largest binary unit that fits. */
export function fileSizeText(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? "1 byte" : `${bytes} bytes`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** Attachments as an item holds them, each checked; throws naming what is wrong. */
export function checkedAttachments(raw: unknown): ItemAttachment[] {
  if (!Array.isArray(raw)) throw new Error("attachments is not a list");
  const seen = new Set<string>();
  return raw.map((a: unknown) => {
    const { id, name, size, key, type } = (a ?? {}) as Record<string, unknown>;
    if (typeof id !== "string" || !isCanonicalId(id)) throw new Error("an attachment's id is not a lower-case UUID");
    if (seen.has(id)) throw new Error(`attachment ${id} appears twice`);
    seen.add(id);
    if (typeof name !== "string" || name.trim() === "" || [...name].length > MAX_ATTACHMENT_NAME)
      throw new Error(`an attachment's name is empty or longer than ${MAX_ATTACHMENT_NAME} characters`);
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) throw new Error("an attachment's size is not a whole number");
    if (typeof key !== "string" || !isFileKey(key)) throw new Error("an attachment's key is not 32 bytes of base64");
    if (type !== undefined && (typeof type !== "string" || type.length > 255)) throw new Error("an attachment's type is not text");
    return { id, name, size, key, ...(type !== undefined && { type }) };
  });
}

function isFileKey(key: string): boolean {
  try {
    return fromBase64(key).length === 32;
  } catch {
    return false;
  }
}
