/** Vaults, members, the signed roster and the rekey on MongoDB (the port: ../port/vaults.ts; SQL: ../sql/vaults.ts). */
import { decideWrapStillSigned } from "../../domain/accounts/key-rotation";
import { vaultNotFound } from "../../domain/items/refusals";
import type { UserId, VaultId } from "../../domain/ids";
import type { ClientSession } from "mongodb";
import {
  decideAddMember,
  decideRemoveMember,
  decideRoleChange,
  requireMember,
  requirePermission,
  decideRename,
} from "../../domain/vaults/decisions";
import type { RosterEntry, RosterLink } from "../../domain/vaults/roster";
import { planRekey, readsAccountVersion } from "../../domain/vaults/rekey-plan";
import type { ArgsOf, MemberEntry, VaultStore, VaultView } from "../port";
import type { MongoContext } from "./context";
import { byCreatedThenId, itemKey, toMemberEntry, toVaultView } from "./documents";
import { appendRosterLink, lockAccount, personalVaultIds } from "./writes";
import { decidePersonalVaultCount, decideWrapVersion } from "../../domain/accounts/password-change";
import { writeOutbox } from "./outbox";
import { rekeyHistoryAndTrash, storedBytesOf } from "./item-history";
import { txDroppingAttachments } from "./attachments";

export class MongoVaults implements VaultStore {
  constructor(private readonly c: MongoContext) {}

  async listVaults(userId: UserId): Promise<VaultView[]> {
    return this.c.consistentRead(async (session) => {
      if (await this.c.isRemoved(session, userId)) return [];
      const memberships = await this.c.members.find({ userId }, { session }).toArray();
      const vaults = await this.c.vaults.find({ _id: { $in: memberships.map((m) => m.vaultId) } }, { session }).toArray();
      const byId = new Map(vaults.map((v) => [v._id, v]));
      return memberships
        .filter((m) => byId.has(m.vaultId))
        .map((m) => toVaultView(byId.get(m.vaultId)!, m))
        .sort(
          byCreatedThenId(
            (v) => v.createdAt,
            (v) => v.vaultId,
          ),
        );
    });
  }

  async getVault({ vaultId, userId }: ArgsOf<VaultStore["getVault"]>): Promise<VaultView> {
    return this.c.consistentRead((session) => this.vaultViewOrFail(session, vaultId, userId));
  }

  private async vaultViewOrFail(session: ClientSession, vaultId: VaultId, userId: UserId): Promise<VaultView> {
    const view = await this.c.vaultView(session, vaultId, userId);
    if (!view) throw vaultNotFound();
    return view;
  }

  async createVault({ vault: v, now, events }: ArgsOf<VaultStore["createVault"]>): Promise<VaultView> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.vaults.insertOne(
        {
          _id: v.vaultId,
          orgId: v.orgId,
          name: v.name,
          type: v.type,
          keyVersion: 1,
          rekeyRequired: false,
          createdAt: now,
          updatedAt: now,
          writeSeq: 0,
          changeSeq: 0,
          resetSeq: 0,
        },
        { session },
      );
      await this.c.members.insertOne(
        {
          vaultId: v.vaultId,
          userId: v.ownerId,
          role: "owner",
          encryptedVaultKey: v.encryptedVaultKey,
          senderId: v.ownerId,
          wrapSignature: v.wrapSignature,
          createdAt: now,
          updatedAt: now,
        },
        { session },
      );
      if (v.roster) await this.appendRosterLink(session, v.vaultId, v.roster, now);
      // The owner's account, locked: a password change or key rotation and this vault come one after the other.
      const accountVersion = await lockAccount(this.c, session, v.ownerId);
      const owner = await this.c.users.findOne({ _id: v.ownerId }, { session, projection: { signingPublicKey: 1 } });
      decideWrapStillSigned(owner?.signingPublicKey, v);
      if (v.type === "personal") {
        decideWrapVersion(accountVersion, v.accountVersion);
        decidePersonalVaultCount((await personalVaultIds(this.c, session, v.ownerId)).length - 1);
      }
      return this.vaultViewOrFail(session, v.vaultId, v.ownerId);
    });
  }

  async renameVault({ vaultId, actorId, name, now, rosterLink, events }: ArgsOf<VaultStore["renameVault"]>): Promise<VaultView> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const roster = decideRename(await this.c.snapshot(session, vaultId), actorId, name, rosterLink);
      await this.c.vaults.updateOne({ _id: vaultId }, { $set: { name, updatedAt: now } }, { session });
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
      return this.vaultViewOrFail(session, vaultId, actorId);
    });
  }

  async deleteVault({ vaultId, actorId, events }: ArgsOf<VaultStore["deleteVault"]>): Promise<void> {
    await txDroppingAttachments(this.c, async (session, dropAttachments) => {
      await writeOutbox(this.c, session, events);
      requirePermission(await this.c.snapshot(session, vaultId), actorId, "delete");
      await this.c.items.deleteMany({ vaultId }, { session });
      await this.c.itemRevisions.deleteMany({ vaultId }, { session });
      await this.c.itemTrash.deleteMany({ vaultId }, { session });
      await dropAttachments(vaultId);
      await this.c.itemChanges.deleteMany({ vaultId }, { session });
      await this.c.rosterLinks.deleteMany({ vaultId }, { session });
      await this.c.itemLinks.deleteMany({ vaultId }, { session });
      await this.c.members.deleteMany({ vaultId }, { session });
      await this.c.vaults.deleteOne({ _id: vaultId }, { session });
    });
  }

  private async memberEntries(vaultId: VaultId, session: ClientSession): Promise<MemberEntry[]> {
    const vault = await this.c.vaults.findOne({ _id: vaultId }, { session });
    if (!vault) return [];
    const members = await this.c.members.find({ vaultId }, { session }).sort({ createdAt: 1, userId: 1 }).toArray();
    return members.map((m) => toMemberEntry(vault, m));
  }

  async listMembers({ vaultId, actorId }: ArgsOf<VaultStore["listMembers"]>): Promise<MemberEntry[]> {
    const [entries, removed] = await this.c.consistentRead(
      async (session) => [await this.memberEntries(vaultId, session), await this.c.isRemoved(session, actorId)] as const,
    );
    if (removed || !entries.some((e) => e.userId === actorId)) throw vaultNotFound();
    return entries;
  }

  async addMember({ vaultId, actorId, member, now, events }: ArgsOf<VaultStore["addMember"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const snap = await this.c.snapshot(session, vaultId);
      requireMember(snap, actorId);
      // The recipient's account, locked (written) before their keys are read: a key rotation of theirs and this share conflict.
      await lockAccount(this.c, session, member.userId);
      const recipient = await this.c.users.findOne(
        { _id: member.userId, removedAt: { $exists: false } },
        { session, projection: { orgId: 1, publicKey: 1, signingPublicKey: 1 } },
      );
      const roster = decideAddMember(
        snap,
        actorId,
        recipient
          ? { userId: recipient._id, orgId: recipient.orgId, publicKey: recipient.publicKey, signingPublicKey: recipient.signingPublicKey }
          : null,
        member,
      );
      await this.c.members.insertOne(
        {
          vaultId,
          userId: member.userId,
          role: member.role,
          encryptedVaultKey: member.encryptedVaultKey,
          senderId: actorId,
          wrapSignature: member.wrapSignature,
          createdAt: now,
          updatedAt: now,
        },
        { session },
      );
      await this.c.vaults.updateOne({ _id: vaultId }, { $set: { updatedAt: now } }, { session });
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
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
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const roster = decideRoleChange(await this.c.snapshot(session, vaultId), actorId, targetId, role, rosterLink);
      await this.c.members.updateOne({ vaultId, userId: targetId }, { $set: { role, updatedAt: now } }, { session });
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
      return (await this.memberEntries(vaultId, session)).find((e) => e.userId === targetId)!;
    });
  }

  async removeMember({ vaultId, actorId, targetId, now, rosterLink, events }: ArgsOf<VaultStore["removeMember"]>) {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const { rekeyRequired, roster } = decideRemoveMember(await this.c.snapshot(session, vaultId), actorId, targetId, rosterLink);
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
      await this.c.members.deleteOne({ vaultId, userId: targetId }, { session });
      await this.c.vaults.updateOne(
        { _id: vaultId },
        { $set: rekeyRequired ? { rekeyRequired: true, updatedAt: now } : { updatedAt: now } },
        { session },
      );
      return { rekeyRequired, remainingMembers: await this.memberEntries(vaultId, session) };
    });
  }

  async rekeyVault({ vaultId, actorId, rekey: input, now, limits, events }: ArgsOf<VaultStore["rekeyVault"]>): Promise<void> {
    // The trash entries a rekey drops take their items' attachments with them.
    await txDroppingAttachments(this.c, async (session, dropAttachments) => {
      await writeOutbox(this.c, session, events);
      const snapshot = await this.c.snapshot(session, vaultId);
      const current = await this.c.items.find({ vaultId }, { session, projection: { itemId: 1, revision: 1 } }).toArray();
      const plan = planRekey(
        {
          snapshot,
          actorId,
          revisions: new Map(current.map((i) => [i.itemId, i.revision])),
          ...(limits && { size: { limits, storedBytes: await storedBytesOf(this.c, session, vaultId) } }),
          ...(readsAccountVersion(snapshot) && { accountVersion: await lockAccount(this.c, session, actorId) }),
        },
        input,
      );
      const { keyVersion } = plan;
      if (plan.roster) await this.appendRosterLink(session, vaultId, plan.roster, now);
      if (plan.itemStep) await this.c.appendItemLink(session, vaultId, plan.itemStep, now);

      // One bulk write per collection; the driver splits it into batches the server accepts.
      const wraps = await this.c.members.bulkWrite(
        input.newKeys.map((k) => ({
          updateOne: {
            filter: { vaultId, userId: k.userId },
            update: { $set: { encryptedVaultKey: k.encryptedVaultKey, wrapSignature: k.wrapSignature, senderId: actorId, updatedAt: now } },
          },
        })),
        { session, ordered: true },
      );
      if (wraps.matchedCount !== input.newKeys.length) throw new Error("rekey: member documents changed inside the transaction");
      if (input.items.length > 0) {
        const items = await this.c.items.bulkWrite(
          input.items.map((i) => ({
            updateOne: {
              filter: { _id: itemKey(vaultId, i.itemId) },
              update: {
                $set: { encryptedData: i.encryptedData, encryptedName: i.encryptedName, keyVersion, updatedAt: now },
                $inc: { revision: 1 },
              },
            },
          })),
          { session, ordered: true },
        );
        if (items.matchedCount !== input.items.length) throw new Error("rekey: item documents changed inside the transaction");
      }
      await rekeyHistoryAndTrash(this.c, session, vaultId, input, keyVersion);
      await dropAttachments(vaultId);
      // Every item was rewritten: a delta read from before this is a full read.
      await this.c.recordItemChanges(session, vaultId, "reset");
      await this.c.vaults.updateOne({ _id: vaultId }, { $set: { keyVersion, rekeyRequired: false, updatedAt: now } }, { session });
    });
  }

  private appendRosterLink(session: ClientSession, vaultId: VaultId, entry: RosterEntry, now: string): Promise<void> {
    return appendRosterLink(this.c, session, vaultId, entry, now);
  }

  async getRoster({ vaultId, actorId }: ArgsOf<VaultStore["getRoster"]>): Promise<RosterLink[]> {
    return this.c.consistentRead(async (session) => {
      if (!(await this.c.vaultView(session, vaultId, actorId))) throw vaultNotFound();
      const links = await this.c.rosterLinks.find({ vaultId }, { session }).sort({ seq: 1 }).toArray();
      return links.map((l) => JSON.parse(l.link) as RosterLink);
    });
  }
}
