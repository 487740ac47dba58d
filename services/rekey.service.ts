/**
 * The atomic, checked rekey (interface; contract section 5).
 * Its body is streamed from the gateway (up to REKEY_BODY_LIMIT): a 10,000-item rekey is tens of
 * MB, beyond one NATS message. The body is read here, then checked in the gateway's order.
 */
import type { VaultId } from "../lib/domain/ids";
import { Errors, type Context, type ServiceSchema } from "moleculer";
import type { Readable } from "node:stream";
import { AppError } from "../lib/errors";
import { assertItemSizes } from "../lib/domain/items";
import { callerOf, noContent, type RequestMeta } from "../lib/http/context";
import { parseRosterLink } from "../lib/domain/roster";
import { bodyFields, checkPathIds, readJsonStream } from "../lib/http/request-body";
import { paramsOf } from "../lib/http/routes";
import { SafeValidator } from "../lib/http/validator";
import type { RekeyInput } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";

type Check = (value: unknown) => true | unknown[];

export function rekeyService({ store, config, events, metrics, clock }: Runtime): ServiceSchema {
  const checkBody = new SafeValidator().compile({ ...paramsOf("rekey.rekey") }) as unknown as Check;
  // Bodies read and held at once in this process (each up to REKEY_BODY_LIMIT, read before the
  // membership check as the contract orders): past REKEY_CONCURRENCY, 503 at once, so that any
  // logged-in user's large bodies cannot grow this process's memory without bound.
  let held = 0;
  return {
    name: "rekey",
    actions: {
      rekey: {
        // The stream's own parameters; its body is checked against the route's, below.
        params: { vaultId: { type: "string" } },
        async handler(ctx: Context<{ vaultId: VaultId }, RequestMeta>) {
          if (held >= config.rekeyConcurrency) {
            throw new AppError("UNAVAILABLE", "Too many rekeys in progress", { retryAfterSec: 1 });
          }
          held++;
          try {
            return await rekey(ctx);
          } finally {
            held--;
          }
        },
      },
    },
  };

  async function rekey(ctx: Context<{ vaultId: VaultId }, RequestMeta>) {
    const caller = callerOf(ctx);
    const started = performance.now();
    const stream = ctx.stream as Readable | null;
    const raw = stream ? await readJsonStream(stream, config.rekeyBodyLimitBytes) : undefined;
    const fields = bodyFields(ctx.meta.jsonBody ? raw : undefined);
    const vaultId = checkPathIds({ vaultId: ctx.params.vaultId }).vaultId! as VaultId;
    // Path parameters win over body fields of the same name (contract section 1).
    const verdict = checkBody({ ...fields, vaultId });
    if (verdict !== true) throw new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", verdict);
    const { newKeys, items, keyVersion } = fields as unknown as RekeyInput;
    items.forEach(assertItemSizes);
    const link = parseRosterLink((fields as { rosterLink?: unknown }).rosterLink);
    await store.vaults.rekeyVault({
      vaultId,
      actorId: caller.userId,
      rekey: { newKeys, items, keyVersion, rosterLink: link },
      now: clock.timestamp(),
    });
    metrics.rekey(items.length, performance.now() - started);
    await events.emit("vault.rekeyed", { actorId: caller.userId, orgId: caller.orgId, vaultId });
    return noContent(ctx);
  }
}
