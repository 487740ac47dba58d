/**
 * Attachment chunks' wire format without a server (protocol/formats/attachments.ts;
 * protocol/vectors/attachment-vectors.json, made with node:crypto): the associated data, the sealed
 * chunks opened by the SDK's WebCrypto code and the SDK's own opened by node:crypto, and each chunk
 * refusing another file, another place, another final flag or a changed bit.
 */
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import vectors from "../../../../protocol/vectors/attachment-vectors.json";
import {
  ATTACHMENT_CHUNK_BYTES,
  chunkAad,
  chunkCountOf,
  chunkPlainBytes,
  chunkSealedBytes,
  openChunk,
  sealChunk,
  sealedSizeOf,
} from "../../../../protocol/formats/attachments";

const hex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));
const key = hex(vectors.keyHex);
const id = vectors.attachmentId;
function plainOf(index: number, length: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  for (let j = 0; j < length; j++) out[j] = (j * 7 + index) & 255;
  return out;
}

function nodeSeal(iv: Uint8Array, plain: Uint8Array, aad: Uint8Array): Buffer {
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(aad);
  return Buffer.concat([iv, c.update(plain), c.final(), c.getAuthTag()]);
}

test("sizes: a chunk is 1 MiB of plaintext and 28 bytes more sealed; an empty file is one empty chunk", () => {
  expect(ATTACHMENT_CHUNK_BYTES).toBe(vectors.chunkBytes);
  expect([0, 1, ATTACHMENT_CHUNK_BYTES, ATTACHMENT_CHUNK_BYTES + 1, 3 * ATTACHMENT_CHUNK_BYTES].map(chunkCountOf)).toEqual([1, 1, 1, 2, 3]);
  expect(chunkPlainBytes(vectors.file.size, 0)).toBe(ATTACHMENT_CHUNK_BYTES);
  expect(chunkPlainBytes(vectors.file.size, 1)).toBe(5);
  expect(chunkPlainBytes(0, 0)).toBe(0);
  expect(() => chunkPlainBytes(vectors.file.size, 2)).toThrow(RangeError);
  for (const c of vectors.file.chunks) expect(chunkSealedBytes(vectors.file.size, c.index)).toBe(c.sealedBytes);
  expect(sealedSizeOf(vectors.file.size)).toBe(vectors.file.chunks.reduce((n, c) => n + c.sealedBytes, 0));
  expect(sealedSizeOf(0)).toBe(28);
});

test("the associated data is the vectors': context, attachment id, index (u32 big-endian) and the final flag", () => {
  for (const c of vectors.file.chunks) expect(Buffer.from(chunkAad(id, c.index, c.final)).toString("hex")).toBe(c.aadHex);
  expect(Buffer.from(chunkAad(id, 0, true)).toString("hex")).toBe(vectors.emptyFile.chunk.aadHex);
});

test("node:crypto reproduces the vectors' chunks, and the SDK opens them to the file's bytes", async () => {
  for (const c of vectors.file.chunks) {
    const sealed = nodeSeal(hex(c.ivHex), plainOf(c.index, c.plainBytes), hex(c.aadHex));
    expect(createHash("sha256").update(sealed).digest("hex")).toBe(c.sealedSha256);
    if (c.sealedHex) expect(sealed.toString("hex")).toBe(c.sealedHex);
    const opened = Buffer.from(await openChunk(key, id, c.index, c.final, new Uint8Array(sealed)));
    // Compared as bytes at once (jest's deep equality walks a megabyte element by element).
    expect(opened.equals(Buffer.from(plainOf(c.index, c.plainBytes)))).toBe(true);
  }
  expect((await openChunk(key, id, 0, true, hex(vectors.emptyFile.chunk.sealedHex))).length).toBe(0);
});

test("node:crypto opens a chunk the SDK sealed", async () => {
  const plain = plainOf(3, 1000);
  const sealed = Buffer.from(await sealChunk(key, id, 3, false, plain));
  const d = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, 12));
  d.setAAD(chunkAad(id, 3, false));
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  expect(Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()])).toEqual(Buffer.from(plain));
});

test("a chunk opens only as its own file's, at its own place, with its own final flag, unchanged", async () => {
  const last = vectors.file.chunks[1]!;
  const sealed = hex(last.sealedHex!);
  await expect(openChunk(key, id, 1, true, sealed)).resolves.toBeDefined();
  await expect(openChunk(key, id, 1, false, sealed)).rejects.toThrow(); // the last, taken for one in the middle: the file runs on
  await expect(openChunk(key, id, 0, true, sealed)).rejects.toThrow(); // moved
  await expect(openChunk(key, "6f1c2a9e-4b7d-4c1e-9a3f-2d5e8b0c7a42", 1, true, sealed)).rejects.toThrow(); // another file's
  await expect(openChunk(new Uint8Array(32), id, 1, true, sealed)).rejects.toThrow(); // another key
  const flipped = sealed.slice();
  flipped[14]! ^= 1;
  await expect(openChunk(key, id, 1, true, flipped)).rejects.toThrow();
  // The empty file's one chunk is final: taken as a middle chunk it does not open (a file cut short to nothing).
  await expect(openChunk(key, id, 0, false, hex(vectors.emptyFile.chunk.sealedHex))).rejects.toThrow();
});
