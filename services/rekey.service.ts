/** The atomic, checked rekey (interface; contract section 5). */
import type { Context, ServiceSchema } from "moleculer";
import { timestamp } from "../lib/domain/encoding";
import { assertItemSizes, MAX_ENCRYPTED_DATA_BYTES, MAX_ENCRYPTED_NAME_BYTES } from "../lib/domain/items";
import { emitDomainEvent } from "../lib/events";
import { callerOf, noContent, type RequestMeta } from "../lib/http/context";
import { base64, pathId, signature, STRICT, uuid, wrappedKey } from "../lib/http/params";
import type { RekeyInput } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";

export function rekeyService({ store }: Runtime): ServiceSchema {
  return {
    name: "rekey",
    actions: {
      rekey: {
        params: {
          ...STRICT,
          vaultId: pathId,
          newKeys: {
            type: "array",
            min: 1,
            items: { type: "object", strict: "remove", props: { userId: uuid, encryptedVaultKey: wrappedKey, wrapSignature: signature } },
          },
          items: {
            type: "array",
            items: {
              type: "object",
              strict: "remove",
              props: { itemId: uuid, encryptedData: base64(MAX_ENCRYPTED_DATA_BYTES), encryptedName: base64(MAX_ENCRYPTED_NAME_BYTES) },
            },
          },
          keyVersion: { type: "number", integer: true, positive: true, optional: true },
        },
        async handler(ctx: Context<RekeyInput & { vaultId: string }, RequestMeta>) {
          const caller = callerOf(ctx);
          const { vaultId, newKeys, items, keyVersion } = ctx.params;
          items.forEach(assertItemSizes);
          await store.rekeyVault(vaultId, caller.userId, { newKeys, items, keyVersion }, timestamp());
          emitDomainEvent(ctx, "vault.rekeyed", { actorId: caller.userId, orgId: caller.orgId, vaultId });
          return noContent(ctx);
        },
      },
    },
  };
}
