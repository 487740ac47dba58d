/**
 * Attachment chunks and send parts in and out of a process with bounded memory: each chunk request (a PUT's body,
 * a GET's answer, about 1.4 MB of base64 each) holds one of ATTACHMENT_CONCURRENCY fair slots per
 * process while its chunk is in memory (PUTs and reads each have their own), waited for in turn as
 * rekey bodies are (lib/http/streamed-body.ts); then 503 past the process's cap, 429 past the
 * caller's or organization's share. A PUT's body is streamed from the gateway (one chunk is larger
 * than a NATS message), parsed within bounds that fit one chunk's `{ "data": "<base64>" }` and
 * nothing larger, and checked against the route's rules.
 *
 * A PUT's slot is held while its body arrives, a time its sender chooses, so these rules keep slow
 * or aimless bodies from holding every slot (a denial of files and sends to everyone else):
 * - Reads never wait for PUTs: they have slots of their own.
 * - A PUT's target is looked at before it takes a slot (the upload or send exists, is the caller's,
 *   unfinished, and has that index). A request likely to be refused is still read and judged as
 *   any other (a malformed body is answered 400 first, contract section 1; the refusal is the
 *   write's own), but in a pool of its own, half the size: such requests only wait for each other,
 *   and when it is full they are given the look's refusal without their body being read.
 * - A body arriving slower than the pace rule allows while another request waits for a slot is
 *   cut (408) and its slot given to the waiter; so is one that has held its slot for a quantum,
 *   for a waiter of an organization holding fewer slots (lib/domain/vaults/fair-share.ts).
 *
 * The bytes of every chunk read in whole or answered count toward the process's next paced
 * collection (lib/limits/collect-pacer.ts), so that the dead copies of chunks do not pile up. Their
 * real sizes, not a chunk's largest: small chunks in quick succession do not collect any sooner.
 * (A body refused before it is whole is not counted: its garbage waits for V8's own collection.)
 */
import type { Readable } from "node:stream";
import { AppError } from "../errors";
import { base64MaxChars } from "../domain/encoding";
import { CollectPacer } from "../limits/collect-pacer";
import { FairSlots } from "../limits/slots";
import { chunkSlotQuantumMs, slotWaitMs } from "../domain/vaults/fair-share";
import type { Ctx } from "./context";
import { bodyFields, checkPathIds, discardStream, readJsonStream, type BodyPace } from "./request-body";
import type { JsonBounds } from "./json-stream";
import { paramsOf, type ActionName } from "./routes";
import { paceIn, takeSlot } from "./streamed-body";
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

interface Pool {
  /** Slots for PUTs. */
  slots: FairSlots;
  /** Slots for PUTs whose target the look before the body refused: read and judged as any, apart from the rest. */
  doomed: FairSlots;
  /** Slots for reads, which never wait on a body still arriving. */
  reads: FairSlots;
  pacer: CollectPacer;
}

const pools = new WeakMap<object, Pool>();
/**
 * The process's one pool of chunk slots and its collection pacer (a node's config is one object):
 * attachment chunks and send parts share them.
 */
function poolOf(config: Config): Pool {
  let pool = pools.get(config);
  if (!pool) {
    const n = config.attachmentConcurrency;
    const quantumMs = chunkSlotQuantumMs(config.requestTimeoutMs);
    pool = {
      slots: new FairSlots(n, quantumMs),
      doomed: new FairSlots(Math.max(1, Math.floor(n / 2)), quantumMs),
      reads: new FairSlots(n),
      pacer: new CollectPacer(COLLECT_EVERY_BYTES),
    };
    pools.set(config, pool);
  }
  return pool;
}

/** A PUT's target as its path names it, before its body is read: its ids and index. */
export type ChunkTarget<Ids extends string> = Record<Ids, string> & { index: number };

/** The path's ids and index, as strings; throws as the route would refuse them (404). */
const pathIdsOf = (names: readonly string[], ctx: Ctx<Record<string, unknown>>): Record<string, string> =>
  checkPathIds({ ...Object.fromEntries(names.map((id) => [id, ctx.params[id]])), index: ctx.params.index });

/** The PUT's target: its path ids and index. */
function targetOf<Ids extends string>(names: readonly Ids[], ctx: Ctx<Record<string, unknown>>): ChunkTarget<Ids> {
  const ids = pathIdsOf(names, ctx);
  return { ...(ids as Record<Ids, string>), index: Number(ids.index) };
}

/** What `check` throws, if it throws: a refusal the client may be given (a 4xx of the contract's), else any error. */
const forecastOf = (check: () => Promise<void>): Promise<{ refusal?: AppError } | undefined> =>
  Promise.resolve()
    .then(check)
    .then(
      () => undefined,
      (err: unknown) => ({ refusal: err instanceof AppError && err.code < 500 ? err : undefined }),
    );

/**
 * The chunk routes' slots of one process, and the PUT body's reader: `put` is the PUT route's
 * action, `ids` its path ids, `maxSealed` its largest sealed chunk; `what` names them in a refusal.
 */
export function chunkTransfers<Ids extends string>(
  config: Config,
  put: { action: ActionName; ids: readonly Ids[]; maxSealed: number; what: string },
) {
  const { slots, doomed, reads, pacer } = poolOf(config);
  const check = new SafeValidator().compile(paramsOf(put.action)) as unknown as (v: unknown) => true | unknown[];
  const waitMs = slotWaitMs(config.requestTimeoutMs);
  const bounds = bodyBounds(put.maxSealed);

  async function readPut(ctx: Ctx<Record<string, unknown>>, pace: BodyPace): Promise<ChunkPut<Ids>> {
    const stream = ctx.stream as Readable | null;
    const raw = stream ? await readJsonStream(stream, bounds, Math.floor(config.requestTimeoutMs * 0.9), pace) : undefined;
    const fields = bodyFields(ctx.meta.jsonBody ? raw : undefined, { depthChecked: true });
    const ids = pathIdsOf(put.ids, ctx);
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
    /**
     * Reads a PUT's chunk in a slot and hands it to `store`. First `checkTarget` looks at its
     * target (throwing where `store` would likely refuse it); such a request has its body read in
     * the pool of requests likely to be refused, and `store` then judges it as it judges any (under
     * its lock: the look was only a forecast); when that pool has no room for it, the look's own
     * refusal is the answer (a 404 rather than a 503 that a client would retry, under a flood of
     * such requests only). Refused before or while reading, the rest of the body is drained.
     */
    async put(
      ctx: Ctx<Record<string, unknown>>,
      checkTarget: (target: ChunkTarget<Ids>) => Promise<void>,
      store: (chunk: ChunkPut<Ids>) => Promise<void>,
    ): Promise<void> {
      try {
        const forecast = await forecastOf(() => checkTarget(targetOf(put.ids, ctx)));
        const pool = forecast ? doomed : slots;
        const slot = await takeSlot(pool, ctx, put.what, waitMs).catch((busy: unknown) => {
          // No room to read a body likely refused: its refusal, rather than a 503 the client would retry.
          throw forecast?.refusal ?? busy;
        });
        try {
          const chunk = await readPut(ctx, paceIn(pool, slot));
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
      const slot = await takeSlot(reads, ctx, put.what, waitMs, owner);
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
