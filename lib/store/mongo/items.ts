/** Items on MongoDB (the port: ../port/items.ts; SQL: ../sql/items.ts). */
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import type { ClientSession } from "mongodb";
import { conflict, notFound } from "../../errors";
import { assertKeyVersion } from "../../domain/rekey";
import { decideVaultGrowth, itemBytes, type VaultSize } from "../../domain/vault-limits";
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
  private async lockForItems(session: ClientSession, vaultId: VaultId, actorId: UserId): Promise<LockedForItemLog> {
    const vault = await this.c.lockVault(session, vaultId);
    const member = vault && (await this.c.members.findOne({ vaultId, userId: actorId }, { session, projection: { role: 1 } }));
    if (!vault || !member) throw notFound("Vault");
    const user = await this.c.users.findOne({ _id: actorId }, { session, projection: { signingPublicKey: 1 } });
    return {
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
      if (!(await this.c.vaultView(session, vaultId, actorId))) throw notFound("Vault");
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
      if (!(await this.c.vaultView(session, vaultId, actorId))) throw notFound("Vault");
      return this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
    });
    if (!doc) throw notFound("Item");
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
      assertKeyVersion(keyVersion, write.keyVersion);
      if (await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session, projection: { _id: 1 } }))
        throw conflict("An item with this itemId already exists", "itemId");
      decideVaultGrowth(await this.sizeOf(session, vaultId), { items: 1, bytes: itemBytes(write) }, limits);
      await this.logStep(session, locked, args, { op: "create", itemId, after: { revision: 1, sha256: itemDigestOf(write) } });
      const doc: ItemDoc = {
        _id: itemKey(vaultId, itemId),
        itemId,
        vaultId,
        encryptedData: write.encryptedData,
        encryptedName: write.encryptedName,
        revision: 1,
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
      const doc = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (!doc) throw notFound("Item");
      if (write.revision !== undefined && write.revision !== doc.revision) {
        throw conflict(`The item's revision is ${doc.revision}, not ${write.revision}`, "revision");
      }
      assertKeyVersion(keyVersion, write.keyVersion);
      const growth = itemBytes(write) - itemBytes(doc);
      if (growth > 0) decideVaultGrowth(await this.sizeOf(session, vaultId), { items: 0, bytes: growth }, limits);
      await this.logStep(session, locked, args, {
        op: "update",
        itemId,
        before: { revision: doc.revision, sha256: itemDigestOf(doc) },
        after: { revision: doc.revision + 1, sha256: itemDigestOf(write) },
      });
      const updated: ItemDoc = {
        ...doc,
        encryptedData: write.encryptedData,
        encryptedName: write.encryptedName,
        revision: doc.revision + 1,
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
      if (res.matchedCount !== 1) throw conflict("The item changed meanwhile", "revision");
      return toItem(updated);
    });
  }

  async deleteItem(args: ArgsOf<ItemStore["deleteItem"]>): Promise<void> {
    const { vaultId, actorId, itemId, events } = args;
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const doc = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (!doc) throw notFound("Item");
      await this.logStep(session, locked, args, { op: "delete", itemId, before: { revision: doc.revision, sha256: itemDigestOf(doc) } });
      const res = await this.c.items.deleteOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (res.deletedCount !== 1) throw notFound("Item");
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
      if (!(await this.c.vaultView(session, vaultId, actorId))) throw notFound("Vault");
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
