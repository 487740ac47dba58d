/** Items: opaque ciphertext in one vault, with revisions (contract section 4). */
import type { Context, ServiceSchema } from "moleculer";
import { notFound } from "../lib/errors";
import { newId } from "../lib/domain/encoding";
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

export function itemsService({ store, events, clock }: Runtime): ServiceSchema {
  return {
    name: "items",
    actions: {
      list: {
        params: { vaultId: pathId },
        async handler(ctx: Ctx<{ vaultId: string }>) {
          const items = await store.items.listItems({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId });
          if (!items) throw notFound("Vault");
          return { items };
        },
      },

      get: {
        params: { vaultId: pathId, itemId: pathId },
        async handler(ctx: Ctx<{ vaultId: string; itemId: string }>) {
          return store.items.getItem({ vaultId: ctx.params.vaultId, actorId: callerOf(ctx).userId, itemId: ctx.params.itemId });
        },
      },

      create: {
        params: { ...STRICT, vaultId: pathId, itemId: optionalUuid, ...content },
        async handler(ctx: Ctx<WriteParams & { itemId?: string }>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          assertItemSizes(p);
          const item = await store.items.createItem({
            vaultId: p.vaultId,
            actorId: caller.userId,
            itemId: p.itemId ?? newId(),
            write: p,
            now: clock.timestamp(),
          });
          await events.emit("item.created", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId: item.itemId });
          created(ctx, `/vaults/${p.vaultId}/items/${item.itemId}`);
          return item;
        },
      },

      update: {
        params: {
          ...STRICT,
          vaultId: pathId,
          itemId: pathId,
          ...content,
          revision: { type: "number", integer: true, positive: true, optional: true },
        },
        async handler(ctx: Ctx<WriteParams & { itemId: string; revision?: number }>) {
          const caller = callerOf(ctx);
          const p = ctx.params;
          assertItemSizes(p);
          const item = await store.items.updateItem({
            vaultId: p.vaultId,
            actorId: caller.userId,
            itemId: p.itemId,
            write: p,
            now: clock.timestamp(),
          });
          await events.emit("item.updated", { actorId: caller.userId, orgId: caller.orgId, vaultId: p.vaultId, itemId: p.itemId });
          return item;
        },
      },

      remove: {
        params: { vaultId: pathId, itemId: pathId },
        async handler(ctx: Ctx<{ vaultId: string; itemId: string }>) {
          const caller = callerOf(ctx);
          await store.items.deleteItem({ vaultId: ctx.params.vaultId, actorId: caller.userId, itemId: ctx.params.itemId });
          await events.emit("item.deleted", {
            actorId: caller.userId,
            orgId: caller.orgId,
            vaultId: ctx.params.vaultId,
            itemId: ctx.params.itemId,
          });
          return noContent(ctx);
        },
      },
    },
  };
}
