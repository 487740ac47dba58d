/**
 * Files on items, sealed on the client in chunks (lib/domain/attachments/decisions.ts; the format:
 * docs/protocol/attachments.md). An upload is begun on its item with the file's size, its chunks
 * are sent one request each (in any order, again after a break), and it is finished; then any
 * member of the vault reads it chunk by chunk.
 */
import { ATTACHMENT_CHUNK_BYTES, CHUNK_OVERHEAD_BYTES, MAX_ATTACHMENT_CHUNKS } from "../../../protocol/formats/attachments";
import * as p from "../params";
import { created, noContent, ok, type RouteDef } from "./route-def";

/** A chunk's index in a path: the gateway lets only digits through (lib/http/request-body.ts). */
const chunkIndex = {
  type: "number",
  integer: true,
  convert: true,
  min: 0,
  max: MAX_ATTACHMENT_CHUNKS - 1,
  openapi: { type: "integer", minimum: 0, maximum: MAX_ATTACHMENT_CHUNKS - 1 },
} as const;

export const ATTACHMENT_ROUTES = [
  {
    method: "POST",
    path: "/vaults/:vaultId/items/:itemId/attachments",
    action: "attachments.begin",
    summary:
      "Begin uploading a file to an item: its plaintext `size` (the chunks' sealed sizes follow from it); checked against the size, per-item and organization limits",
    params: {
      ...p.STRICT,
      vaultId: p.pathId,
      itemId: p.pathId,
      attachmentId: p.optionalUuid,
      size: { type: "number", integer: true, min: 0, max: Number.MAX_SAFE_INTEGER },
    },
    reply: created("AttachmentStatus"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/items/:itemId/attachments",
    action: "attachments.list",
    summary: "An item's attachments: the whole ones, and the caller's own uploads in progress",
    params: { vaultId: p.pathId, itemId: p.pathId },
    reply: ok("AttachmentList"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/attachments/:attachmentId",
    action: "attachments.get",
    summary: "An attachment, with the chunks stored so far (`received`): where a broken upload resumes",
    params: { vaultId: p.pathId, attachmentId: p.pathId },
    reply: ok("AttachmentStatus"),
  },
  {
    method: "PUT",
    path: "/vaults/:vaultId/attachments/:attachmentId/chunks/:index",
    action: "attachments.putChunk",
    streamBody: true,
    summary: "Store one sealed chunk of an upload in progress, `{ data }` (base64), in place of one sent before at that index",
    params: {
      ...p.STRICT,
      vaultId: p.pathId,
      attachmentId: p.pathId,
      index: chunkIndex,
      data: p.base64(ATTACHMENT_CHUNK_BYTES + CHUNK_OVERHEAD_BYTES),
    },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/attachments/:attachmentId/finish",
    action: "attachments.finish",
    summary: "Finish an upload once every chunk is stored: from then on every member of the vault may read it",
    params: { ...p.STRICT, vaultId: p.pathId, attachmentId: p.pathId },
    reply: ok("Attachment"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/attachments/:attachmentId/chunks/:index",
    action: "attachments.chunk",
    summary: "One sealed chunk of a whole file, base64",
    largeAnswer: true,
    params: { vaultId: p.pathId, attachmentId: p.pathId, index: chunkIndex },
    reply: ok("AttachmentChunk"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/attachments/:attachmentId",
    action: "attachments.remove",
    summary: "Delete an attachment and its chunks for good (an upload in progress: its uploader)",
    params: { vaultId: p.pathId, attachmentId: p.pathId },
    reply: noContent,
  },
] as const satisfies readonly RouteDef[];
