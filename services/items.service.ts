/** Items: opaque ciphertext in one vault, with revisions (contract section 4). */
import type { Context, ServiceSchema } from "moleculer";
import { notFound } from "../lib/errors";
import { newId, timestamp } from "../lib/domain/encoding";
import { assertItemSizes, MAX_ENCRYPTED_DATA_BYTES, MAX_ENCRYPTED_NAME_BYTES } from "../lib/domain/items";
import { callerOf, created, noContent, type RequestMeta } from "../lib/http/context";
import { base64, optionalUuid, pathId, STRICT } from "../lib/http/params";
import type { Runtime } from "../lib/runtime";

type Ctx<P> = Context<P, RequestMeta>;

interface WriteParams {
  vaultId: string;
  encryptedData: string;
  encryptedName: string;
  keyVersion?: number;
}

const content = {
  encryptedData: base64(MAX_ENCRYPTED_DATA_BYTES),
  encryptedName: base64(MAX_ENCRYPTED_NAME_BYTES),
  keyVersion: { type: "number", integer: true, positive: true, optional: true },
} as const;

export function itemsService({ store, events }: Runtime): ServiceSchema {
  return {
    name: "items",
    actions: {
      list: {
        params: { vaultId: pathId },
        async handler(ctx: Ctx<{ vaultId: string }>) {
          const items = await store.listItems(ctx.params.vaultId, callerOf(ctx).userId);
          if (!items) throw notFound("Vault");
          return { items };
        },
      },

      get: {
        params: { vaultId: pathId, itemId: pathId },
        async handler(ctx: Ctx<{ vaultId: string; itemId: string }>) {
          return store.getItem(ctx.params.vaultId, callerOf(ctx).userId, ctx.params.itemId);
        },
      },

      create: {
        params: { ...STRICT, vaultId: pathId, itemId: optionalUuid, ...content },
        async handler(ctx: Ctx<WriteParams & { itemId?: string }>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          assertItemSizes(p);
          const item = await store.createItem(p.vaultId, caller.userId, p.itemId ?? newId(), p, timestamp());
          await events.emit("item.created", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId: item.itemId });
          created(ctx, `/vaults/${p.vaultId}/items/${item.itemId}`);
          return item;
        },
      },

      update: {
        params: { ...STRICT, vaultId: pathId, itemId: pathId, ...content, revision: { type: "number", integer: true, positive: true, optional: true } },
        async handler(ctx: Ctx<WriteParams & { itemId: string; revision?: number }>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          assertItemSizes(p);
          const item = await store.updateItem(p.vaultId, caller.userId, p.itemId, p, timestamp());
          await events.emit("item.updated", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId: p.itemId });
          return item;
        },
      },

      remove: {
        params: { vaultId: pathId, itemId: pathId },
        async handler(ctx: Ctx<{ vaultId: string; itemId: string }>) {
          const caller = callerOf(ctx);
          await store.deleteItem(ctx.params.vaultId, caller.userId, ctx.params.itemId);
          await events.emit("item.deleted", { actorId: caller.userId, orgId: caller.orgId, vaultId: ctx.params.vaultId, itemId: ctx.params.itemId });
          return noContent(ctx);
        },
      },
    },
  };
}
