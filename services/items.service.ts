/** Items: opaque ciphertext in one vault, with revisions (contract section 4). */
import { decideDeltaRead } from "../lib/domain/items/changes";
import { withCheckedAuditClaim } from "../lib/audit-claims";
import { newId, type ItemId, type VaultId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { requireCheckpointLink } from "../lib/domain/items/checkpoints";
import { assertItemSizes, MAX_IMPORT_ITEMS } from "../lib/domain/items/decisions";
import { importTooLarge } from "../lib/domain/items/refusals";
import { decideItemPage, itemPage } from "../lib/domain/items/pages";
import { DEFAULT_ITEM_LOG_PAGE, ITEM_LINK_FIELD, parseRequestItemLink } from "../lib/domain/items/log";
import type { Caller } from "../lib/domain/types";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { streamedBodies } from "../lib/http/streamed-body";
import { runnerService } from "../app/node-runtime";

interface WriteParams {
  vaultId: VaultId;
  encryptedData: string;
  encryptedName: string;
  keyVersion?: number;
  itemLink?: unknown;
}

type VaultParams = { vaultId: VaultId };
type ItemParams = VaultParams & { itemId: ItemId };
type LinkedItemParams = ItemParams & { itemLink?: unknown };
type ListParams = VaultParams & { limit?: number; after?: string; since?: number };
type CreateParams = WriteParams & { itemId?: ItemId };
type UpdateParams = WriteParams & { itemId: ItemId; revision?: number };
type LogParams = VaultParams & { from?: number; limit?: number };
type Imports = ReturnType<typeof importsOf>;

/** An import's body is streamed, as a rekey's: up to 5,000 items in one request. */
const importsOf = (config: Runtime["config"]) =>
  streamedBodies(config, "items.import", { required: ["items"], optional: [] }, "imports", {
    max: MAX_IMPORT_ITEMS,
    refusal: () => importTooLarge(MAX_IMPORT_ITEMS),
  });

export function itemsService(rt: Runtime): ServiceSchema {
  const imports = importsOf(rt.config);
  return {
    name: "items",
    actions: {
      list: { params: paramsOf("items.list"), handler: (ctx: Ctx<ListParams>) => list(rt, ctx) },
      get: { params: paramsOf("items.get"), handler: (ctx: Ctx<ItemParams>) => get(rt, ctx) },
      create: { params: paramsOf("items.create"), handler: (ctx: Ctx<CreateParams>) => create(rt, ctx) },
      update: { params: paramsOf("items.update"), handler: (ctx: Ctx<UpdateParams>) => update(rt, ctx) },
      remove: { params: paramsOf("items.remove"), handler: (ctx: Ctx<LinkedItemParams>) => remove(rt, ctx) },
      history: { params: paramsOf("items.history"), handler: (ctx: Ctx<VaultParams & { itemId?: ItemId }>) => history(rt, ctx) },
      trash: { params: paramsOf("items.trash"), handler: (ctx: Ctx<VaultParams>) => trash(rt, ctx) },
      restore: { params: paramsOf("items.restore"), handler: (ctx: Ctx<LinkedItemParams>) => restore(rt, ctx) },
      purge: { params: paramsOf("items.purge"), handler: (ctx: Ctx<ItemParams>) => purge(rt, ctx) },
      // The stream's own parameters; its body is checked against the route's.
      import: { params: { vaultId: { type: "string" } }, handler: (ctx: Ctx<VaultParams>) => importItems(rt, imports, ctx) },
      exported: { params: paramsOf("items.exported"), handler: (ctx: Ctx<VaultParams & { format: string }>) => exported(rt, ctx) },
      log: { params: paramsOf("items.log"), handler: (ctx: Ctx<LogParams>) => log(rt, ctx) },
      checkpoint: { params: paramsOf("items.checkpoint"), handler: (ctx: Ctx<VaultParams & { itemLink: unknown }>) => checkpoint(rt, ctx) },
    },
  };
}

const limitsOf = ({ config }: Runtime) => ({ maxBytes: config.vaultMaxBytes, maxItems: config.vaultMaxItems });

/** The request's item link, parsed and checked against the caller's organization's audit log. */
const itemLinkOf = ({ store }: Runtime, caller: Caller, raw: unknown) =>
  withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(raw));

async function list({ store }: Runtime, ctx: Ctx<ListParams>) {
  const since = decideDeltaRead(ctx.params);
  if (since !== undefined) return store.items.listChanges({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, since });
  const page = decideItemPage(ctx.params);
  const rows = await store.items.listItems({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, page });
  return page ? itemPage(rows, page) : { items: rows };
}

async function get({ store }: Runtime, ctx: Ctx<ItemParams>) {
  return store.items.getItem({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, itemId: ctx.params.itemId });
}

async function create(rt: Runtime, ctx: Ctx<CreateParams>) {
  const { store, events, clock } = rt;
  const caller = callerOf(ctx);
  const p = ctx.params;
  assertItemSizes(p);
  const itemId = p.itemId ?? newId<ItemId>();
  const item = await store.items.createItem({
    vaultId: p.vaultId,
    actorId: caller.userId,
    itemId,
    write: p,
    limits: limitsOf(rt),
    now: clock.timestamp(),
    itemLink: await itemLinkOf(rt, caller, p.itemLink),
    events: [events.record("item.created", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId })],
  });
  events.kick();
  created(ctx, `/vaults/${p.vaultId}/items/${item.itemId}`);
  return item;
}

async function update(rt: Runtime, ctx: Ctx<UpdateParams>) {
  const { store, events, clock, config } = rt;
  const caller = callerOf(ctx);
  const p = ctx.params;
  assertItemSizes(p);
  const item = await store.items.updateItem({
    vaultId: p.vaultId,
    actorId: caller.userId,
    itemId: p.itemId,
    write: p,
    limits: limitsOf(rt),
    history: { keep: config.itemHistory },
    now: clock.timestamp(),
    itemLink: await itemLinkOf(rt, caller, p.itemLink),
    events: [events.record("item.updated", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId: p.itemId })],
  });
  events.kick();
  return item;
}

async function remove(rt: Runtime, ctx: Ctx<LinkedItemParams>) {
  const { store, events, clock } = rt;
  const caller = callerOf(ctx);
  const { vaultId, itemId } = ctx.params;
  await store.items.deleteItem({
    vaultId,
    actorId: caller.userId,
    itemId,
    itemLink: await itemLinkOf(rt, caller, ctx.params.itemLink),
    now: clock.timestamp(),
    events: [events.record("item.deleted", { actorId: caller.userId, orgId: caller.orgId, vaultId, itemId })],
  });
  events.kick();
  return noContent(ctx);
}

async function history({ store }: Runtime, ctx: Ctx<VaultParams & { itemId?: ItemId }>) {
  const { vaultId, itemId } = ctx.params;
  return { revisions: await store.items.listHistory({ vaultId, actorId: callerOf(ctx).userId, ...(itemId && { itemId }) }) };
}

async function trash({ store }: Runtime, ctx: Ctx<VaultParams>) {
  return { items: await store.items.listTrash({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId }) };
}

async function restore(rt: Runtime, ctx: Ctx<LinkedItemParams>) {
  const { store, events, clock } = rt;
  const caller = callerOf(ctx);
  const { vaultId, itemId } = ctx.params;
  const item = await store.items.restoreItem({
    vaultId,
    actorId: caller.userId,
    itemId,
    itemLink: await itemLinkOf(rt, caller, ctx.params.itemLink),
    now: clock.timestamp(),
    events: [events.record("item.restored", { actorId: caller.userId, orgId: caller.orgId, vaultId, itemId })],
  });
  events.kick();
  return item;
}

async function purge({ store, events }: Runtime, ctx: Ctx<ItemParams>) {
  const caller = callerOf(ctx);
  const { vaultId, itemId } = ctx.params;
  await store.items.purgeItem({
    vaultId,
    actorId: caller.userId,
    itemId,
    events: [events.record("item.purged", { actorId: caller.userId, orgId: caller.orgId, vaultId, itemId })],
  });
  events.kick();
  return noContent(ctx);
}

function importItems(rt: Runtime, imports: Imports, ctx: Ctx<VaultParams>) {
  const { store, events, clock } = rt;
  return imports.handle(ctx, async ({ vaultId, top, arrays }) => {
    const caller = callerOf(ctx);
    const items = arrays.items as Array<{ itemId: ItemId; encryptedData: string; encryptedName: string }>;
    const res = await store.items.importItems({
      vaultId,
      actorId: caller.userId,
      items,
      ...(top.keyVersion !== undefined && { keyVersion: top.keyVersion as number }),
      limits: limitsOf(rt),
      now: clock.timestamp(),
      itemLink: await itemLinkOf(rt, caller, top.itemLink),
      events: [events.record("vault.items_imported", { actorId: caller.userId, orgId: caller.orgId, vaultId })],
    });
    events.kick();
    created(ctx, `/vaults/${vaultId}/items`);
    return res;
  });
}

async function exported({ store, events }: Runtime, ctx: Ctx<VaultParams & { format: string }>) {
  const caller = callerOf(ctx);
  const { vaultId } = ctx.params;
  // Only a member exports (and so is recorded); the export itself is made on the client.
  await store.items.recordExport({
    vaultId,
    actorId: caller.userId,
    // An export in the clear is recorded as such: whoever reads the audit log can tell it from an encrypted one.
    events: [
      events.record(ctx.params.format === "encrypted" ? "vault.exported" : "vault.exported_plaintext", {
        actorId: caller.userId,
        orgId: caller.orgId,
        vaultId,
      }),
    ],
  });
  events.kick();
  return noContent(ctx);
}

async function log({ store }: Runtime, ctx: Ctx<LogParams>) {
  const { vaultId, from, limit } = ctx.params;
  return store.items.readItemLog({ vaultId, actorId: callerOf(ctx).userId, from, limit: limit ?? DEFAULT_ITEM_LOG_PAGE });
}

async function checkpoint(rt: Runtime, ctx: Ctx<VaultParams & { itemLink: unknown }>) {
  const caller = callerOf(ctx);
  const itemLink = requireCheckpointLink(await itemLinkOf(rt, caller, ctx.params.itemLink));
  await rt.store.items.appendCheckpoint({ vaultId: ctx.params.vaultId, actorId: caller.userId, itemLink, now: rt.clock.timestamp() });
  return noContent(ctx);
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(itemsService);
