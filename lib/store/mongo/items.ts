/** Items on MongoDB (the port: ../port/items.ts; SQL: ../sql/items.ts). */
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import type { ClientSession } from "mongodb";
import { decideVaultGrowth, itemBytes } from "../../domain/vaults/limits";
// Every rule an item write applies: this adapter reads the state they decide on, and stores what they return.
import * as itemRules from "../../domain/items/decisions";
import type { LockedForItems } from "../../domain/items/decisions";
import { planItemCreate } from "../../domain/items/creates";
import { itemChangedMeanwhile, itemNotFound } from "../../domain/items/refusals";
import type { ArgsOf, ItemChanges, ItemLogPage, ItemRecord, ItemRevisionRecord, ItemStore, TrashedItemRecord } from "../port";
import {
  CHANGE_EPOCH_KEY,
  cursorOf,
  deltaAnswer,
  fullAnswer,
  MAX_DELTA_ITEMS,
  newChangeEpoch,
  planDelta,
} from "../../domain/items/changes";
import {
  decideItemWriteStep,
  itemDigestOf,
  itemSetDigestOf,
  type ItemChange,
  type ItemLink,
  type LockedForItemLog,
  type ItemState,
} from "../../domain/items/log";
import type { MongoContext } from "./context";
import { itemKey, itemLogHeadOf, toItem, toRevision, toTrashed, type ItemDoc } from "./documents";
import { writeOutbox } from "./outbox";
import { txDroppingAttachments } from "./attachments";
import { DEFAULT_ITEM_HISTORY, decideItemRestore, decideTrashPurge } from "../../domain/items/history";
import { chunks, deleteFromTrash, firmSizeOf, keepRevision, makeRoom, moveToTrash, trashDoc } from "./item-history";

/** Ids per `$in` of a find: far below the 16 MB a command may hold. */
const IDS_PER_FIND = 1_000;

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

  async listChanges({ vaultId, actorId, since }: ArgsOf<ItemStore["listChanges"]>): Promise<ItemChanges> {
    return this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      const vault = await this.c.vaults.findOne({ _id: vaultId }, { session, projection: { changeSeq: 1, resetSeq: 1 } });
      if (!vault) throw itemNotFound();
      // A vault of an earlier release: a reset numbered 1 (VaultDoc).
      const epoch = await this.changeEpoch();
      const cursor = cursorOf(epoch, vault.changeSeq ?? 1);
      const plan = planDelta(since, { changeSeq: vault.changeSeq ?? 1, resetSeq: vault.resetSeq ?? 1 }, epoch);
      if (plan.kind === "full") return fullAnswer(cursor);
      const changes = await this.c.itemChanges
        .find({ vaultId, seq: { $gt: plan.since } }, { session })
        .sort({ seq: 1, itemId: 1 })
        .limit(MAX_DELTA_ITEMS + 1)
        .toArray();
      if (changes.length > MAX_DELTA_ITEMS) return fullAnswer(cursor);
      const docs = await this.c.items.find({ _id: { $in: changes.map((c) => c._id) } }, { session }).toArray();
      const live = new Map(docs.map((d) => [d._id, toItem(d)]));
      return deltaAnswer(
        cursor,
        changes.map((c) => ({ itemId: c.itemId, item: live.get(c._id) ?? null })),
      );
    });
  }

  private epoch: number | undefined;

  /** The store's change epoch (lib/domain/items/changes.ts), made at its first delta read and kept until a restore drops it. */
  private async changeEpoch(): Promise<number> {
    if (this.epoch !== undefined) return this.epoch;
    await this.c.serverKeys.updateOne(
      { _id: CHANGE_EPOCH_KEY },
      { $setOnInsert: { value: String(newChangeEpoch()), createdAt: new Date().toISOString() } },
      { upsert: true },
    );
    this.epoch = Number((await this.c.serverKeys.findOne({ _id: CHANGE_EPOCH_KEY }))!.value);
    return this.epoch;
  }

  async getItem({ vaultId, actorId, itemId }: ArgsOf<ItemStore["getItem"]>): Promise<ItemRecord> {
    const doc = await this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      return this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
    });
    if (!doc) throw itemNotFound();
    return toItem(doc);
  }

  async createItem(args: ArgsOf<ItemStore["createItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, now, events } = args;
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const { keyVersion, role, signingPublicKey } = locked;
      const taken = (await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session, projection: { _id: 1 } })) !== null;
      const inTrash = (await this.c.itemTrash.findOne({ _id: itemKey(vaultId, itemId) }, { session, projection: { _id: 1 } })) !== null;
      const firm = await firmSizeOf(this.c, session, vaultId);
      const plan = planItemCreate({ ...locked, vaultId, firm, actor: { role, signingPublicKey }, taken, inTrash }, args, limits);
      if (plan.link) await this.c.appendItemLink(session, vaultId, plan.link, now);
      const d = plan.decision;
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
      await this.c.recordItemChanges(session, vaultId, { itemIds: [itemId] });
      await makeRoom(this.c, session, vaultId, limits, { items: firm.items + 1, bytes: firm.bytes + itemBytes(write) });
      return toItem(doc);
    });
  }

  async updateItem(args: ArgsOf<ItemStore["updateItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, history, now, events } = args;
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const { keyVersion } = locked;
      const found = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      const d = itemRules.decideItemUpdate(itemRules.snapshotOf(locked, found ?? undefined), itemId, write);
      const doc = found!;
      const firm = await firmSizeOf(this.c, session, vaultId);
      if (d.growth) decideVaultGrowth(firm, d.growth, limits);
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
      await this.c.recordItemChanges(session, vaultId, { itemIds: [itemId] });
      await keepRevision(this.c, session, doc, (history ?? { keep: DEFAULT_ITEM_HISTORY }).keep, now);
      await makeRoom(this.c, session, vaultId, limits, { items: firm.items, bytes: firm.bytes + itemBytes(write) - itemBytes(doc) });
      return toItem(updated);
    });
  }

  async deleteItem(args: ArgsOf<ItemStore["deleteItem"]>): Promise<void> {
    const { vaultId, actorId, itemId, now, events } = args;
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const doc = await this.c.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      await this.logStep(session, locked, args, itemRules.decideItemDelete(itemRules.snapshotOf(locked, doc ?? undefined), itemId));
      const res = await this.c.items.deleteOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (res.deletedCount !== 1) throw itemNotFound();
      await moveToTrash(this.c, session, doc!, actorId, now);
      await this.c.recordItemChanges(session, vaultId, { itemIds: [itemId] });
    });
  }

  async listHistory({ vaultId, actorId, itemId }: ArgsOf<ItemStore["listHistory"]>): Promise<ItemRevisionRecord[]> {
    return this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      const docs = await this.c.itemRevisions
        .find(itemId ? { vaultId, itemId } : { vaultId }, { session })
        .sort({ itemId: 1, revision: -1 })
        .toArray();
      return docs.map(toRevision);
    });
  }

  async listTrash({ vaultId, actorId }: ArgsOf<ItemStore["listTrash"]>): Promise<TrashedItemRecord[]> {
    return this.c.consistentRead(async (session) => {
      itemRules.decideItemRead((await this.c.vaultView(session, vaultId, actorId))?.role ?? null);
      const docs = await this.c.itemTrash.find({ vaultId }, { session }).sort({ deletedAt: -1, itemId: 1 }).toArray();
      return docs.map(toTrashed);
    });
  }

  async restoreItem(args: ArgsOf<ItemStore["restoreItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, now, events } = args;
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      const trashed = await trashDoc(this.c, session, vaultId, itemId);
      const d = decideItemRestore({ role: locked.role, trashed: trashed ?? undefined }, itemId);
      await this.logStep(session, locked, args, d.change);
      const { deletedAt: _at, deletedBy: _by, ...item } = trashed!;
      const doc: ItemDoc = { ...item, revision: d.revision, updatedAt: now };
      await this.c.itemTrash.deleteOne({ _id: doc._id }, { session });
      await this.c.items.insertOne(doc, { session });
      await this.c.recordItemChanges(session, vaultId, { itemIds: [itemId] });
      return toItem(doc);
    });
  }

  async purgeItem({ vaultId, actorId, itemId, events }: ArgsOf<ItemStore["purgeItem"]>): Promise<void> {
    await txDroppingAttachments(this.c, async (session, dropAttachments) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      decideTrashPurge({ role: locked.role, trashed: (await trashDoc(this.c, session, vaultId, itemId)) !== null });
      await deleteFromTrash(this.c, session, vaultId, [itemId]);
      await dropAttachments(vaultId);
    });
  }

  async importItems(args: ArgsOf<ItemStore["importItems"]>): Promise<{ created: number }> {
    const { vaultId, actorId, items, keyVersion: stated, limits, now, events } = args;
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const locked = await this.lockForItems(session, vaultId, actorId);
      // The ids the vault already holds, in its items or its trash (one after the other: a session runs one operation at a time).
      const taken = new Set<string>();
      for (const chunk of chunks(
        items.map((i) => itemKey(vaultId, i.itemId)),
        IDS_PER_FIND,
      )) {
        const live = await this.c.items.find({ _id: { $in: chunk } }, { session, projection: { itemId: 1 } }).toArray();
        const trashed = await this.c.itemTrash.find({ _id: { $in: chunk } }, { session, projection: { itemId: 1 } }).toArray();
        for (const d of [...live, ...trashed]) taken.add(d.itemId);
      }
      const d = itemRules.decideItemImport({ role: locked.role, keyVersion: locked.keyVersion, taken }, items, stated);
      const firm = await firmSizeOf(this.c, session, vaultId);
      decideVaultGrowth(firm, d.growth, limits);
      const docs: ItemDoc[] = items.map((i) => ({
        _id: itemKey(vaultId, i.itemId),
        itemId: i.itemId,
        vaultId,
        encryptedData: i.encryptedData,
        encryptedName: i.encryptedName,
        revision: 1,
        keyVersion: locked.keyVersion,
        createdAt: now,
        updatedAt: now,
      }));
      // One call; the driver splits it into batches the server accepts.
      await this.c.items.insertMany(docs, { session, ordered: true });
      await this.c.recordItemChanges(session, vaultId, { itemIds: docs.map((d) => d.itemId) });
      // The link names the whole set after the import, as stored.
      // Only a vault that keeps an item log (or a request with a link) needs the whole set hashed.
      if (locked.itemLog || args.itemLink) {
        const set = await this.itemSet(session, vaultId);
        await this.logStep(session, locked, args, {
          op: "import",
          count: set.length,
          setDigest: itemSetDigestOf(set),
          added: items.length,
        });
      }
      await makeRoom(this.c, session, vaultId, limits, { items: firm.items + d.growth.items, bytes: firm.bytes + d.growth.bytes });
      return { created: docs.length };
    });
  }

  async recordExport({ vaultId, actorId, events }: ArgsOf<ItemStore["recordExport"]>): Promise<void> {
    await this.c.tx(async (session) => {
      // Refuses a non-member before anything is written.
      await this.lockForItems(session, vaultId, actorId);
      await writeOutbox(this.c, session, events);
    });
  }

  async appendCheckpoint(args: ArgsOf<ItemStore["appendCheckpoint"]>): Promise<void> {
    const { vaultId, actorId } = args;
    await this.c.tx(async (session) => {
      const locked = await this.lockForItems(session, vaultId, actorId);
      const set = await this.itemSet(session, vaultId);
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

  /** Every item of the vault as the log names it: revision and ciphertext digest. */
  private async itemSet(session: ClientSession, vaultId: VaultId): Promise<Array<[string, ItemState]>> {
    const docs = await this.c.items
      .find({ vaultId }, { session, projection: { itemId: 1, revision: 1, encryptedName: 1, encryptedData: 1 } })
      .toArray();
    return docs.map((d): [string, ItemState] => [d.itemId, { revision: d.revision, sha256: itemDigestOf(d) }]);
  }
}
