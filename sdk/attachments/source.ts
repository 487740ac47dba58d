/**
 * Where a file to attach is read from, a slice at a time, so that a large file is never held whole:
 * bytes in memory, a `Blob` (a browser's `File`), or anything that reads a range (a file on disk:
 * vaultctl opens one with `fileSource`).
 */
export type AttachmentSource = Uint8Array | Blob | RangeReader;

export interface RangeReader {
  size: number;
  /** Exactly `length` bytes from `offset` (fewer only past the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

export function sourceSize(source: AttachmentSource): number {
  if (source instanceof Uint8Array) return source.length;
  return source.size;
}

export async function readSlice(source: AttachmentSource, offset: number, length: number): Promise<Uint8Array<ArrayBuffer>> {
  if (source instanceof Uint8Array) return new Uint8Array(source.subarray(offset, offset + length));
  if (typeof Blob !== "undefined" && source instanceof Blob)
    return new Uint8Array(await source.slice(offset, offset + length).arrayBuffer());
  return new Uint8Array(await (source as RangeReader).read(offset, length));
}
