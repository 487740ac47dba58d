/**
 * Results that cross between nodes as streams when they are large. NATS caps one message at 1 MB
 * and Moleculer sends an ordinary result as one message; a vault's item list can be tens of MB.
 * A result for a caller on another node whose JSON exceeds `STREAM_RESULTS_OVER` bytes is sent as
 * a stream of that JSON in text chunks of 128 Ki characters (at most 384 KiB once escaped and
 * encoded: Moleculer's JSON serializer would send a Buffer chunk as an array of numbers), which
 * the gateway gathers, charges to its caller while it goes out (lib/http/answer-budget.ts) and
 * sends with the same bytes and content type. Results for a caller in the same process are left alone: no limit
 * applies there, and no extra serialization is paid.
 */
import { Readable } from "node:stream";
import type { Context, Middleware } from "moleculer";

export const STREAM_RESULTS_OVER = 512 * 1024;

export function largeResultsAsStreams(): Middleware {
  return {
    name: "LargeResultsAsStreams",
    localAction(next: (ctx: Context) => Promise<unknown>) {
      return async function streamIfLarge(this: unknown, ctx: Context) {
        const result = await next(ctx);
        if (ctx.nodeID === ctx.broker.nodeID || ctx.nodeID == null) return result;
        if (result === null || typeof result !== "object" || result instanceof Readable || Buffer.isBuffer(result)) return result;
        const json = JSON.stringify(result);
        if (json.length <= STREAM_RESULTS_OVER) return result;
        (ctx.meta as { $responseType?: string }).$responseType = "application/json; charset=utf-8";
        return Readable.from(chunks(json, 128 * 1024), { objectMode: false, encoding: "utf8" });
      };
    },
  } as unknown as Middleware;
}

function* chunks(text: string, size: number): Generator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}
