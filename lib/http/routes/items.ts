/** A vault's items, their history, trash and signed log. */
import { DEFAULT_ITEM_PAGE, MAX_ITEM_PAGE } from "../../domain/items/pages";
import { DEFAULT_ITEM_LOG_PAGE, MAX_ITEM_LOG_PAGE } from "../../domain/items/log";
import * as p from "../params";
import { ok, created, noContent, type RouteDef } from "./route-def";

const itemContent = { encryptedData: p.encryptedData, encryptedName: p.encryptedName, keyVersion: p.optionalPositiveInteger };

export const ITEM_ROUTES = [
  {
    method: "GET",
    path: "/vaults/:vaultId/items",
    action: "items.list",
    summary:
      "A vault's items: all of them; with `limit` or `after` a page and the cursor of the next; with `since` (a `cursor`, 0 at first) what changed since, the ids gone, and the next cursor (`full`: read the whole list)",
    params: {
      vaultId: p.pathId,
      limit: {
        ...p.seqNumber,
        max: MAX_ITEM_PAGE,
        optional: true,
        openapi: { type: "integer", minimum: 1, maximum: MAX_ITEM_PAGE, default: DEFAULT_ITEM_PAGE },
      },
      after: { type: "string", min: 1, max: 256, optional: true },
      since: {
        ...p.seqNumber,
        min: 0,
        max: Number.MAX_SAFE_INTEGER,
        optional: true,
        openapi: { type: "integer", minimum: 0, description: "a delta read: the `cursor` of an earlier answer, or 0" },
      },
    },
    reply: ok("ItemList"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/items",
    action: "items.create",
    summary: "Create an item",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.optionalUuid, ...itemContent, itemLink: p.itemLink },
    reply: created("Item"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/items/bulk",
    action: "items.import",
    streamBody: true,
    summary: "Add many items at once (an import): all or none, at most 5,000",
    params: {
      ...p.STRICT,
      vaultId: p.pathId,
      items: {
        type: "array",
        items: {
          type: "object",
          strict: "remove",
          props: { itemId: p.uuid, encryptedData: p.encryptedData, encryptedName: p.encryptedName },
        },
      },
      keyVersion: p.optionalPositiveInteger,
      itemLink: p.itemLink,
    },
    reply: created("Imported"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/exports",
    action: "items.exported",
    summary: "Record that a member exported the vault (the export itself is made on the client)",
    params: { ...p.STRICT, vaultId: p.pathId, format: { type: "enum", values: ["encrypted", "json", "csv"] } },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/items/:itemId",
    action: "items.get",
    summary: "An item",
    params: { vaultId: p.pathId, itemId: p.pathId },
    reply: ok("Item"),
  },
  {
    method: "PUT",
    path: "/vaults/:vaultId/items/:itemId",
    action: "items.update",
    summary: "Replace an item's ciphertext",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.pathId, ...itemContent, revision: p.optionalPositiveInteger, itemLink: p.itemLink },
    reply: ok("Item"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/items/:itemId",
    action: "items.remove",
    summary: "Delete an item (with a JSON body `{ itemLink }` on a vault that keeps a signed item log)",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.pathId, itemLink: p.itemLink },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/history",
    action: "items.history",
    summary: "The revisions a vault keeps of its items (of one, with `itemId`), newest first by item",
    params: { vaultId: p.pathId, itemId: { ...p.uuid, optional: true } },
    reply: ok("ItemHistory"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/trash",
    action: "items.trash",
    summary: "A vault's trash: deleted items, most recent first",
    params: { vaultId: p.pathId },
    reply: ok("Trash"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/trash/:itemId/restore",
    action: "items.restore",
    summary: "Bring an item back out of the trash (with `{ itemLink }` on a vault that keeps a signed item log)",
    params: { ...p.STRICT, vaultId: p.pathId, itemId: p.pathId, itemLink: p.itemLink },
    reply: ok("Item"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/trash/:itemId",
    action: "items.purge",
    summary: "Delete a trashed item and its history for good",
    params: { vaultId: p.pathId, itemId: p.pathId },
    reply: noContent,
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/item-log",
    action: "items.log",
    summary: "A vault's signed item log, from seq `from` (default: its last checkpoint or rekey link)",
    params: {
      vaultId: p.pathId,
      from: { ...p.seqNumber, min: 0, optional: true, openapi: { type: "integer", minimum: 0 } },
      limit: {
        ...p.seqNumber,
        max: MAX_ITEM_LOG_PAGE,
        optional: true,
        openapi: { type: "integer", minimum: 1, maximum: MAX_ITEM_LOG_PAGE, default: DEFAULT_ITEM_LOG_PAGE },
      },
    },
    reply: ok("ItemLog"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/item-log",
    action: "items.checkpoint",
    summary: "Append a checkpoint to a vault's signed item log (or start the log with one)",
    params: { ...p.STRICT, vaultId: p.pathId, itemLink: { ...p.itemLink, optional: false } },
    reply: noContent,
  },
] as const satisfies readonly RouteDef[];
