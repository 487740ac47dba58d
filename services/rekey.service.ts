/**
 * The atomic, checked rekey (interface; contract section 5).
 * Its body is streamed from the gateway (up to REKEY_BODY_LIMIT): a 10,000-item rekey is tens of
 * MB, beyond one NATS message. The body is read and checked in lib/http/streamed-body.ts.
 */
import { withCheckedAuditClaim } from "../lib/audit-claims";
import type { VaultId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { callerOf, noContent, type Ctx } from "../lib/http/context";
import { parseRosterLink, ROSTER_LINK_FIELD } from "../lib/domain/vaults/roster";
import { ITEM_LINK_FIELD, parseRequestItemLink } from "../lib/domain/items/log";
import { streamedBodies } from "../lib/http/streamed-body";
import type { RekeyInput } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

/** `items`, `history` and `trash` (each entry an item's ciphertexts) are checked a batch at a time. */
const bodiesOf = (config: Runtime["config"]) =>
  streamedBodies(config, "rekey.rekey", { required: ["items"], optional: ["history", "trash"] }, "rekeys");
type RekeyBody = Parameters<Parameters<ReturnType<typeof bodiesOf>["handle"]>[1]>[0];

export function rekeyService(rt: Runtime): ServiceSchema {
  const bodies = bodiesOf(rt.config);
  return {
    name: "rekey",
    actions: {
      rekey: {
        // The stream's own parameters; its body is checked against the route's.
        params: { vaultId: { type: "string" } },
        handler: (ctx: Ctx<{ vaultId: VaultId }>) => bodies.handle(ctx, (body) => rekey(rt, ctx, body)),
      },
    },
  };
}

async function rekey(
  { store, config, events, metrics, clock }: Runtime,
  ctx: Ctx<{ vaultId: VaultId }>,
  { vaultId, top, arrays }: RekeyBody,
) {
  const caller = callerOf(ctx);
  const started = performance.now();
  const items = arrays.items as RekeyInput["items"];
  const history = arrays.history as RekeyInput["history"];
  const trash = arrays.trash as RekeyInput["trash"];
  const { newKeys, keyVersion, accountVersion } = top as unknown as RekeyInput;
  const link = await withCheckedAuditClaim(store, caller.orgId, ROSTER_LINK_FIELD, parseRosterLink(top.rosterLink));
  const itemLink = await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(top.itemLink));
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

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(rekeyService);
