/** Items on MongoDB (the port: ../port/items.ts; SQL: ../sql/items.ts). */
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import type { ClientSession } from "mongodb";
import { decideVaultGrowth, type VaultSize } from "../../domain/vault-limits";
// Every rule an item write applies: this adapter reads the state they decide on, and stores what they return.
import * as itemRules from "../../domain/items";
import type { LockedForItems } from "../../domain/items";
import { itemChangedMeanwhile, itemNotFound } from "../../domain/refusals";
import type { ArgsOf, ItemLogPage, ItemRecord, ItemStore } from "../port";
import {
  decideItemWriteStep,
  itemDigestOf,
  itemSetDigestOf,
  type ItemChange,
  type ItemLink,
  type LockedForItemLog,
  type ItemState,
} from "../../domain/item-log";
import type { MongoContext } from "./context";
import { itemKey, itemLogHeadOf, toItem, type ItemDoc } from "./documents";
import { writeOutbox } from "./outbox";

export class MongoItems implements ItemStore {
  constructor(private readonly c: MongoContext) {}

  /**
   * Locks the vault for an item write and checks the caller's membership. MongoDB has no shared
   * lock, so item writes to one vault are serialized (the SQL adapter lets them run side by side).
   */
  private async lockForItems(session: ClientSession, vaultId: VaultId, actorId: UserId): Promise<LockedForItems> {
    const vault = await this.c.lockVault(session, vaultId);
    const member = vault && (await this.c.members.findOne({ vaultId, userId: actorId }, { session, projection: { role: 1 } }));
    const user = await this.c.users.findOne({ _id: actorId }, { session, projection: { signingPublicKey: 1, removedAt: 1 } });
    // A non-member, or one taken out of the organization (or a vault that is not there), is refused here, before anything else is read.
    if (!vault || !member || user?.removedAt !== undefined) itemRules.decideItemRead(null);
    return {
      role: member.role,
      keyVersion: vault.keyVersion,
      itemLog: itemLogHeadOf(vault),
      roster: vault.roster ?? null,
      signingPublicKey: user?.signingPublicKey ?? "",
    };
  }

  /** The write's step in the vault's item log (decideItemLinkStep), stored in the write's transaction. */
  private async logStep(
    session: ClientSession,
    locked: LockedForItemLog,
    args: { vaultId: VaultId; actorId: UserId; itemLink?: ItemLink; now: string },
    change: ItemChange,
  ): Promise<void> {
    const entry = decideItemWriteStep(args, locked, change);
    if (entry) await this.c.appendItemLink(session, args.vaultId, entry, args.now);
  }

  async listItems({ vaultId, actorId, page }: ArgsOf<ItemStore["listItems"]>): Promise<ItemRecord[]> {
    return this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      const after = page?.after;
      const filter = after
        ? {
            vaultId,
            $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, itemId: { $gt: after.itemId as ItemId } }],
          }
        : { vaultId };
      const cursor = this.c.items.find(filter, { session }).sort({ createdAt: 1, itemId: 1 });
      return (await (page ? cursor.limit(page.limit + 1) : cursor).toArray()).map(toItem);
    });
  }

  async getItem({ vaultId, actorId, itemId }: ArgsOf<ItemStore["getItem"]>): Promise<ItemRecord> {
    const doc = await this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      return this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
    });
    if (!doc) throw itemNotFound();
    return toItem(doc);
  }

  /** What the vault holds: its items, and their ciphertext's bytes. */
  private async sizeOf(session: ClientSession, vaultId: VaultId): Promise<VaultSize> {
    const [r] = await this.c.items
      .aggregate<{ items: number; bytes: number }>(
        [
          { $match: { vaultId } },
          {
            $group: {
              _id: null,
              items: { $sum: 1 },
              bytes: { $sum: { $add: [{ $strLenBytes: "$encryptedData" }, { $strLenBytes: "$encryptedName" }] } },
            },
          },
        ],
        { session },
      )
      .toArray();
    return { items: r?.items ?? 0, bytes: r?.bytes ?? 0 };
  }

  async createItem(args: ArgsOf<ItemStore["createItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, now, events } = args;
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const { keyVersion } = locked;
      const taken = (await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session, projection: { _id: 1 } })) !== null;
      const d = itemRules.decideItemCreate({ role: locked.role, keyVersion: locked.keyVersion, taken }, itemId, write);
      if (d.growth) decideVaultGrowth(await this.sizeOf(session, vaultId), d.growth, limits);
      await this.logStep(session, locked, args, d.change);
      const doc: ItemDoc = {
        _id: itemKey(vaultId, itemId),
        itemId,
        vaultId,
        encryptedData: write.encryptedData,
        encryptedName: write.encryptedName,
        revision: d.revision,
        keyVersion,
        createdAt: now,
        updatedAt: now,
      };
      await this.c.items.insertOne(doc, { session });
      return toItem(doc);
    });
  }

  async updateItem(args: ArgsOf<ItemStore["updateItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, now, events } = args;
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const { keyVersion } = locked;
      const found = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      const d = itemRules.decideItemUpdate(itemRules.snapshotOf(locked, found ?? undefined), itemId, write);
      const doc = found!;
      if (d.growth) decideVaultGrowth(await this.sizeOf(session, vaultId), d.growth, limits);
      await this.logStep(session, locked, args, d.change);
      const updated: ItemDoc = {
        ...doc,
        encryptedData: write.encryptedData,
        encryptedName: write.encryptedName,
        revision: d.revision,
        keyVersion,
        updatedAt: now,
      };
      const res = await this.c.items.updateOne(
        { _id: doc._id, revision: doc.revision },
        {
          $set: {
            encryptedData: updated.encryptedData,
            encryptedName: updated.encryptedName,
            revision: updated.revision,
            keyVersion,
            updatedAt: now,
          },
        },
        { session },
      );
      if (res.matchedCount !== 1) throw itemChangedMeanwhile();
      return toItem(updated);
    });
  }

  async deleteItem(args: ArgsOf<ItemStore["deleteItem"]>): Promise<void> {
    const { vaultId, actorId, itemId, events } = args;
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const doc = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      await this.logStep(session, locked, args, itemRules.decideItemDelete(itemRules.snapshotOf(locked, doc ?? undefined), itemId));
      const res = await this.c.items.deleteOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (res.deletedCount !== 1) throw itemNotFound();
    });
  }

  async appendCheckpoint(args: ArgsOf<ItemStore["appendCheckpoint"]>): Promise<void> {
    const { vaultId, actorId } = args;
    await this.c.tx(async (session) => {
      const locked = await this.lockForItems(session, vaultId, actorId);
      const docs = await this.c.items
        .find({ vaultId }, { session, projection: { itemId: 1, revision: 1, encryptedName: 1, encryptedData: 1 } })
        .toArray();
      const set = docs.map((d): [string, ItemState] => [d.itemId, { revision: d.revision, sha256: itemDigestOf(d) }]);
      await this.logStep(session, locked, args, { op: "checkpoint", count: set.length, setDigest: itemSetDigestOf(set) });
    });
  }

  async readItemLog({ vaultId, actorId, from, limit }: ArgsOf<ItemStore["readItemLog"]>): Promise<ItemLogPage> {
    return this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      const vault = await this.c.vaults.findOne({ _id: vaultId }, { session, projection: { itemLog: 1 } });
      if (!vault?.itemLog) return { links: [], baseSeq: null, next: null };
      const baseSeq = vault.itemLog.baseSeq;
      const docs = await this.c.itemLinks
        .find({ vaultId, seq: { $gte: from ?? baseSeq } }, { session })
        .sort({ seq: 1 })
        .limit(limit + 1)
        .toArray();
      const more = docs.length > limit;
      return {
        links: docs.slice(0, limit).map((d) => JSON.parse(d.link) as unknown),
        baseSeq,
        next: more ? docs[limit]!.seq : null,
      };
    });
  }
}
