/**
 * Large answers (a file's chunk, a send's part: about 1.4 MB of base64 each) held in turn until
 * they have gone out.
 *
 * The service's chunk slot (lib/http/chunk-body.ts) is given back when its action returns, before
 * the gateway has written the answer out. A client that asks and never reads (many requests
 * pipelined on one connection, or over many connections) would leave the gateway holding every
 * answer for as long as it keeps its connections open: hundreds of MB, by anyone holding one send
 * link. So a large answer takes one of the gateway's fair slots before its action is called (per
 * organization and member; on a public route, per address) and gives it back once it is written
 * out or its connection has gone; one not written out within `graceMs` of its request has its
 * connection closed. A caller at its share waits its turn, then is answered 429 (the process at its
 * cap: 503), with Retry-After. While its answer goes out, a slot may be given to another
 * organization's request waiting for one, as a chunk body's is (lib/domain/vaults/fair-share.ts,
 * `planGiveWay`): its connection is closed. Clients that never read held all 32 slots for 30 s
 * at a time, with no bandwidth at all, and every other download waited them out.
 */
import type { ServerResponse } from "node:http";
import type { Context } from "moleculer";
import { addressHolder, FairSlots } from "../limits/slots";
import { chunkSlotQuantumMs, slotWaitMs } from "../domain/vaults/fair-share";
import type { RequestMeta } from "./context";
import { takeSlot } from "./streamed-body";

/** Large answers a process holds at once, as a multiple of ATTACHMENT_CONCURRENCY (the SDK reads two chunks at a time). */
export const LARGE_ANSWERS_PER_CHUNK_SLOT = 4;

export class LargeAnswers {
  private readonly slots: FairSlots;
  private readonly waitMs: number;
  /** How long an answer may take to go out: REQUEST_TIMEOUT, as a request's receipt does. */
  private readonly graceMs: number;

  constructor(config: { attachmentConcurrency: number; requestTimeoutMs: number }) {
    this.slots = new FairSlots(config.attachmentConcurrency * LARGE_ANSWERS_PER_CHUNK_SLOT, chunkSlotQuantumMs(config.requestTimeoutMs));
    this.waitMs = slotWaitMs(config.requestTimeoutMs);
    this.graceMs = config.requestTimeoutMs;
  }

  /**
   * Takes a slot for `res`'s answer: the caller's, or `address`'s on a public route. Given back when
   * the answer has gone out or its connection closed; past `graceMs`, the connection is closed.
   */
  async hold(ctx: Context<unknown, RequestMeta>, res: ServerResponse, address?: string): Promise<void> {
    const owner = address === undefined ? undefined : addressHolder(address);
    const slot = await takeSlot(this.slots, ctx, "downloads", this.waitMs, owner);
    // Its connection gone while it waited its turn: no answer will go out.
    if (res.destroyed || res.closed) return slot.release();
    const cut = setTimeout(() => res.destroy(), this.graceMs);
    cut.unref();
    const withdraw = slot.inTransfer(() => res.destroy());
    res.once("close", () => {
      clearTimeout(cut);
      withdraw();
      slot.release();
    });
  }
}
