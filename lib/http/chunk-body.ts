/**
 * Attachment chunks in and out of a process with bounded memory: each chunk request (a PUT's body,
 * a GET's answer, about 1.4 MB of base64 each) holds one of ATTACHMENT_CONCURRENCY fair slots per
 * process while its chunk is in memory, waited for in turn as rekey bodies are (lib/http/streamed-body.ts);
 * then 503 past the process's cap, 429 past the caller's or organization's share. A PUT's body is
 * streamed from the gateway (one chunk is larger than a NATS message), parsed within bounds that
 * fit one chunk's `{ "data": "<base64>" }` and nothing larger, and checked against the route's rules.
 */
import type { Readable } from "node:stream";
import { ATTACHMENT_CHUNK_BYTES, CHUNK_OVERHEAD_BYTES } from "../../protocol/formats/attachments";
import type { AttachmentId, VaultId } from "../domain/ids";
import { base64MaxChars } from "../domain/encoding";
import { FairSlots } from "../limits/slots";
import { slotWaitMs } from "../domain/vaults/fair-share";
import type { Ctx } from "./context";
import { bodyFields, checkPathIds, discardStream, readJsonStream } from "./request-body";
import type { JsonBounds } from "./json-stream";
import { paramsOf } from "./routes";
import { takeSlot } from "./streamed-body";
import { SafeValidator } from "./validator";
import { Errors } from "moleculer";

/** A sealed chunk's largest size, and its body's: `{"data":"..."}` with room for whitespace. */
export const MAX_SEALED_CHUNK_BYTES = ATTACHMENT_CHUNK_BYTES + CHUNK_OVERHEAD_BYTES;
const CHUNK_BODY_BOUNDS: JsonBounds = {
  maxBytes: base64MaxChars(MAX_SEALED_CHUNK_BYTES) + 1024,
  maxValues: 8,
  maxDepth: 2,
  maxStringChars: base64MaxChars(MAX_SEALED_CHUNK_BYTES),
};

type Config = { attachmentConcurrency: number; requestTimeoutMs: number };

export interface ChunkPut {
  vaultId: VaultId;
  attachmentId: AttachmentId;
  index: number;
  data: Uint8Array;
}

/** The chunk routes' slots of one process, and the PUT body's reader. */
export function chunkTransfers(config: Config) {
  const slots = new FairSlots(config.attachmentConcurrency);
  const check = new SafeValidator().compile(paramsOf("attachments.putChunk")) as unknown as (v: unknown) => true | unknown[];
  const waitMs = slotWaitMs(config.requestTimeoutMs);

  async function readPut(ctx: Ctx<Record<string, unknown>>): Promise<ChunkPut> {
    const stream = ctx.stream as Readable | null;
    const raw = stream ? await readJsonStream(stream, CHUNK_BODY_BOUNDS, Math.floor(config.requestTimeoutMs * 0.9)) : undefined;
    const fields = bodyFields(ctx.meta.jsonBody ? raw : undefined, { depthChecked: true });
    const ids = checkPathIds({ vaultId: ctx.params.vaultId, attachmentId: ctx.params.attachmentId, index: ctx.params.index });
    // Path parameters win over body fields of the same name (contract section 1).
    const params: Record<string, unknown> = { ...fields, ...ids };
    const verdict = check(params);
    if (verdict !== true) throw new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", verdict);
    return {
      vaultId: params.vaultId as VaultId,
      attachmentId: params.attachmentId as AttachmentId,
      index: params.index as number,
      // Canonical base64, checked by the route's rule.
      data: Buffer.from(params.data as string, "base64"),
    };
  }

  return {
    /** Reads a PUT's chunk in a slot and hands it to `store`; refused before or while reading, the rest of the body is drained. */
    async put(ctx: Ctx<Record<string, unknown>>, store: (chunk: ChunkPut) => Promise<void>): Promise<void> {
      try {
        const slot = await takeSlot(slots, ctx, "attachment chunks", waitMs);
        try {
          await store(await readPut(ctx));
        } finally {
          slot.release();
        }
      } catch (err) {
        discardStream(ctx.stream as Readable | null);
        throw err;
      }
    },
    /** Runs a chunk read in a slot. */
    async read<T>(ctx: Ctx<unknown>, read: () => Promise<T>): Promise<T> {
      const slot = await takeSlot(slots, ctx, "attachment chunks", waitMs);
      try {
        return await read();
      } finally {
        slot.release();
      }
    },
  };
}
