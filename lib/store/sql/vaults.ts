/** Vaults, members, the signed roster and the rekey on SQL (the port: ../port/vaults.ts; MongoDB: ../mongo/vaults.ts). */
import { appendRosterLink, lockAccount, personalVaultIds } from "./writes";
import { decidePersonalVaultCount, decideWrapVersion } from "../../domain/accounts/password-change";
import { decideWrapStillSigned } from "../../domain/accounts/key-rotation";
import { vaultNotFound } from "../../domain/items/refusals";
import type { OrgId, UserId, VaultId } from "../../domain/ids";
import { sql } from "./kysely";
import type { VaultRole, VaultType } from "../../domain/types";
import {
  decideAddMember,
  decideRemoveMember,
  decideRename,
  decideRoleChange,
  requireMember,
  requirePermission,
} from "../../domain/vaults/decisions";
import type { RosterLink } from "../../domain/vaults/roster";
import type { ArgsOf, MemberEntry, VaultStore, VaultView } from "../port";
import { appendItemLink, chunks, recordItemChanges, type Db, type SqlContext } from "./context";
import { planRekey, readsAccountVersion } from "../../domain/vaults/rekey-plan";
import { writeOutbox } from "./outbox";
import { param, prepared } from "./prepared";
import { rekeyHistoryAndTrash, storedBytesOf } from "./item-history";
import { txDroppingAttachments } from "./attachments";

const VAULT_VIEW_COLUMNS = [
  "v.vault_id",
  "v.name",
  "v.type",
  "v.org_id",
  "v.key_version",
  "v.rekey_required",
  "v.created_at",
  "v.updated_at",
  "m.encrypted_vault_key",
  "m.sender_id",
  "m.wrap_signature",
  "m.role",
] as const;

interface VaultViewRow {
  vault_id: VaultId;
  name: string;
  type: VaultType;
  org_id: OrgId;
  key_version: number;
  rekey_required: number;
  created_at: string;
  updated_at: string;
  encrypted_vault_key: string;
  sender_id: UserId;
  wrap_signature: string;
  role: VaultRole;
}

function toVaultView(r: VaultViewRow): VaultView {
  return {
    vaultId: r.vault_id,
    vaultName: r.name,
    vaultType: r.type,
    orgId: r.org_id,
    encryptedVaultKey: r.encrypted_vault_key,
    senderId: r.sender_id,
    wrapSignature: r.wrap_signature,
    role: r.role,
    keyVersion: Number(r.key_version),
    rekeyRequired: Number(r.rekey_required) === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toMemberEntry(r: VaultViewRow & { user_id: UserId }): MemberEntry {
  return {
    userId: r.user_id,
    vaultId: r.vault_id,
    vaultName: r.name,
    vaultType: r.type,
    encryptedVaultKey: r.encrypted_vault_key,
    senderId: r.sender_id,
    wrapSignature: r.wrap_signature,
    role: r.role,
  };
}

/** The caller's memberships, as every vault read checks them: one taken out of the organization has none. */
function vaultViews(db: Db) {
  return db
    .selectFrom("vault_members as m")
    .innerJoin("vaults as v", "v.vault_id", "m.vault_id")
    .innerJoin("users as u", "u.user_id", "m.user_id")
    .where("u.removed_at", "is", null)
    .select(VAULT_VIEW_COLUMNS);
}

async function vaultViewOrFail(db: Db, vaultId: VaultId, userId: UserId): Promise<VaultView> {
  const row = await vaultViews(db).where("m.vault_id", "=", vaultId).where("m.user_id", "=", userId).executeTakeFirst();
  if (!row) throw vaultNotFound();
  return toVaultView(row);
}

async function memberEntries(db: Db, vaultId: VaultId): Promise<MemberEntry[]> {
  const rows = await db
    .selectFrom("vault_members as m")
    .innerJoin("vaults as v", "v.vault_id", "m.vault_id")
    .select([...VAULT_VIEW_COLUMNS, "m.user_id"])
    .where("m.vault_id", "=", vaultId)
    .orderBy("m.created_at")
    .orderBy("m.user_id")
    .execute();
  return rows.map(toMemberEntry);
}

// Every authenticated vault request reads one of these two (prepared.ts: compiled once, PostgreSQL's named statements).
const VAULTS_OF_USER = prepared("vaults_of_user", (db) =>
  vaultViews(db).where("m.user_id", "=", param<UserId>("userId")).orderBy("v.created_at").orderBy("v.vault_id"),
);
const VAULT_OF_USER = prepared("vault_of_user", (db) =>
  vaultViews(db).where("m.vault_id", "=", param<VaultId>("vaultId")).where("m.user_id", "=", param<UserId>("userId")),
);

export class SqlVaults implements VaultStore {
  constructor(private readonly c: SqlContext) {}

  async listVaults(userId: UserId): Promise<VaultView[]> {
    return (await VAULTS_OF_USER.rows(this.c.db, this.c.engine, { userId })).map(toVaultView);
  }

  async getVault({ vaultId, userId }: ArgsOf<VaultStore["getVault"]>): Promise<VaultView> {
    const [row] = await VAULT_OF_USER.rows(this.c.db, this.c.engine, { vaultId, userId });
    if (!row) throw vaultNotFound();
    return toVaultView(row);
  }

  async createVault({ vault: v, now, events }: ArgsOf<VaultStore["createVault"]>): Promise<VaultView> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      await trx
        .insertInto("vaults")
        .values({
          vault_id: v.vaultId,
          org_id: v.orgId,
          name: v.name,
          type: v.type,
          key_version: 1,
          rekey_required: 0,
          created_at: now,
          updated_at: now,
          roster_seq: null,
          roster_hash: null,
          change_seq: 0,
          reset_seq: 0,
        })
        .execute();
      if (v.roster) await appendRosterLink(trx, v.vaultId, v.roster, now);
      // The owner's account, locked: a password change or key rotation and this vault come one after the other.
      const accountVersion = await lockAccount(trx, v.ownerId);
      const owner = await trx.selectFrom("users").select("signing_public_key").where("user_id", "=", v.ownerId).executeTakeFirst();
      decideWrapStillSigned(owner?.signing_public_key, v);
      if (v.type === "personal") {
        decideWrapVersion(accountVersion, v.accountVersion);
        decidePersonalVaultCount((await personalVaultIds(trx, v.ownerId)).length - 1);
      }
      await trx
        .insertInto("vault_members")
        .values({
          vault_id: v.vaultId,
          user_id: v.ownerId,
          role: "owner",
          encrypted_vault_key: v.encryptedVaultKey,
          sender_id: v.ownerId,
          wrap_signature: v.wrapSignature,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return vaultViewOrFail(trx, v.vaultId, v.ownerId);
    });
  }

  async renameVault({ vaultId, actorId, name, now, rosterLink, events }: ArgsOf<VaultStore["renameVault"]>): Promise<VaultView> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const roster = decideRename(await this.c.snapshot(trx, vaultId), actorId, name, rosterLink);
      await trx.updateTable("vaults").set({ name, updated_at: now }).where("vault_id", "=", vaultId).execute();
      if (roster) await appendRosterLink(trx, vaultId, roster, now);
      return vaultViewOrFail(trx, vaultId, actorId);
    });
  }

  async deleteVault({ vaultId, actorId, events }: ArgsOf<VaultStore["deleteVault"]>): Promise<void> {
    await txDroppingAttachments(this.c, async (trx, dropAttachments) => {
      await writeOutbox(trx, events);
      requirePermission(await this.c.snapshot(trx, vaultId), actorId, "delete");
      await trx.deleteFrom("items").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("item_revisions").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("item_trash").where("vault_id", "=", vaultId).execute();
      await dropAttachments(vaultId);
      await trx.deleteFrom("roster_links").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("item_links").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("vault_members").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("vaults").where("vault_id", "=", vaultId).execute();
    });
  }

  async listMembers({ vaultId, actorId }: ArgsOf<VaultStore["listMembers"]>): Promise<MemberEntry[]> {
    const entries = await memberEntries(this.c.db, vaultId);
    if (!entries.some((e) => e.userId === actorId)) throw vaultNotFound();
    return entries;
  }

  async addMember({ vaultId, actorId, member, now, events }: ArgsOf<VaultStore["addMember"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const snap = await this.c.snapshot(trx, vaultId);
      requireMember(snap, actorId);
      // The recipient's account, locked before their keys are read: a key rotation of theirs and this share come one after the other.
      await lockAccount(trx, member.userId);
      const recipient = await trx
        .selectFrom("users")
        .select(["user_id", "org_id", "public_key", "signing_public_key"])
        .where("user_id", "=", member.userId)
        .where("removed_at", "is", null) // taken out of the organization: no vault is shared with them
        .executeTakeFirst();
      const roster = decideAddMember(
        snap,
        actorId,
        recipient
          ? {
              userId: recipient.user_id,
              orgId: recipient.org_id,
              publicKey: recipient.public_key,
              signingPublicKey: recipient.signing_public_key,
            }
          : null,
        member,
      );
      await trx
        .insertInto("vault_members")
        .values({
          vault_id: vaultId,
          user_id: member.userId,
          role: member.role,
          encrypted_vault_key: member.encryptedVaultKey,
          sender_id: actorId,
          wrap_signature: member.wrapSignature,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await trx.updateTable("vaults").set({ updated_at: now }).where("vault_id", "=", vaultId).execute();
      if (roster) await appendRosterLink(trx, vaultId, roster, now);
    });
  }

  async changeMemberRole({
    vaultId,
    actorId,
    targetId,
    role,
    now,
    rosterLink,
    events,
  }: ArgsOf<VaultStore["changeMemberRole"]>): Promise<MemberEntry> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const roster = decideRoleChange(await this.c.snapshot(trx, vaultId), actorId, targetId, role, rosterLink);
      await trx
        .updateTable("vault_members")
        .set({ role, updated_at: now })
        .where("vault_id", "=", vaultId)
        .where("user_id", "=", targetId)
        .execute();
      if (roster) await appendRosterLink(trx, vaultId, roster, now);
      return (await memberEntries(trx, vaultId)).find((e) => e.userId === targetId)!;
    });
  }

  async removeMember({ vaultId, actorId, targetId, now, rosterLink, events }: ArgsOf<VaultStore["removeMember"]>) {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const { rekeyRequired, roster } = decideRemoveMember(await this.c.snapshot(trx, vaultId), actorId, targetId, rosterLink);
      if (roster) await appendRosterLink(trx, vaultId, roster, now);
      await trx.deleteFrom("vault_members").where("vault_id", "=", vaultId).where("user_id", "=", targetId).execute();
      await trx
        .updateTable("vaults")
        .set(rekeyRequired ? { rekey_required: 1, updated_at: now } : { updated_at: now })
        .where("vault_id", "=", vaultId)
        .execute();
      return { rekeyRequired, remainingMembers: await memberEntries(trx, vaultId) };
    });
  }

  async getRoster({ vaultId, actorId }: ArgsOf<VaultStore["getRoster"]>): Promise<RosterLink[]> {
    return this.c.tx(async (trx) => {
      const member = await vaultViews(trx).where("m.vault_id", "=", vaultId).where("m.user_id", "=", actorId).executeTakeFirst();
      if (!member) throw vaultNotFound();
      const rows = await trx.selectFrom("roster_links").select("link").where("vault_id", "=", vaultId).orderBy("seq").execute();
      return rows.map((r) => JSON.parse(r.link) as RosterLink);
    });
  }

  async rekeyVault({ vaultId, actorId, rekey, now, limits, events }: ArgsOf<VaultStore["rekeyVault"]>): Promise<void> {
    // The trash entries a rekey drops take their items' attachments with them.
    await txDroppingAttachments(this.c, async (trx, dropAttachments) => {
      await writeOutbox(trx, events);
      const snapshot = await this.c.snapshot(trx, vaultId);
      const current = await trx.selectFrom("items").select(["item_id", "revision"]).where("vault_id", "=", vaultId).execute();
      const plan = planRekey(
        {
          snapshot,
          actorId,
          revisions: new Map(current.map((r) => [r.item_id, Number(r.revision)])),
          ...(limits && { size: { limits, storedBytes: await storedBytesOf(trx, vaultId) } }),
          ...(readsAccountVersion(snapshot) && { accountVersion: await lockAccount(trx, actorId) }),
        },
        rekey,
      );
      const { keyVersion } = plan;
      if (plan.roster) await appendRosterLink(trx, vaultId, plan.roster, now);
      if (plan.itemStep) await appendItemLink(trx, vaultId, plan.itemStep, now);

      // Batched: one statement per chunk of rows, not one per row.
      for (const chunk of chunks(rekey.newKeys, this.c.engine.batchRows)) {
        const values = sql.join(chunk.map((k) => sql`(${k.userId}, ${k.encryptedVaultKey}, ${k.wrapSignature})`));
        const res = await sql`UPDATE vault_members SET encrypted_vault_key = v.column2, wrap_signature = v.column3,
            sender_id = ${actorId}, updated_at = ${now}
          FROM (VALUES ${values}) AS v WHERE vault_members.vault_id = ${vaultId} AND vault_members.user_id = v.column1`.execute(trx);
        if (Number(res.numAffectedRows) !== chunk.length) throw new Error("rekey: member rows changed under the lock");
      }
      await this.c.engine.rekeyItems(trx, vaultId, rekey.items, keyVersion, now);
      await rekeyHistoryAndTrash(trx, vaultId, rekey, keyVersion, this.c.engine.batchRows);
      await dropAttachments(vaultId);
      // Every item was rewritten: a delta read from before this is a full read.
      await recordItemChanges(this.c.engine, trx, vaultId, "reset");
      await trx
        .updateTable("vaults")
        .set({ key_version: keyVersion, rekey_required: 0, updated_at: now })
        .where("vault_id", "=", vaultId)
        .execute();
    });
  }
}
