/** Vaults as the calling member sees them (interface: list/create; contract section 3: get/rename/delete). */
import { withCheckedAuditClaim } from "../lib/audit-claims";
import { requireUser } from "../lib/domain/accounts/users";
import { decideVaultName } from "../lib/domain/names";
import { newId, type VaultId } from "../lib/domain/ids";
import type { ServiceSchema } from "moleculer";
import { checkWrap } from "../lib/domain/accounts/keys";
import { parseRosterLink, ROSTER_LINK_FIELD, type RosterLink } from "../lib/domain/vaults/roster";
import { decideCreateRoster } from "../lib/domain/vaults/decisions";
import type { VaultType } from "../lib/domain/types";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

interface CreateParams {
  name: string;
  type: VaultType;
  encryptedVaultKey: string;
  wrapSignature: string;
  rosterLink?: unknown;
  accountVersion?: number;
}

type RenameParams = { vaultId: VaultId; name: string; rosterLink?: unknown };

export function vaultsService(rt: Runtime): ServiceSchema {
  return {
    name: "vaults",
    actions: {
      list: { handler: (ctx: Ctx) => list(rt, ctx) },
      create: { params: paramsOf("vaults.create"), handler: (ctx: Ctx<CreateParams>) => create(rt, ctx) },
      get: { params: paramsOf("vaults.get"), handler: (ctx: Ctx<{ vaultId: VaultId }>) => get(rt, ctx) },
      rename: { params: paramsOf("vaults.rename"), handler: (ctx: Ctx<RenameParams>) => rename(rt, ctx) },
      remove: { params: paramsOf("vaults.remove"), handler: (ctx: Ctx<{ vaultId: VaultId }>) => remove(rt, ctx) },
    },
  };
}

async function list({ store }: Runtime, ctx: Ctx) {
  return { vaults: await store.vaults.listVaults(callerOf(ctx).userId) };
}

async function create({ store, events, clock }: Runtime, ctx: Ctx<CreateParams>) {
  const caller = callerOf(ctx);
  const p = ctx.params;
  const link: RosterLink | undefined = await withCheckedAuditClaim(store, caller.orgId, ROSTER_LINK_FIELD, parseRosterLink(p.rosterLink));
  const user = requireUser(await store.accounts.findUserById(caller.userId));
  checkWrap({
    vaultType: p.type,
    encryptedVaultKey: p.encryptedVaultKey,
    wrapSignature: p.wrapSignature,
    holderPublicKey: user.publicKey,
    senderSigningPublicKey: user.signingPublicKey,
  });
  const displayName = decideVaultName(p.name);
  // A signed vault takes the id its creator signed into the `create` link.
  const roster = link && decideCreateRoster(user, { vaultType: p.type, name: displayName, encryptedVaultKey: p.encryptedVaultKey }, link);
  // The link's vaultId is a UUID (parseRosterLink checks it).
  const vaultId = (link?.vaultId as VaultId | undefined) ?? newId<VaultId>();
  const vault = await store.vaults.createVault({
    vault: {
      vaultId,
      orgId: user.orgId,
      name: displayName,
      type: p.type,
      ownerId: user.userId,
      encryptedVaultKey: p.encryptedVaultKey,
      wrapSignature: p.wrapSignature,
      roster,
      ...(p.accountVersion !== undefined && { accountVersion: p.accountVersion }),
    },
    now: clock.timestamp(),
    events: [events.record("vault.created", { actorId: caller.userId, orgId: user.orgId, vaultId })],
  });
  events.kick();
  created(ctx, `/vaults/${vault.vaultId}`);
  return vault;
}

async function get({ store }: Runtime, ctx: Ctx<{ vaultId: VaultId }>) {
  return store.vaults.getVault({ vaultId: ctx.params.vaultId, userId: callerOf(ctx).userId });
}

async function rename({ store, events, clock }: Runtime, ctx: Ctx<RenameParams>) {
  const caller = callerOf(ctx);
  const link = await withCheckedAuditClaim(store, caller.orgId, ROSTER_LINK_FIELD, parseRosterLink(ctx.params.rosterLink));
  const vault = await store.vaults.renameVault({
    vaultId: ctx.params.vaultId,
    actorId: caller.userId,
    name: decideVaultName(ctx.params.name),
    now: clock.timestamp(),
    rosterLink: link,
    // A vault's members are all of its organization, so the caller's is the vault's.
    events: [events.record("vault.renamed", { actorId: caller.userId, orgId: caller.orgId, vaultId: ctx.params.vaultId })],
  });
  events.kick();
  return vault;
}

async function remove({ store, events }: Runtime, ctx: Ctx<{ vaultId: VaultId }>) {
  const caller = callerOf(ctx);
  await store.vaults.deleteVault({
    vaultId: ctx.params.vaultId,
    actorId: caller.userId,
    events: [events.record("vault.deleted", { actorId: caller.userId, orgId: caller.orgId, vaultId: ctx.params.vaultId })],
  });
  events.kick();
  return noContent(ctx);
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(vaultsService);
