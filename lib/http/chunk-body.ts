/**
 * Attachment chunks and send parts in and out of a process with bounded memory: each chunk request (a PUT's body,
 * a GET's answer, about 1.4 MB of base64 each) holds one of ATTACHMENT_CONCURRENCY fair slots per
 * process while its chunk is in memory, waited for in turn as rekey bodies are (lib/http/streamed-body.ts);
 * then 503 past the process's cap, 429 past the caller's or organization's share. A PUT's body is
 * streamed from the gateway (one chunk is larger than a NATS message), parsed within bounds that
 * fit one chunk's `{ "data": "<base64>" }` and nothing larger, and checked against the route's rules.
 * The bytes of every chunk read in whole or answered count toward the process's next paced
 * collection (lib/limits/collect-pacer.ts), so that the dead copies of chunks do not pile up. Their
 * real sizes, not a chunk's largest: small chunks in quick succession do not collect any sooner.
 * (A body refused before it is whole is not counted: its garbage waits for V8's own collection.)
 */
import type { Readable } from "node:stream";
import { base64MaxChars } from "../domain/encoding";
import { CollectPacer } from "../limits/collect-pacer";
import { FairSlots } from "../limits/slots";
import { slotWaitMs } from "../domain/vaults/fair-share";
import type { Ctx } from "./context";
import { bodyFields, checkPathIds, discardStream, readJsonStream } from "./request-body";
import type { JsonBounds } from "./json-stream";
import { paramsOf, type ActionName } from "./routes";
import { takeSlot } from "./streamed-body";
import { SafeValidator } from "./validator";
import { Errors } from "moleculer";

/** A chunk body's bounds: `{"data":"..."}` of a sealed chunk of up to `maxSealed` bytes, with room for whitespace. */
const bodyBounds = (maxSealed: number): JsonBounds => ({
  maxBytes: base64MaxChars(maxSealed) + 1024,
  maxValues: 8,
  maxDepth: 2,
  maxStringChars: base64MaxChars(maxSealed),
});

type Config = { attachmentConcurrency: number; requestTimeoutMs: number };

/** A PUT's chunk: its path ids (strings, checked), its index and its sealed bytes. */
export type ChunkPut<Ids extends string> = Record<Ids, string> & { index: number; data: Uint8Array };

/** Who a slot is taken for where there is no caller (a public route): a group and a member of it. */
export interface SlotOwner {
  group: string;
  member: string;
}

/** Chunk bytes moved between two paced collections: about the garbage a process may hold. */
export const COLLECT_EVERY_BYTES = 2 * 1024 * 1024;

const pools = new WeakMap<object, { slots: FairSlots; pacer: CollectPacer }>();
/**
 * The process's one pool of chunk slots and its collection pacer (a node's config is one object):
 * attachment chunks and send parts share them.
 */
function poolOf(config: Config): { slots: FairSlots; pacer: CollectPacer } {
  let pool = pools.get(config);
  if (!pool)
    pools.set(config, (pool = { slots: new FairSlots(config.attachmentConcurrency), pacer: new CollectPacer(COLLECT_EVERY_BYTES) }));
  return pool;
}

/**
 * The chunk routes' slots of one process, and the PUT body's reader: `put` is the PUT route's
 * action, `ids` its path ids, `maxSealed` its largest sealed chunk; `what` names them in a refusal.
 */
export function chunkTransfers<Ids extends string>(
  config: Config,
  put: { action: ActionName; ids: readonly Ids[]; maxSealed: number; what: string },
) {
  const { slots, pacer } = poolOf(config);
  const check = new SafeValidator().compile(paramsOf(put.action)) as unknown as (v: unknown) => true | unknown[];
  const waitMs = slotWaitMs(config.requestTimeoutMs);
  const bounds = bodyBounds(put.maxSealed);

  async function readPut(ctx: Ctx<Record<string, unknown>>): Promise<ChunkPut<Ids>> {
    const stream = ctx.stream as Readable | null;
    const raw = stream ? await readJsonStream(stream, bounds, Math.floor(config.requestTimeoutMs * 0.9)) : undefined;
    const fields = bodyFields(ctx.meta.jsonBody ? raw : undefined, { depthChecked: true });
    const ids = checkPathIds({ ...Object.fromEntries(put.ids.map((id) => [id, ctx.params[id]])), index: ctx.params.index });
    // Path parameters win over body fields of the same name (contract section 1).
    const params: Record<string, unknown> = { ...fields, ...ids };
    const verdict = check(params);
    if (verdict !== true) throw new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", verdict);
    return {
      ...(Object.fromEntries(put.ids.map((id) => [id, params[id] as string])) as Record<Ids, string>),
      index: params.index as number,
      // Canonical base64, checked by the route's rule.
      data: Buffer.from(params.data as string, "base64"),
    };
  }

  return {
    /** Reads a PUT's chunk in a slot and hands it to `store`; refused before or while reading, the rest of the body is drained. */
    async put(ctx: Ctx<Record<string, unknown>>, store: (chunk: ChunkPut<Ids>) => Promise<void>): Promise<void> {
      try {
        const slot = await takeSlot(slots, ctx, put.what, waitMs);
        try {
          const chunk = await readPut(ctx);
          pacer.note(chunk.data.length);
          await store(chunk);
        } finally {
          slot.release();
        }
      } catch (err) {
        discardStream(ctx.stream as Readable | null);
        throw err;
      }
    },
    /**
     * Runs a chunk read in a slot: the caller's, or `owner`'s on a public route. `bytesOf` is the
     * size of what it answers, counted toward the next collection.
     */
    async read<T>(ctx: Ctx<unknown>, read: () => Promise<T>, bytesOf: (answer: T) => number, owner?: SlotOwner): Promise<T> {
      const slot = await takeSlot(slots, ctx, put.what, waitMs, owner);
      try {
        const answer = await read();
        pacer.note(bytesOf(answer));
        return answer;
      } finally {
        slot.release();
      }
    },
  };
}
