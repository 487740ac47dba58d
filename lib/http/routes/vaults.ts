/** Vaults, their members and the rekey. */
import * as p from "../params";
import { ok, created, noContent, type RouteDef } from "./route-def";

const rekeyBody = {
  newKeys: {
    type: "array",
    min: 1,
    items: { type: "object", strict: "remove", props: { userId: p.uuid, encryptedVaultKey: p.wrappedKey, wrapSignature: p.signature } },
  },
  items: {
    type: "array",
    items: {
      type: "object",
      strict: "remove",
      props: {
        itemId: p.uuid,
        encryptedData: p.encryptedData,
        encryptedName: p.encryptedName,
        revision: p.optionalPositiveInteger,
      },
    },
  },
  keyVersion: p.optionalPositiveInteger,
  rosterLink: p.rosterLink,
  itemLink: p.itemLink,
  accountVersion: p.optionalPositiveInteger,
  // Kept revisions and trashed items re-encrypted (lib/domain/items/history.ts); what is left out is dropped.
  history: {
    type: "array",
    optional: true,
    items: {
      type: "object",
      strict: "remove",
      props: { itemId: p.uuid, revision: p.positiveInteger, encryptedData: p.encryptedData, encryptedName: p.encryptedName },
    },
  },
  trash: {
    type: "array",
    optional: true,
    items: { type: "object", strict: "remove", props: { itemId: p.uuid, encryptedData: p.encryptedData, encryptedName: p.encryptedName } },
  },
};

export const VAULT_ROUTES = [
  { method: "GET", path: "/vaults", action: "vaults.list", summary: "The caller's vaults", reply: ok("VaultList") },
  {
    method: "POST",
    path: "/vaults",
    action: "vaults.create",
    summary: "Create a vault",
    params: {
      ...p.STRICT,
      name: p.name,
      type: p.vaultType,
      encryptedVaultKey: p.wrappedKey,
      wrapSignature: p.signature,
      rosterLink: p.rosterLink,
      accountVersion: p.optionalPositiveInteger,
    },
    reply: created("Vault"),
  },
  { method: "GET", path: "/vaults/:vaultId", action: "vaults.get", summary: "A vault", params: { vaultId: p.pathId }, reply: ok("Vault") },
  {
    method: "PATCH",
    path: "/vaults/:vaultId",
    action: "vaults.rename",
    summary: "Rename a vault",
    params: { ...p.STRICT, vaultId: p.pathId, name: p.name, rosterLink: p.rosterLink },
    reply: ok("Vault"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId",
    action: "vaults.remove",
    summary: "Delete a vault with its items",
    params: { vaultId: p.pathId },
    reply: noContent,
  },

  {
    method: "GET",
    path: "/vaults/:vaultId/members",
    action: "members.list",
    summary: "A vault's members",
    params: { vaultId: p.pathId },
    reply: ok("MemberList"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/members",
    action: "members.add",
    summary: "Share a vault (add a member)",
    params: {
      ...p.STRICT,
      vaultId: p.pathId,
      recipientUserId: p.uuid,
      encryptedVaultKey: p.wrappedKey,
      wrapSignature: p.signature,
      role: p.grantableRole,
      keyVersion: p.optionalPositiveInteger,
      rosterLink: p.rosterLink,
    },
    reply: noContent,
  },
  {
    method: "PATCH",
    path: "/vaults/:vaultId/members/:userId",
    action: "members.changeRole",
    summary: "Change a member's role",
    params: { ...p.STRICT, vaultId: p.pathId, userId: p.pathId, role: p.vaultRole, rosterLink: p.rosterLink },
    reply: ok("MemberEntry"),
  },
  {
    method: "DELETE",
    path: "/vaults/:vaultId/members/:userId",
    action: "members.remove",
    // The interface's DELETE has no body; a signed vault's `remove` link comes in an optional JSON body.
    summary: "Remove a member (or leave)",
    params: { ...p.STRICT, vaultId: p.pathId, userId: p.pathId, rosterLink: p.rosterLink },
    reply: ok("MemberRemoved"),
  },
  {
    method: "GET",
    path: "/vaults/:vaultId/roster",
    action: "members.roster",
    summary: "A vault's signed roster",
    params: { vaultId: p.pathId },
    reply: ok("Roster"),
  },
  {
    method: "POST",
    path: "/vaults/:vaultId/rekey",
    action: "rekey.rekey",
    streamBody: true,
    summary: "Rekey a vault atomically",
    params: { ...p.STRICT, vaultId: p.pathId, ...rekeyBody },
    reply: noContent,
  },
] as const satisfies readonly RouteDef[];
