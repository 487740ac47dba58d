/**
 * The atomic, checked rekey (interface; contract section 5).
 * Its body is streamed from the gateway (up to REKEY_BODY_LIMIT): a 10,000-item rekey is tens of
 * MB, beyond one NATS message. The body is read here, then checked in the gateway's order.
 */
import { withCheckedAuditClaim } from "../lib/audit-claims";
import type { VaultId } from "../lib/domain/ids";
import { Errors, type Context, type ServiceSchema } from "moleculer";
import type { Readable } from "node:stream";
import { AppError } from "../lib/errors";
import { assertItemSizes } from "../lib/domain/items";
import { FairSlots } from "../lib/limits/slots";
import { callerOf, noContent, type RequestMeta } from "../lib/http/context";
import { parseRosterLink, ROSTER_LINK_FIELD } from "../lib/domain/roster";
import { ITEM_LINK_FIELD, parseRequestItemLink } from "../lib/domain/item-log";
import { bodyFields, checkPathIds, discardStream, readJsonStream, rekeyBodyBounds } from "../lib/http/request-body";
import { paramsOf } from "../lib/http/routes";
import { SafeValidator } from "../lib/http/validator";
import type { RekeyInput } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";

type Check = (value: unknown) => true | unknown[];

/** Items checked between two turns of the event loop. */
const VALIDATION_BATCH = 2_000;

const validationError = (verdict: unknown[]) => new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", verdict);

export function rekeyService({ store, config, events, metrics, clock }: Runtime): ServiceSchema {
  // The body is checked in two parts, so that no check holds the event loop for long: its top level
  // (with the items left out), then its items a batch at a time, yielding between batches.
  // `items`, `history` and `trash` (each entry an item's ciphertexts) are checked a batch at a time.
  const {
    items: itemsRule,
    history: historyRule,
    trash: trashRule,
    ...topRules
  } = paramsOf("rekey.rekey") as Record<string, { items: object }>;
  const validator = new SafeValidator();
  const checkTop = validator.compile({ ...topRules }) as unknown as Check;
  const entryCheck = (rule: { items: object } | undefined) => validator.compile({ $$root: true, ...rule!.items }) as unknown as Check;
  const checks = { items: entryCheck(itemsRule), history: entryCheck(historyRule), trash: entryCheck(trashRule) };
  // Bodies read and held at once in this process (each up to REKEY_BODY_LIMIT, read before the
  // membership check as the contract orders): past REKEY_CONCURRENCY, or past the caller's
  // organization's or own share of it, 503 at once, so that no caller's large or stalled bodies
  // grow this process's memory without bound or starve another tenant's rekeys.
  const slots = new FairSlots(config.rekeyConcurrency);
  const bounds = rekeyBodyBounds(config);
  return {
    name: "rekey",
    actions: {
      rekey: {
        // The stream's own parameters; its body is checked against the route's, below.
        params: { vaultId: { type: "string" } },
        async handler(ctx: Context<{ vaultId: VaultId }, RequestMeta>) {
          try {
            const caller = callerOf(ctx);
            const slot = slots.take(caller.orgId, caller.userId);
            if ("refusal" in slot) {
              const whose = slot.refusal === "process-full" ? "" : slot.refusal === "user-share" ? " of yours" : " of your organization";
              throw new AppError("UNAVAILABLE", `Too many rekeys${whose} in progress`, { retryAfterSec: 1 });
            }
            try {
              return await rekey(ctx);
            } finally {
              slot.release();
            }
          } catch (err) {
            // Refused before or while reading: what is left of the body is drained, never held.
            discardStream(ctx.stream as Readable | null);
            throw err;
          }
        },
      },
    },
  };

  async function rekey(ctx: Context<{ vaultId: VaultId }, RequestMeta>) {
    const caller = callerOf(ctx);
    const started = performance.now();
    const stream = ctx.stream as Readable | null;
    // The body's deadline: a little before the caller's own, so that the client reads why.
    const raw = stream ? await readJsonStream(stream, bounds, Math.floor(config.requestTimeoutMs * 0.9)) : undefined;
    // Its depth was bounded as it was parsed.
    const fields = bodyFields(ctx.meta.jsonBody ? raw : undefined, { depthChecked: true });
    const vaultId = checkPathIds({ vaultId: ctx.params.vaultId }).vaultId! as VaultId;
    // Path parameters win over body fields of the same name (contract section 1).
    const { items: rawItems, history: rawHistory, trash: rawTrash, ...top } = fields;
    const verdict = checkTop({ ...top, vaultId });
    if (verdict !== true) throw validationError(verdict);
    const items = (await checkEntries("items", rawItems, false)) as RekeyInput["items"];
    const history = (await checkEntries("history", rawHistory, true)) as RekeyInput["history"];
    const trash = (await checkEntries("trash", rawTrash, true)) as RekeyInput["trash"];
    const { newKeys, keyVersion, accountVersion } = top as unknown as RekeyInput;
    const link = await withCheckedAuditClaim(
      store,
      caller.orgId,
      ROSTER_LINK_FIELD,
      parseRosterLink((fields as { rosterLink?: unknown }).rosterLink),
    );
    const itemLink = await withCheckedAuditClaim(
      store,
      caller.orgId,
      ITEM_LINK_FIELD,
      parseRequestItemLink((fields as { itemLink?: unknown }).itemLink),
    );
    await store.vaults.rekeyVault({
      vaultId,
      actorId: caller.userId,
      rekey: {
        newKeys,
        items,
        keyVersion,
        rosterLink: link,
        itemLink,
        ...(history && { history }),
        ...(trash && { trash }),
        ...(accountVersion !== undefined && { accountVersion }),
      },
      now: clock.timestamp(),
      limits: { maxBytes: config.vaultMaxBytes, maxItems: config.vaultMaxItems },
      events: [events.record("vault.rekeyed", { actorId: caller.userId, orgId: caller.orgId, vaultId })],
    });
    events.kick();
    metrics.rekey(items.length, performance.now() - started);
    return noContent(ctx);
  }

  /** One of the body's arrays of ciphertexts, checked a batch at a time (yielding between batches); undefined when optional and absent. */
  async function checkEntries(field: keyof typeof checks, raw: unknown, optional: boolean): Promise<unknown[] | undefined> {
    if (raw === undefined && optional) return undefined;
    if (!Array.isArray(raw)) throw validationError([{ type: "required", field, message: `The '${field}' field must be an array.` }]);
    for (let i = 0; i < raw.length; i += VALIDATION_BATCH) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const entry of raw.slice(i, i + VALIDATION_BATCH)) {
        const entryVerdict = checks[field](entry);
        if (entryVerdict !== true) throw validationError(entryVerdict);
        assertItemSizes(entry as RekeyInput["items"][number]);
      }
    }
    return raw;
  }
}
