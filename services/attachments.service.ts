/** Attachments: files on items, sealed on the client in chunks (lib/domain/attachments/decisions.ts). */
import type { ServiceSchema } from "moleculer";
import { newId, type AttachmentId, type ItemId, type VaultId } from "../lib/domain/ids";
import { planChunkTarget, type AttachmentLimits } from "../lib/domain/attachments/decisions";
import type { DomainEventType } from "../lib/domain/audit/events";
import { chunkTransfers } from "../lib/http/chunk-body";
import { ATTACHMENT_CHUNK_BYTES, CHUNK_OVERHEAD_BYTES } from "../protocol/formats/attachments";

/** A sealed chunk's largest size. */
const MAX_SEALED_CHUNK_BYTES = ATTACHMENT_CHUNK_BYTES + CHUNK_OVERHEAD_BYTES;
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type VaultParams = { vaultId: VaultId };
type ItemParams = VaultParams & { itemId: ItemId };
type AttachmentParams = VaultParams & { attachmentId: AttachmentId };
type BeginParams = ItemParams & { attachmentId?: AttachmentId; size: number };
type ChunkParams = AttachmentParams & { index: number };
type Transfers = ReturnType<typeof chunkTransfers<"vaultId" | "attachmentId">>;

export function attachmentsService(rt: Runtime): ServiceSchema {
  const transfers = chunkTransfers(rt.config, {
    action: "attachments.putChunk",
    ids: ["vaultId", "attachmentId"],
    maxSealed: MAX_SEALED_CHUNK_BYTES,
    what: "attachment chunks",
  });
  return {
    name: "attachments",
    actions: {
      begin: { params: paramsOf("attachments.begin"), handler: (ctx: Ctx<BeginParams>) => begin(rt, ctx) },
      list: { params: paramsOf("attachments.list"), handler: (ctx: Ctx<ItemParams>) => list(rt, ctx) },
      get: { params: paramsOf("attachments.get"), handler: (ctx: Ctx<AttachmentParams>) => get(rt, ctx) },
      // The stream's own parameters; its body is checked against the route's.
      putChunk: { params: { vaultId: { type: "string" } }, handler: (ctx: Ctx<Record<string, unknown>>) => putChunk(rt, transfers, ctx) },
      finish: { params: paramsOf("attachments.finish"), handler: (ctx: Ctx<AttachmentParams>) => finish(rt, ctx) },
      chunk: { params: paramsOf("attachments.chunk"), handler: (ctx: Ctx<ChunkParams>) => chunk(rt, transfers, ctx) },
      remove: { params: paramsOf("attachments.remove"), handler: (ctx: Ctx<AttachmentParams>) => remove(rt, ctx) },
    },
  };
}

const limitsOf = ({ config }: Runtime): AttachmentLimits => ({
  maxFileBytes: config.attachmentMaxBytes,
  perItem: config.attachmentsPerItem,
  orgQuotaBytes: config.attachmentOrgQuotaBytes,
});

async function begin(rt: Runtime, ctx: Ctx<BeginParams>) {
  const { vaultId, itemId, size } = ctx.params;
  const attachmentId = ctx.params.attachmentId ?? newId<AttachmentId>();
  const status = await rt.store.attachments.beginUpload({
    vaultId,
    actorId: callerOf(ctx).userId,
    itemId,
    attachmentId,
    size,
    limits: limitsOf(rt),
    now: rt.clock.timestamp(),
  });
  created(ctx, `/vaults/${vaultId}/attachments/${attachmentId}`);
  return status;
}

async function list({ store }: Runtime, ctx: Ctx<ItemParams>) {
  const { vaultId, itemId } = ctx.params;
  return { attachments: await store.attachments.listAttachments({ vaultId, itemId, actorId: callerOf(ctx).userId }) };
}

function get({ store }: Runtime, ctx: Ctx<AttachmentParams>) {
  const { vaultId, attachmentId } = ctx.params;
  return store.attachments.getAttachment({ vaultId, attachmentId, actorId: callerOf(ctx).userId });
}

async function putChunk({ store }: Runtime, transfers: Transfers, ctx: Ctx<Record<string, unknown>>) {
  const actorId = callerOf(ctx).userId;
  await transfers.put(
    ctx,
    // Its upload as its uploader sees it (another member's in progress is not found; the write refuses it too).
    async ({ vaultId, attachmentId, index }) => {
      const upload = await store.attachments.getAttachment({
        vaultId: vaultId as VaultId,
        attachmentId: attachmentId as AttachmentId,
        actorId,
      });
      planChunkTarget(upload, actorId, index);
    },
    ({ vaultId, attachmentId, index, data }) =>
      store.attachments.putChunk({ vaultId: vaultId as VaultId, attachmentId: attachmentId as AttachmentId, actorId, index, data }),
  );
  return noContent(ctx);
}

/** The audit record of a change to an attachment, on the item it belongs to (read first: the route names only the attachment). */
async function eventsFor(rt: Runtime, ctx: Ctx<AttachmentParams>, type: DomainEventType) {
  const caller = callerOf(ctx);
  const { vaultId, attachmentId } = ctx.params;
  const { itemId } = await rt.store.attachments.getAttachment({ vaultId, attachmentId, actorId: caller.userId });
  return [rt.events.record(type, { actorId: caller.userId, orgId: caller.orgId, vaultId, itemId })];
}

async function finish(rt: Runtime, ctx: Ctx<AttachmentParams>) {
  const { vaultId, attachmentId } = ctx.params;
  const events = await eventsFor(rt, ctx, "item.attachment_added");
  const record = await rt.store.attachments.finishUpload({
    vaultId,
    attachmentId,
    actorId: callerOf(ctx).userId,
    now: rt.clock.timestamp(),
    events,
  });
  rt.events.kick();
  return record;
}

function chunk({ store }: Runtime, transfers: Transfers, ctx: Ctx<ChunkParams>) {
  const { vaultId, attachmentId, index } = ctx.params;
  return transfers.read(
    ctx,
    async () => {
      const data = await store.attachments.readChunk({ vaultId, attachmentId, index, actorId: callerOf(ctx).userId });
      return { index, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64") };
    },
    (answer) => answer.data.length,
  );
}

async function remove(rt: Runtime, ctx: Ctx<AttachmentParams>) {
  const { vaultId, attachmentId } = ctx.params;
  const events = await eventsFor(rt, ctx, "item.attachment_removed");
  await rt.store.attachments.deleteAttachment({ vaultId, attachmentId, actorId: callerOf(ctx).userId, events });
  rt.events.kick();
  return noContent(ctx);
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(attachmentsService);
