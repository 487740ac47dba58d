/** Items on SQL (the port: ../port/items.ts; MongoDB: ../mongo/items.ts). */
import type { ItemId, VaultId } from "../../domain/ids";
import { decideVaultGrowth, itemBytes } from "../../domain/vaults/limits";
// Every rule an item write applies: this adapter reads the state they decide on, and stores what they return.
import * as itemRules from "../../domain/items/decisions";
import { itemNotFound } from "../../domain/items/refusals";
import type { ArgsOf, ItemChanges, ItemLogPage, ItemRecord, ItemRevisionRecord, ItemStore, TrashedItemRecord, VaultStore } from "../port";
import {
  CHANGE_EPOCH_KEY,
  cursorOf,
  deltaAnswer,
  fullAnswer,
  MAX_DELTA_ITEMS,
  newChangeEpoch,
  planDelta,
} from "../../domain/items/changes";
import { recordItemChanges, type Db, type SqlContext } from "./context";
import { itemDigestOf, itemSetDigestOf } from "../../domain/items/log";
import type { ItemsTable } from "./schema";
import { writeOutbox } from "./outbox";
import { DEFAULT_ITEM_HISTORY, decideItemRestore, decideTrashPurge } from "../../domain/items/history";
import { keepRevision, makeRoom, moveToTrash, toItem, toRevision, toTrashed, trashRow } from "./item-history";
import { GroupedCreates } from "./item-creates";
import { txDroppingAttachments } from "./attachments";
import { itemRow, lockForItems, logStep, newItemRow, rowState, usedIds, writeItemAt } from "./item-rows";

export class SqlItems implements ItemStore {
  /** `vaults` answers the membership reads (its prepared statement). */
  private readonly creates: GroupedCreates;

  constructor(
    private readonly c: SqlContext,
    private readonly vaults: VaultStore,
  ) {
    this.creates = new GroupedCreates(c);
  }

  async listItems({ vaultId, actorId, page }: ArgsOf<ItemStore["listItems"]>): Promise<ItemRecord[]> {
    itemRules.decideItemRead((await this.vaults.getVault({ vaultId, userId: actorId })).role);
    let q = this.c.db.selectFrom("items").selectAll().where("vault_id", "=", vaultId);
    const after = page?.after;
    if (after)
      q = q.where((eb) =>
        eb.or([
          eb("created_at", ">", after.createdAt),
          eb.and([eb("created_at", "=", after.createdAt), eb("item_id", ">", after.itemId as ItemId)]),
        ]),
      );
    const ordered = q.orderBy("created_at").orderBy("item_id");
    const rows = await (page ? ordered.limit(page.limit + 1) : ordered).execute();
    return rows.map(toItem);
  }

  async listChanges({ vaultId, actorId, since }: ArgsOf<ItemStore["listChanges"]>): Promise<ItemChanges> {
    itemRules.decideItemRead((await this.vaults.getVault({ vaultId, userId: actorId })).role);
    // The counter first: whatever commits after this read comes again next time; nothing is skipped.
    const vault = await this.c.db
      .selectFrom("vaults")
      .select(["change_seq", "reset_seq"])
      .where("vault_id", "=", vaultId)
      .executeTakeFirst();
    if (!vault) throw itemNotFound();
    const epoch = await this.changeEpoch();
    const cursor = cursorOf(epoch, Number(vault.change_seq));
    const plan = planDelta(since, { changeSeq: Number(vault.change_seq), resetSeq: Number(vault.reset_seq) }, epoch);
    if (plan.kind === "full") return fullAnswer(cursor);
    const rows = await this.c.db
      .selectFrom("item_changes as c")
      .leftJoin("items as i", (j) => j.onRef("i.vault_id", "=", "c.vault_id").onRef("i.item_id", "=", "c.item_id"))
      .select([
        "c.item_id as changed_id",
        "i.item_id",
        "i.vault_id",
        "i.encrypted_data",
        "i.encrypted_name",
        "i.revision",
        "i.key_version",
        "i.created_at",
        "i.updated_at",
      ])
      .where("c.vault_id", "=", vaultId)
      .where("c.seq", ">", plan.since)
      .orderBy("c.seq")
      .orderBy("c.item_id")
      .limit(MAX_DELTA_ITEMS + 1)
      .execute();
    return deltaAnswer(
      cursor,
      rows.map((r) => ({ itemId: r.changed_id, item: r.item_id === null ? null : toItem(r as ItemsTable) })),
    );
  }

  private epoch: number | undefined;

  /** The store's change epoch (lib/domain/items/changes.ts), made at its first delta read and kept until a restore drops it. */
  private async changeEpoch(): Promise<number> {
    if (this.epoch !== undefined) return this.epoch;
    await this.c.db
      .insertInto("server_keys")
      .values({ name: CHANGE_EPOCH_KEY, value: String(newChangeEpoch()), created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column("name").doNothing())
      .execute();
    const row = await this.c.db.selectFrom("server_keys").select("value").where("name", "=", CHANGE_EPOCH_KEY).executeTakeFirstOrThrow();
    this.epoch = Number(row.value);
    return this.epoch;
  }

  async getItem({ vaultId, actorId, itemId }: ArgsOf<ItemStore["getItem"]>): Promise<ItemRecord> {
    itemRules.decideItemRead((await this.vaults.getVault({ vaultId, userId: actorId })).role);
    const row = await itemRow(this.c.db, vaultId, itemId);
    if (!row) throw itemNotFound();
    return toItem(row);
  }

  /**
   * Creates in one vault that arrive while one runs wait, and run as the next group
   * (item-creates.ts): under load, one lock, one insert and one commit for many.
   */
  async createItem(args: ArgsOf<ItemStore["createItem"]>): Promise<ItemRecord> {
    return this.creates.submit(args);
  }

  async updateItem(args: ArgsOf<ItemStore["updateItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, history, now, events } = args;
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update");
      const { keyVersion } = locked;
      const row = await itemRow(trx, vaultId, itemId);
      const d = itemRules.decideItemUpdate(itemRules.snapshotOf(locked, row && rowState(row)), itemId, write);
      const { firm } = locked.sizesAtLock;
      if (d.growth) decideVaultGrowth(firm, d.growth, limits);
      await logStep(trx, locked, args, d.change);
      const updated: ItemsTable = {
        ...row!,
        encrypted_data: write.encryptedData,
        encrypted_name: write.encryptedName,
        revision: d.revision,
        key_version: keyVersion,
        updated_at: now,
      };
      await writeItemAt(trx, row!, updated);
      await recordItemChanges(this.c.engine, trx, vaultId, { itemIds: [itemId] });
      await keepRevision(trx, row!, (history ?? { keep: DEFAULT_ITEM_HISTORY }).keep, now);
      await makeRoom(trx, vaultId, limits, { items: firm.items, bytes: firm.bytes + itemBytes(write) - itemBytes(rowState(row!)) });
      return toItem(updated);
    });
  }

  async deleteItem(args: ArgsOf<ItemStore["deleteItem"]>): Promise<void> {
    const { vaultId, actorId, itemId, now, events } = args;
    await this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      // Exclusive: a vault's item log takes one link at a time.
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update");
      const row = await itemRow(trx, vaultId, itemId);
      await logStep(trx, locked, args, itemRules.decideItemDelete(itemRules.snapshotOf(locked, row && rowState(row)), itemId));
      const res = await trx.deleteFrom("items").where("vault_id", "=", vaultId).where("item_id", "=", itemId).executeTakeFirst();
      if (Number(res.numDeletedRows) !== 1) throw itemNotFound();
      await moveToTrash(trx, row!, actorId, now);
      await recordItemChanges(this.c.engine, trx, vaultId, { itemIds: [itemId] });
    });
  }

  async listHistory({ vaultId, actorId, itemId }: ArgsOf<ItemStore["listHistory"]>): Promise<ItemRevisionRecord[]> {
    itemRules.decideItemRead((await this.vaults.getVault({ vaultId, userId: actorId })).role);
    let q = this.c.db.selectFrom("item_revisions").selectAll().where("vault_id", "=", vaultId);
    if (itemId) q = q.where("item_id", "=", itemId);
    const rows = await q.orderBy("item_id").orderBy("revision", "desc").execute();
    return rows.map(toRevision);
  }

  async listTrash({ vaultId, actorId }: ArgsOf<ItemStore["listTrash"]>): Promise<TrashedItemRecord[]> {
    itemRules.decideItemRead((await this.vaults.getVault({ vaultId, userId: actorId })).role);
    const rows = await this.c.db
      .selectFrom("item_trash")
      .selectAll()
      .where("vault_id", "=", vaultId)
      .orderBy("deleted_at", "desc")
      .orderBy("item_id")
      .execute();
    return rows.map(toTrashed);
  }

  async restoreItem(args: ArgsOf<ItemStore["restoreItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, now, events } = args;
    return this.c.tx(async (trx) => {
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update");
      const trashed = await trashRow(trx, vaultId, itemId);
      const d = decideItemRestore({ role: locked.role, trashed: trashed && rowState(trashed) }, itemId);
      await logStep(trx, locked, args, d.change);
      const { deleted_at: _at, deleted_by: _by, ...item } = trashed!;
      const row: ItemsTable = { ...item, revision: d.revision, updated_at: now };
      await trx.deleteFrom("item_trash").where("vault_id", "=", vaultId).where("item_id", "=", itemId).execute();
      await this.c.engine.insertItems(trx, [row], events);
      return toItem(row);
    });
  }

  async purgeItem({ vaultId, actorId, itemId, events }: ArgsOf<ItemStore["purgeItem"]>): Promise<void> {
    await txDroppingAttachments(this.c, async (trx, dropAttachments) => {
      await writeOutbox(trx, events);
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update");
      decideTrashPurge({ role: locked.role, trashed: (await trashRow(trx, vaultId, itemId)) !== undefined });
      await trx.deleteFrom("item_trash").where("vault_id", "=", vaultId).where("item_id", "=", itemId).execute();
      await trx.deleteFrom("item_revisions").where("vault_id", "=", vaultId).where("item_id", "=", itemId).execute();
      await dropAttachments(vaultId);
    });
  }

  async importItems(args: ArgsOf<ItemStore["importItems"]>): Promise<{ created: number }> {
    const { vaultId, actorId, items, keyVersion: stated, limits, now, events } = args;
    return this.c.tx(async (trx) => {
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update");
      const used = await usedIds(
        trx,
        vaultId,
        items.map((i) => i.itemId),
      );
      // An import refuses an id in use either way.
      const taken = new Set([...used.taken, ...used.inTrash]);
      const d = itemRules.decideItemImport({ role: locked.role, keyVersion: locked.keyVersion, taken }, items, stated);
      const { firm, history } = locked.sizesAtLock;
      decideVaultGrowth(firm, d.growth, limits);
      const rows = items.map((i) => newItemRow({ vaultId, itemId: i.itemId, write: i, now }, 1, locked.keyVersion));
      await this.c.engine.insertItems(trx, rows, events);
      // The link names the whole set after the import, as stored.
      // Only a vault that keeps an item log (or a request with a link) needs the whole set hashed.
      if (locked.itemLog || args.itemLink) {
        const set = await this.itemSet(trx, vaultId);
        await logStep(trx, locked, args, { op: "import", count: set.size, setDigest: itemSetDigestOf(set), added: items.length });
      }
      // The history is as locked: inserts do not change it.
      await makeRoom(trx, vaultId, limits, { items: firm.items + d.growth.items, bytes: firm.bytes + d.growth.bytes }, history);
      return { created: rows.length };
    });
  }

  async recordExport({ vaultId, actorId, events }: ArgsOf<ItemStore["recordExport"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await lockForItems(this.c, trx, vaultId, actorId, "share");
      await writeOutbox(trx, events);
    });
  }

  async appendCheckpoint(args: ArgsOf<ItemStore["appendCheckpoint"]>): Promise<void> {
    const { vaultId, actorId } = args;
    await this.c.tx(async (trx) => {
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update");
      const set = await this.itemSet(trx, vaultId);
      await logStep(trx, locked, args, { op: "checkpoint", count: set.size, setDigest: itemSetDigestOf(set) });
    });
  }

  async readItemLog({ vaultId, actorId, from, limit }: ArgsOf<ItemStore["readItemLog"]>): Promise<ItemLogPage> {
    const vault = await this.vaults.getVault({ vaultId, userId: actorId });
    itemRules.decideItemRead(vault.role);
    const head = await this.c.db
      .selectFrom("vaults")
      .select(["item_seq", "item_base_seq"])
      .where("vault_id", "=", vault.vaultId)
      .executeTakeFirstOrThrow();
    if (head.item_seq === null) return { links: [], baseSeq: null, next: null };
    const baseSeq = Number(head.item_base_seq);
    const rows = await this.c.db
      .selectFrom("item_links")
      .select(["seq", "link"])
      .where("vault_id", "=", vaultId)
      .where("seq", ">=", from ?? baseSeq)
      .orderBy("seq")
      .limit(limit + 1)
      .execute();
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { links: page.map((r) => JSON.parse(r.link) as unknown), baseSeq, next: more ? Number(rows[limit]!.seq) : null };
  }

  /** Every item of the vault as the log names it: revision and ciphertext digest. */
  private async itemSet(trx: Db, vaultId: VaultId): Promise<Map<string, { revision: number; sha256: string }>> {
    const rows = await trx
      .selectFrom("items")
      .select(["item_id", "revision", "encrypted_name", "encrypted_data"])
      .where("vault_id", "=", vaultId)
      .execute();
    return new Map(
      rows.map((r) => [
        r.item_id,
        { revision: Number(r.revision), sha256: itemDigestOf({ encryptedName: r.encrypted_name, encryptedData: r.encrypted_data }) },
      ]),
    );
  }
}
