/** Items on MongoDB (the port: ../port/items.ts; SQL: ../sql/items.ts). */
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import type { ClientSession } from "mongodb";
import { conflict, notFound } from "../../errors";
import { assertKeyVersion } from "../../domain/rekey";
import { decideVaultGrowth, itemBytes, type VaultSize } from "../../domain/vault-limits";
import type { ArgsOf, ItemRecord, ItemStore } from "../port";
import type { MongoContext } from "./context";
import { itemKey, toItem, type ItemDoc } from "./documents";
import { writeOutbox } from "./outbox";

export class MongoItems implements ItemStore {
  constructor(private readonly c: MongoContext) {}

  /**
   * Locks the vault for an item write and checks the caller's membership. MongoDB has no shared
   * lock, so item writes to one vault are serialized (the SQL adapter lets them run side by side).
   */
  private async lockForItems(session: ClientSession, vaultId: VaultId, actorId: UserId): Promise<{ keyVersion: number }> {
    const vault = await this.c.lockVault(session, vaultId);
    const member = vault && (await this.c.members.findOne({ vaultId, userId: actorId }, { session, projection: { role: 1 } }));
    if (!vault || !member) throw notFound("Vault");
    return { keyVersion: vault.keyVersion };
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

  async createItem({ vaultId, actorId, itemId, write, limits, now, events }: ArgsOf<ItemStore["createItem"]>): Promise<ItemRecord> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const { keyVersion } = await this.lockForItems(session, vaultId, actorId);
      assertKeyVersion(keyVersion, write.keyVersion);
      if (await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session, projection: { _id: 1 } }))
        throw conflict("An item with this itemId already exists", "itemId");
      decideVaultGrowth(await this.sizeOf(session, vaultId), { items: 1, bytes: itemBytes(write) }, limits);
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

  async updateItem({ vaultId, actorId, itemId, write, limits, now, events }: ArgsOf<ItemStore["updateItem"]>): Promise<ItemRecord> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const { keyVersion } = await this.lockForItems(session, vaultId, actorId);
      const doc = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (!doc) throw notFound("Item");
      if (write.revision !== undefined && write.revision !== doc.revision) {
        throw conflict(`The item's revision is ${doc.revision}, not ${write.revision}`, "revision");
      }
      assertKeyVersion(keyVersion, write.keyVersion);
      const growth = itemBytes(write) - itemBytes(doc);
      if (growth > 0) decideVaultGrowth(await this.sizeOf(session, vaultId), { items: 0, bytes: growth }, limits);
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

  async deleteItem({ vaultId, actorId, itemId, events }: ArgsOf<ItemStore["deleteItem"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.lockForItems(session, vaultId, actorId);
      const res = await this.c.items.deleteOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (res.deletedCount !== 1) throw notFound("Item");
    });
  }
}
