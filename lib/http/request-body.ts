/**
 * Request parts the gateway and the streamed rekey route both check, in the contract's order:
 * the body (400 not JSON, 413 too large), then path ids (404), then the fields (400).
 */
import type { Readable } from "node:stream";
import { AppError, invalid } from "../errors";
import { isUuid } from "../domain/ids";
import { base64MaxChars } from "../domain/encoding";
import { MAX_ENCRYPTED_DATA_BYTES } from "../domain/items/decisions";
import { rekeyMaxValues } from "../domain/vaults/limits";
import { JsonStreamParser, type JsonBounds } from "./json-stream";

/** JSON bodies are read for these content types, as body-parser's `json()` does; others count as no body. */
export function isJsonContentType(contentType: unknown): boolean {
  if (typeof contentType !== "string") return false;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^application\/[^/]+\+json$/.test(type);
}

/** A passkey's credential id (base64url, its case kept), the one path id that is not a UUID. */
const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,1024}$/;

/** An attachment chunk's index: digits, no leading zero (its range is the route's to check). */
const CHUNK_INDEX = /^(0|[1-9][0-9]{0,8})$/;

/**
 * Path ids are UUIDs in any case, stored lower-case (a passkey's `credentialId`: base64url, as
 * given; a chunk's `index`: digits); a malformed one is a resource that does not exist.
 */
export function checkPathIds(params: Record<string, unknown> | undefined): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    if (name === "credentialId" && typeof value === "string" && CREDENTIAL_ID.test(value)) {
      ids[name] = value;
      continue;
    }
    if (name === "index" && typeof value === "string" && CHUNK_INDEX.test(value)) {
      ids[name] = value;
      continue;
    }
    if (typeof value !== "string" || !isUuid(value)) throw new AppError("NOT_FOUND", "Not found");
    ids[name] = value.toLowerCase();
  }
  return ids;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deeper than any body of the contract (the rekey's is 3): refused before validation, which would walk it. */
export const MAX_JSON_DEPTH = 16;

/**
 * Refuses a value nested deeper than `max` arrays and objects (400), without recursion: 400,000
 * nested arrays fit in 800 KB of JSON, and walking them recursively, as a validator's message
 * building does, ends in a 500.
 */
export function assertShallowJson(value: unknown, max = MAX_JSON_DEPTH): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth >= max) throw invalid(`The request body is nested deeper than ${max} levels`);
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
}

/** The body's fields: a JSON object of reasonable depth (`depthChecked`: as the streamed parser bounds it), or nothing. */
export function bodyFields(body: unknown, opts: { depthChecked?: boolean } = {}): Record<string, unknown> {
  if (body === undefined) return {};
  if (!isPlainObject(body)) throw invalid("The request body must be a JSON object");
  if (!opts.depthChecked) assertShallowJson(body);
  return body;
}

/**
 * Lets a streamed body go unread: what arrives is discarded, an error is nobody's. A request
 * refused before its body is read must still be drained: on a node of the split deployment the
 * stream is Moleculer's, and one left unread (with no error listener) stays in memory for good.
 */
export function discardStream(stream: Readable | null | undefined): void {
  if (!stream) return;
  stream.on("error", () => undefined);
  stream.resume();
}

/** A body's slowest pace while it holds a slot another request waits for (the rule: lib/domain/vaults/fair-share.ts). */
export interface BodyPace {
  minBytesPerSec: number;
  graceMs: number;
  /** Whether another request is waiting for a slot. */
  starved(): boolean;
  /** Offers the body's slot to waiters while it arrives: `giveWay` ends the read; the returned function withdraws the offer. */
  inTransfer?(giveWay: () => void): () => void;
}

/** How often a paced body's progress is looked at. */
const PACE_CHECK_MS = 250;

const tooSlow = (pace: BodyPace, received: number, elapsedMs: number): boolean =>
  elapsedMs > pace.graceMs && received < (pace.minBytesPerSec * elapsedMs) / 1000 && pace.starved();

const slowBody = (pace: BodyPace) =>
  new AppError(
    "BODY_TIMEOUT",
    `The request body arrived slower than ${Math.round(pace.minBytesPerSec / 1024)} KiB/s while other requests waited for its place`,
    { retryAfterSec: 1 },
  );

const gaveWay = (startedAt: number) =>
  new AppError(
    "BODY_TIMEOUT",
    `The request body was still arriving after ${Math.round((Date.now() - startedAt) / 1000)} s while another organization's request waited for its place; send it again`,
    { retryAfterSec: 1 },
  );

/**
 * Reads a streamed JSON body, parsed as it arrives within `bounds` (lib/http/json-stream.ts). A body
 * error (413 past the limit, 400 for what is not JSON or not within bounds) fails at once and the
 * rest is discarded (so the client still gets the answer, not a reset). A body still unfinished
 * after `deadlineMs`, or whose sender went away, fails too: whoever waits on it is never left
 * waiting on a stream that will not end. With a `pace`, so does one that arrives slower than it
 * allows while another request waits, and one whose slot is given up to a waiter of another
 * organization (`inTransfer`: the rule is lib/domain/vaults/fair-share.ts). The body's text is
 * never part of an error.
 */
export function readJsonStream(stream: Readable, bounds: JsonBounds, deadlineMs: number, pace?: BodyPace): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parser = new JsonStreamParser(bounds);
    let settled = false;
    let received = 0;
    const started = Date.now();
    const settle = (err: unknown, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(paceCheck);
      withdraw?.();
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("close", onClose);
      // Whatever still arrives is discarded; an error after this is nobody's to handle.
      stream.on("error", () => undefined);
      stream.resume();
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      received += chunk.length;
      try {
        parser.write(chunk);
      } catch (err) {
        settle(err);
      }
    };
    const onEnd = () => {
      try {
        settle(undefined, parser.end());
      } catch (err) {
        settle(err);
      }
    };
    const onClose = () => settle(new AppError("INVALID", "The request body ended before it was complete"));
    const timer = setTimeout(
      () => settle(new AppError("BODY_TIMEOUT", `The request body did not arrive within ${Math.round(deadlineMs / 1000)} s`)),
      deadlineMs,
    );
    const paceCheck = pace
      ? setInterval(() => tooSlow(pace, received, Date.now() - started) && settle(slowBody(pace)), PACE_CHECK_MS)
      : undefined;
    paceCheck?.unref();
    const withdraw = pace?.inTransfer?.(() => settle(gaveWay(started)));
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("close", onClose);
    stream.once("error", (err) => settle(err instanceof AppError ? err : new AppError("INVALID", "The request body could not be read")));
  });
}

/** The bounds a rekey body is parsed within (the numbers: lib/domain/vaults/limits.ts). */
export function rekeyBodyBounds(config: { rekeyBodyLimitBytes: number; vaultMaxItems: number }): JsonBounds {
  return {
    maxBytes: config.rekeyBodyLimitBytes,
    maxValues: rekeyMaxValues(config.vaultMaxItems),
    maxDepth: MAX_JSON_DEPTH,
    // The longest string of a legitimate body is an item's encryptedData; room for it written with escapes.
    maxStringChars: 2 * base64MaxChars(MAX_ENCRYPTED_DATA_BYTES),
  };
}
