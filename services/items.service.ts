/** Items: opaque ciphertext in one vault, with revisions (contract section 4). */
import { checkpointWithoutLink } from "../lib/domain/refusals";
import { decideDeltaRead } from "../lib/domain/item-changes";
import { withCheckedAuditClaim } from "../lib/audit-claims";
import { newId, type ItemId, type VaultId } from "../lib/domain/ids";
import type { Context, ServiceSchema } from "moleculer";
import { assertItemSizes, MAX_IMPORT_ITEMS } from "../lib/domain/items";
import { importTooLarge } from "../lib/domain/refusals";
import { decideItemPage, itemPage } from "../lib/domain/item-pages";
import { DEFAULT_ITEM_LOG_PAGE, ITEM_LINK_FIELD, parseRequestItemLink } from "../lib/domain/item-log";
import { callerOf, created, noContent, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { streamedBodies } from "../lib/http/streamed-body";
import { runnerService } from "../app/node-runtime";

type Ctx<P> = Context<P, RequestMeta>;

interface WriteParams {
  vaultId: VaultId;
  encryptedData: string;
  encryptedName: string;
  keyVersion?: number;
  itemLink?: unknown;
}

export function itemsService({ store, events, clock, config }: Runtime): ServiceSchema {
  const limits = { maxBytes: config.vaultMaxBytes, maxItems: config.vaultMaxItems };
  const history = { keep: config.itemHistory };
  // An import's body is streamed, as a rekey's: up to 5,000 items in one request.
  const imports = streamedBodies(config, "items.import", { required: ["items"], optional: [] }, "imports", {
    max: MAX_IMPORT_ITEMS,
    refusal: () => importTooLarge(MAX_IMPORT_ITEMS),
  });
  return {
    name: "items",
    actions: {
      list: {
        params: paramsOf("items.list"),
        async handler(ctx: Ctx<{ vaultId: VaultId; limit?: number; after?: string; since?: number }>) {
          const since = decideDeltaRead(ctx.params);
          if (since !== undefined) return store.items.listChanges({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, since });
          const page = decideItemPage(ctx.params);
          const rows = await store.items.listItems({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, page });
          return page ? itemPage(rows, page) : { items: rows };
        },
      },

      get: {
        params: paramsOf("items.get"),
        async handler(ctx: Ctx<{ vaultId: VaultId; itemId: ItemId }>) {
          return store.items.getItem({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, itemId: ctx.params.itemId });
        },
      },

      create: {
        params: paramsOf("items.create"),
        async handler(ctx: Ctx<WriteParams & { itemId?: ItemId }>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          assertItemSizes(p);
          const itemId = p.itemId ?? newId<ItemId>();
          const item = await store.items.createItem({
            vaultId: p.vaultId,
            actorId: caller.userId,
            itemId,
            write: p,
            limits,
            now: clock.timestamp(),
            itemLink: await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(p.itemLink)),
            events: [events.record("item.created", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId })],
          });
          events.kick();
          created(ctx, `/vaults/${p.vaultId}/items/${item.itemId}`);
          return item;
        },
      },

      update: {
        params: paramsOf("items.update"),
        async handler(ctx: Ctx<WriteParams & { itemId: ItemId; revision?: number }>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          assertItemSizes(p);
          const item = await store.items.updateItem({
            vaultId: p.vaultId,
            actorId: caller.userId,
            itemId: p.itemId,
            write: p,
            limits,
            history,
            now: clock.timestamp(),
            itemLink: await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(p.itemLink)),
            events: [events.record("item.updated", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId: p.itemId })],
          });
          events.kick();
          return item;
        },
      },

      remove: {
        params: paramsOf("items.remove"),
        async handler(ctx: Ctx<{ vaultId: VaultId; itemId: ItemId; itemLink?: unknown }>) {
          const caller = callerOf(ctx);
          const { vaultId, itemId } = ctx.params;
          await store.items.deleteItem({
            vaultId,
            actorId: caller.userId,
            itemId,
            itemLink: await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(ctx.params.itemLink)),
            now: clock.timestamp(),
            events: [events.record("item.deleted", { actorId: caller.userId, orgId: caller.orgId, vaultId, itemId })],
          });
          events.kick();
          return noContent(ctx);
        },
      },

      history: {
        params: paramsOf("items.history"),
        async handler(ctx: Ctx<{ vaultId: VaultId; itemId?: ItemId }>) {
          const { vaultId, itemId } = ctx.params;
          return { revisions: await store.items.listHistory({ vaultId, actorId: callerOf(ctx).userId, ...(itemId && { itemId }) }) };
        },
      },

      trash: {
        params: paramsOf("items.trash"),
        async handler(ctx: Ctx<{ vaultId: VaultId }>) {
          return { items: await store.items.listTrash({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId }) };
        },
      },

      restore: {
        params: paramsOf("items.restore"),
        async handler(ctx: Ctx<{ vaultId: VaultId; itemId: ItemId; itemLink?: unknown }>) {
          const caller = callerOf(ctx);
          const { vaultId, itemId } = ctx.params;
          const item = await store.items.restoreItem({
            vaultId,
            actorId: caller.userId,
            itemId,
            itemLink: await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(ctx.params.itemLink)),
            now: clock.timestamp(),
            events: [events.record("item.restored", { actorId: caller.userId, orgId: caller.orgId, vaultId, itemId })],
          });
          events.kick();
          return item;
        },
      },

      purge: {
        params: paramsOf("items.purge"),
        async handler(ctx: Ctx<{ vaultId: VaultId; itemId: ItemId }>) {
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
        },
      },

      import: {
        // The stream's own parameters; its body is checked against the route's.
        params: { vaultId: { type: "string" } },
        handler: (ctx: Ctx<{ vaultId: VaultId }>) =>
          imports.handle(ctx, async ({ vaultId, top, arrays }) => {
            const caller = callerOf(ctx);
            const items = arrays.items as Array<{ itemId: ItemId; encryptedData: string; encryptedName: string }>;
            const res = await store.items.importItems({
              vaultId,
              actorId: caller.userId,
              items,
              ...(top.keyVersion !== undefined && { keyVersion: top.keyVersion as number }),
              limits,
              now: clock.timestamp(),
              itemLink: await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(top.itemLink)),
              events: [events.record("vault.items_imported", { actorId: caller.userId, orgId: caller.orgId, vaultId })],
            });
            events.kick();
            created(ctx, `/vaults/${vaultId}/items`);
            return res;
          }),
      },

      exported: {
        params: paramsOf("items.exported"),
        async handler(ctx: Ctx<{ vaultId: VaultId; format: string }>) {
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
        },
      },

      log: {
        params: paramsOf("items.log"),
        async handler(ctx: Ctx<{ vaultId: VaultId; from?: number; limit?: number }>) {
          const { vaultId, from, limit } = ctx.params;
          return store.items.readItemLog({ vaultId, actorId: callerOf(ctx).userId, from, limit: limit ?? DEFAULT_ITEM_LOG_PAGE });
        },
      },

      checkpoint: {
        params: paramsOf("items.checkpoint"),
        async handler(ctx: Ctx<{ vaultId: VaultId; itemLink: unknown }>) {
          const caller = callerOf(ctx);
          const itemLink = await withCheckedAuditClaim(store, caller.orgId, ITEM_LINK_FIELD, parseRequestItemLink(ctx.params.itemLink));
          if (!itemLink) throw checkpointWithoutLink();
          await store.items.appendCheckpoint({
            vaultId: ctx.params.vaultId,
            actorId: caller.userId,
            itemLink,
            now: clock.timestamp(),
          });
          return noContent(ctx);
        },
      },
    },
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(itemsService);
