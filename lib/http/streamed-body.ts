/**
 * Actions whose JSON body is streamed from the gateway (`streamBody` routes: the rekey, a bulk
 * import), up to REKEY_BODY_LIMIT: beyond one NATS message and the 1 MiB of other routes. Each
 * body is read within bounds (lib/http/request-body.ts), held in one of REKEY_CONCURRENCY fair
 * slots per process (waited for in turn for up to two seconds, or a quarter of the request's
 * deadline; then 503 past the cap, 429 past the caller's organization's or own share,
 * so that no caller's large or stalled bodies grow memory without bound or starve another tenant;
 * a body arriving too slowly while another request waits is cut, 408, as is one past its
 * quantum for another organization's waiting request), then
 * checked against the route's rules: its top level at once, its arrays of ciphertexts a batch at a
 * time, yielding between batches, so that no check holds the event loop for long.
 */
import { Errors, type Context } from "moleculer";
import type { Readable } from "node:stream";
import type { VaultId } from "../domain/ids";
import { assertItemSizes } from "../domain/items/decisions";
import { AppError } from "../errors";
import { FairSlots, type HeldSlot } from "../limits/slots";
import {
  bodySlotQuantumMs,
  SLOW_BODY_GRACE_MS,
  SLOWEST_BODY_BYTES_PER_SEC,
  slotRefusalStatus,
  slotWaitMs,
  whoseShare,
} from "../domain/vaults/fair-share";
import { callerOf, type RequestMeta } from "./context";
import { bodyFields, checkPathIds, discardStream, readJsonStream, rekeyBodyBounds, type BodyPace } from "./request-body";
import { paramsOf, type ActionName } from "./routes";
import { SafeValidator } from "./validator";

type Check = (value: unknown) => true | unknown[];

const pools = new WeakMap<object, FairSlots>();
function poolOf(config: { rekeyConcurrency: number; requestTimeoutMs: number }): FairSlots {
  let pool = pools.get(config);
  if (!pool) pools.set(config, (pool = new FairSlots(config.rekeyConcurrency, bodySlotQuantumMs(config.requestTimeoutMs))));
  return pool;
}

/** Entries checked between two turns of the event loop. */
const VALIDATION_BATCH = 2_000;

const validationError = (verdict: unknown[]) => new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", verdict);

export interface StreamedBody<A extends string> {
  vaultId: VaultId;
  /** The top-level fields, checked. */
  top: Record<string, unknown>;
  /** Each array of ciphertexts, checked entry by entry (undefined: an optional one not sent). */
  arrays: Record<A, unknown[] | undefined>;
  /** When the request was taken (performance.now()), before its body was read. */
  started: number;
}

/** The route's rules, compiled: its top-level fields at once, and one check per entry of each array of ciphertexts. */
function compileChecks<A extends string>(action: ActionName, names: readonly A[]): { checkTop: Check; checks: Record<A, Check> } {
  const rules = paramsOf(action) as Record<string, { items: object }>;
  const validator = new SafeValidator();
  const top = Object.fromEntries(Object.entries(rules).filter(([k]) => !names.includes(k as A)));
  const checkTop = validator.compile(top) as unknown as Check;
  const checks = Object.fromEntries(
    names.map((n) => [n, validator.compile({ $$root: true, ...rules[n]!.items }) as unknown as Check]),
  ) as Record<A, Check>;
  return { checkTop, checks };
}

/** A body's slowest pace while it holds `slot`, one of `slots`, and the offer of its slot to waiters (the rules: lib/domain/vaults/fair-share.ts). */
export const paceIn = (slots: FairSlots, slot: HeldSlot): BodyPace => ({
  minBytesPerSec: SLOWEST_BODY_BYTES_PER_SEC,
  graceMs: SLOW_BODY_GRACE_MS,
  starved: () => slots.starved,
  inTransfer: (giveWay) => slot.inTransfer(giveWay),
});

/**
 * One of the process's fair slots for the caller, waited for in turn for a moment; then 429 (the
 * caller or its organization at its share) or 503 (the process at its cap), with `Retry-After`.
 */
export async function takeSlot(
  slots: FairSlots,
  ctx: Context<unknown, RequestMeta>,
  what: string,
  waitMs: number,
  /** Whose slot where the route has no caller (a public one): a group and a member of it. */
  owner?: { group: string; member: string },
): Promise<HeldSlot> {
  const who = owner ?? { group: callerOf(ctx).orgId, member: callerOf(ctx).userId };
  const slot = await slots.takeWithin(who, waitMs);
  if ("refusal" in slot)
    throw new AppError(slotRefusalStatus(slot.refusal), `Too many ${what}${whoseShare(slot.refusal)} in progress`, { retryAfterSec: 1 });
  return slot;
}

/**
 * The streamed body of `action` (a route with a `:vaultId`): `arrays` are its arrays of item
 * ciphertexts, checked a batch at a time (those in `optional` may be absent). `what` names the
 * action in the 503 ("Too many rekeys in progress").
 */
export function streamedBodies<A extends string>(
  config: { rekeyConcurrency: number; rekeyBodyLimitBytes: number; vaultMaxItems: number; requestTimeoutMs: number },
  action: ActionName,
  arrays: { required: readonly A[]; optional: readonly A[] },
  what: string,
  /** Refuses an array longer than this as soon as the body is read (before any database work). */
  maxEntries?: { max: number; refusal: () => Error },
) {
  const names = [...arrays.required, ...arrays.optional];
  const { checkTop, checks } = compileChecks(action, names);
  // One pool per node (its config): rekeys and imports share REKEY_CONCURRENCY's slots.
  const slots = poolOf(config);
  const bounds = rekeyBodyBounds(config);

  async function checkEntries(field: A, raw: unknown, optional: boolean): Promise<unknown[] | undefined> {
    if (raw === undefined && optional) return undefined;
    if (!Array.isArray(raw)) throw validationError([{ type: "required", field, message: `The '${field}' field must be an array.` }]);
    if (maxEntries && raw.length > maxEntries.max) throw maxEntries.refusal();
    for (let i = 0; i < raw.length; i += VALIDATION_BATCH) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const entry of raw.slice(i, i + VALIDATION_BATCH)) {
        const verdict = checks[field](entry);
        if (verdict !== true) throw validationError(verdict);
        assertItemSizes(entry as { encryptedData: string; encryptedName: string });
      }
    }
    return raw;
  }

  async function read(ctx: Context<{ vaultId: VaultId }, RequestMeta>, slot: HeldSlot): Promise<Omit<StreamedBody<A>, "started">> {
    const stream = ctx.stream as Readable | null;
    // The body's deadline: a little before the caller's own, so that the client reads why.
    const raw = stream ? await readJsonStream(stream, bounds, Math.floor(config.requestTimeoutMs * 0.9), paceIn(slots, slot)) : undefined;
    // Its depth was bounded as it was parsed.
    const fields = bodyFields(ctx.meta.jsonBody ? raw : undefined, { depthChecked: true });
    const vaultId = checkPathIds({ vaultId: ctx.params.vaultId }).vaultId! as VaultId;
    // Path parameters win over body fields of the same name (contract section 1).
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) if (!names.includes(k as A)) rest[k] = v;
    const verdict = checkTop({ ...rest, vaultId });
    if (verdict !== true) throw validationError(verdict);
    const out = {} as Record<A, unknown[] | undefined>;
    for (const n of arrays.required) out[n] = await checkEntries(n, fields[n], false);
    for (const n of arrays.optional) out[n] = await checkEntries(n, fields[n], true);
    return { vaultId, top: rest, arrays: out };
  }

  return {
    /** Takes a slot, reads and checks the body, runs `handle`; refused before or while reading, what is left of the body is drained, never held. */
    async handle<T>(ctx: Context<{ vaultId: VaultId }, RequestMeta>, handle: (body: StreamedBody<A>) => Promise<T>): Promise<T> {
      const started = performance.now();
      try {
        const slot = await takeSlot(slots, ctx, what, slotWaitMs(config.requestTimeoutMs));
        try {
          return await handle({ ...(await read(ctx, slot)), started });
        } finally {
          slot.release();
        }
      } catch (err) {
        discardStream(ctx.stream as Readable | null);
        throw err;
      }
    },
  };
}
