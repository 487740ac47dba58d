/** Items on SQL (the port: ../port/items.ts; MongoDB: ../mongo/items.ts). */
import { param, prepared } from "./prepared";
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import { decideVaultGrowth, itemBytes } from "../../domain/vault-limits";
// Every rule an item write applies: this adapter reads the state they decide on, and stores what they return.
import * as itemRules from "../../domain/items";
import type { LockedForItems, StoredItemState } from "../../domain/items";
import { itemChangedMeanwhile, itemNotFound } from "../../domain/refusals";
import { AppError } from "../../errors";
import type { ArgsOf, ItemChanges, ItemLogPage, ItemRecord, ItemRevisionRecord, ItemStore, TrashedItemRecord, VaultStore } from "../port";
import { CHANGE_EPOCH_KEY, cursorOf, deltaAnswer, fullAnswer, MAX_DELTA_ITEMS, newChangeEpoch, planDelta } from "../../domain/item-changes";
import {
  appendItemLink,
  chunks,
  itemLogHead,
  recordItemChanges,
  rosterHeadOf,
  type Db,
  type LockedVault,
  type SqlContext,
} from "./context";
import { KeyedGroups } from "./groups";
import { decideGroupedCreates, planItemCreate, type LockedForCreates } from "../../domain/item-creates";
import type { DomainEvent } from "../../domain/events";
import type { VaultRole } from "../../domain/types";
import {
  decideItemWriteStep,
  itemDigestOf,
  itemSetDigestOf,
  type ItemChange,
  type ItemLink,
  type LockedForItemLog,
} from "../../domain/item-log";

import type { ItemsTable } from "./schema";
import { writeOutbox } from "./outbox";
import { DEFAULT_ITEM_HISTORY, decideItemRestore, decideTrashPurge } from "../../domain/item-history";
import { keepRevision, makeRoom, moveToTrash, sizesOfRow, toItem, toRevision, toTrashed, trashRow } from "./item-history";

/** A row as the item rules read it. */
const rowState = (r: ItemsTable): StoredItemState => ({
  revision: Number(r.revision),
  encryptedName: r.encrypted_name,
  encryptedData: r.encrypted_data,
});

// The item writes' statements, compiled once (prepared.ts).
const ITEM_ROW = prepared("item_row", (db) =>
  db.selectFrom("items").selectAll().where("vault_id", "=", param<VaultId>("vaultId")).where("item_id", "=", param<ItemId>("itemId")),
);
/** The actor's membership, as a write checks it once the vault is locked: one taken out of the organization acts no more. */
const actorOf = (db: Db) =>
  db
    .selectFrom("vault_members as m")
    .innerJoin("users as u", "u.user_id", "m.user_id")
    .select(["m.role", "u.signing_public_key"])
    .where("m.vault_id", "=", param<VaultId>("vaultId"))
    .where("m.user_id", "=", param<UserId>("actorId"))
    .where("u.removed_at", "is", null);
const ACTOR = prepared("item_actor", actorOf);
/**
 * The same and, in the same statement, where the item id is already used (live, or in the trash):
 * what a create decides on. One statement, read after the lock, so under READ COMMITTED it sees
 * every write committed before the lock was granted, as two reads after it would.
 */
const ACTOR_AND_PRESENCE = prepared("item_actor_presence", (db) =>
  actorOf(db).select((eb) => {
    const usedIn = (table: "items" | "item_trash") =>
      eb.exists(
        eb
          .selectFrom(table)
          .select("item_id")
          .where("vault_id", "=", param<VaultId>("vaultId"))
          .where("item_id", "=", param<ItemId>("itemId")),
      );
    return [usedIn("items").as("taken"), usedIn("item_trash").as("in_trash")];
  }),
);
/** One item of a vault, if there is such an item in that vault. */
async function itemRow(db: Db, vaultId: VaultId, itemId: ItemId): Promise<ItemsTable | undefined> {
  return (await ITEM_ROW.run(db, { vaultId, itemId })).rows[0];
}

type CreateArgs = ArgsOf<ItemStore["createItem"]>;
/** Creates of one vault stored together at most (KeyedGroups): every one of them waits for the group's commit. */
const GROUP_MAX_CREATES = 100;

/** A new item's row: revision and key version as decided under the lock. */
function newItemRow(
  c: { vaultId: VaultId; itemId: ItemId; write: { encryptedData: string; encryptedName: string }; now: string },
  revision: number,
  keyVersion: number,
): ItemsTable {
  return {
    item_id: c.itemId,
    vault_id: c.vaultId,
    encrypted_data: c.write.encryptedData,
    encrypted_name: c.write.encryptedName,
    revision,
    key_version: keyVersion,
    created_at: c.now,
    updated_at: c.now,
  };
}

/** Of `itemIds`, those the vault's items hold (`taken`) and those its trash holds (`inTrash`). */
async function usedIds(trx: Db, vaultId: VaultId, itemIds: readonly ItemId[]): Promise<{ taken: Set<string>; inTrash: Set<string> }> {
  const taken = new Set<string>();
  const inTrash = new Set<string>();
  for (const chunk of chunks(itemIds, 500)) {
    const [live, trashed] = await Promise.all([
      trx.selectFrom("items").select("item_id").where("vault_id", "=", vaultId).where("item_id", "in", chunk).execute(),
      trx.selectFrom("item_trash").select("item_id").where("vault_id", "=", vaultId).where("item_id", "in", chunk).execute(),
    ]);
    for (const r of live) taken.add(r.item_id);
    for (const r of trashed) inTrash.add(r.item_id);
  }
  return { taken, inTrash };
}

export class SqlItems implements ItemStore {
  /** `vaults` answers the membership reads (its prepared statement). */
  constructor(
    private readonly c: SqlContext,
    private readonly vaults: VaultStore,
  ) {}

  /**
   * Locks the vault and checks the caller's membership. A write that may grow the vault takes it
   * exclusively, so that two writes cannot both fit under the vault's limit and together pass it;
   * an export's record takes it shared (never beside a rekey).
   */
  private async lockForItems(
    trx: Db,
    vaultId: VaultId,
    actorId: UserId,
    mode: "share" | "update",
    /** A create's item id: where it is already used is read with the membership. */
    creating?: ItemId,
  ): Promise<LockedForItems & { sizesAtLock: ReturnType<typeof sizesOfRow>; presence?: { taken: boolean; inTrash: boolean } }> {
    const vault = await this.c.engine.lockVault(trx, vaultId, mode);
    const member =
      vault &&
      (creating === undefined
        ? (await ACTOR.run(trx, { vaultId, actorId })).rows[0]
        : (await ACTOR_AND_PRESENCE.run(trx, { vaultId, actorId, itemId: creating })).rows[0]);
    // A non-member (or a vault that is not there) is refused here, before anything else is read.
    if (!vault || !member) itemRules.decideItemRead(null);
    const found = member as { taken?: unknown; in_trash?: unknown };
    return {
      // EXISTS answers 1 or 0 on SQLite, true or false on PostgreSQL.
      ...(creating !== undefined && { presence: { taken: Number(found.taken) === 1, inTrash: Number(found.in_trash) === 1 } }),
      role: member.role,
      keyVersion: Number(vault.key_version),
      itemLog: itemLogHead(vaultId, vault),
      roster: rosterHeadOf(vault),
      signingPublicKey: member.signing_public_key,
      // As read with the lock: what the write's limits are checked against, without a read of their
      // own. A snapshot: a step that writes items, trash or revisions before its use would need a fresh read.
      sizesAtLock: sizesOfRow(vault),
    };
  }

  /** The write's step in the vault's item log (decideItemLinkStep), stored in the write's transaction. */
  private async logStep(
    trx: Db,
    locked: LockedForItemLog,
    args: { vaultId: VaultId; actorId: UserId; itemLink?: ItemLink; now: string },
    change: ItemChange,
  ): Promise<void> {
    const entry = decideItemWriteStep(args, locked, change);
    if (entry) await appendItemLink(trx, args.vaultId, entry, args.now);
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

  /** The store's change epoch (lib/domain/item-changes.ts), made at its first delta read and kept until a restore drops it. */
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
   * (createGroup): under load, one lock, one insert and one commit for many. The first create of a
   * quiet moment runs alone, at once.
   */
  async createItem(args: ArgsOf<ItemStore["createItem"]>): Promise<ItemRecord> {
    return this.creates.submit(args.vaultId, args);
  }

  private readonly creates = new KeyedGroups<CreateArgs, ItemRecord>(
    (vaultId, group) => this.createGroup(vaultId as VaultId, group),
    GROUP_MAX_CREATES,
  );

  /** Each create on its own, in the group's order: as the group would have decided them. */
  private async oneByOne(group: readonly CreateArgs[]): Promise<Array<PromiseSettledResult<ItemRecord>>> {
    const answers: Array<PromiseSettledResult<ItemRecord>> = [];
    for (const args of group) answers.push(...(await Promise.allSettled([this.createOne(args)])));
    return answers;
  }

  private async createOne(args: CreateArgs): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, events } = args;
    return this.c.tx(async (trx) => {
      const locked = await this.lockForItems(trx, vaultId, actorId, "update", itemId);
      const { keyVersion } = locked;
      const { firm, history } = locked.sizesAtLock;
      const { role, signingPublicKey } = locked;
      const plan = planItemCreate({ ...locked, vaultId, firm, actor: { role, signingPublicKey }, ...locked.presence! }, args, limits);
      if (plan.link) await appendItemLink(trx, vaultId, plan.link, args.now);
      const row = newItemRow(args, plan.decision.revision, keyVersion);
      // The row, its change record and the event (PostgreSQL: one round trip).
      await this.c.engine.insertItems(trx, [row], events);
      // The history is as locked: an insert does not change it.
      await makeRoom(trx, vaultId, limits, { items: firm.items + 1, bytes: firm.bytes + itemBytes(write) }, history);
      return toItem(row);
    });
  }

  /**
   * Creates of one vault, decided one after the other as the ones before them left the vault
   * (decideGroupedCreates), stored in one transaction. A refused create is refused alone. A group
   * refused by the store before its commit (a key already used: 409), with nothing stored, runs
   * again one create at a time, in order, so that each answers for itself. Any other failure (the
   * database unreachable, a timeout, a failed commit) is every create's answer, at once: each
   * create alone would only meet it again, one after the other. A group that stored nothing keeps
   * its refusals whatever its commit does.
   */
  private async createGroup(vaultId: VaultId, group: readonly CreateArgs[]): Promise<Array<PromiseSettledResult<ItemRecord>>> {
    if (group.length === 1) return Promise.allSettled([this.createOne(group[0]!)]);
    // The node's settings (VAULT_MAX_ITEMS, VAULT_MAX_BYTES), which every create of a process
    // states; creates that state other limits are each held to their own.
    const limits = group[0]!.limits;
    if (group.some((c) => c.limits.maxItems !== limits.maxItems || c.limits.maxBytes !== limits.maxBytes)) return this.oneByOne(group);
    let decided: { answers: Array<PromiseSettledResult<ItemRecord>>; stored: boolean } | undefined;
    try {
      return await this.c.tx(async (trx) => {
        const vault = await this.c.engine.lockVault(trx, vaultId, "update");
        const locked = vault && (await this.lockedForCreates(trx, vaultId, vault, group));
        const { outcomes, firm } = decideGroupedCreates(locked ?? null, group, limits);
        const rows: ItemsTable[] = [];
        const events: DomainEvent[] = [];
        const answers = outcomes.map((o, i): PromiseSettledResult<ItemRecord> => {
          if (!o.ok) return { status: "rejected", reason: o.error };
          const args = group[i]!;
          const row = newItemRow(args, o.decision.revision, locked!.keyVersion);
          rows.push(row);
          events.push(...(args.events ?? []));
          return { status: "fulfilled", value: toItem(row) };
        });
        if (rows.length > 0) {
          for (const [i, o] of outcomes.entries()) if (o.ok && o.link) await appendItemLink(trx, vaultId, o.link, group[i]!.now);
          await this.c.engine.insertItems(trx, rows, events);
          // The history is as locked: inserts do not change it.
          await makeRoom(trx, vaultId, limits, firm, sizesOfRow(vault!).history);
        }
        decided = { answers, stored: rows.length > 0 };
        return answers;
      });
    } catch (err) {
      if (decided && !decided.stored) return decided.answers;
      if (decided || !(err instanceof AppError)) return group.map(() => ({ status: "rejected", reason: err }));
      return this.oneByOne(group);
    }
  }

  /** What a group of creates is decided on, read under the vault's lock: the actors, and where the ids are already used. */
  private async lockedForCreates(trx: Db, vaultId: VaultId, vault: LockedVault, group: readonly CreateArgs[]): Promise<LockedForCreates> {
    const actors = new Map<UserId, { role: VaultRole; signingPublicKey: string }>();
    for (const actorId of new Set(group.map((c) => c.actorId))) {
      const member = (await ACTOR.run(trx, { vaultId, actorId })).rows[0];
      if (member) actors.set(actorId, { role: member.role, signingPublicKey: member.signing_public_key });
    }
    const used = await usedIds(
      trx,
      vaultId,
      group.map((c) => c.itemId),
    );
    return {
      vaultId,
      keyVersion: Number(vault.key_version),
      itemLog: itemLogHead(vaultId, vault),
      roster: rosterHeadOf(vault),
      firm: sizesOfRow(vault).firm,
      actors,
      ...used,
    };
  }

  async updateItem(args: ArgsOf<ItemStore["updateItem"]>): Promise<ItemRecord> {
    const { vaultId, actorId, itemId, write, limits, history, now, events } = args;
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const locked = await this.lockForItems(trx, vaultId, actorId, "update");
      const { keyVersion } = locked;
      const row = await itemRow(trx, vaultId, itemId);
      const d = itemRules.decideItemUpdate(itemRules.snapshotOf(locked, row && rowState(row)), itemId, write);
      const { firm } = locked.sizesAtLock;
      if (d.growth) decideVaultGrowth(firm, d.growth, limits);
      await this.logStep(trx, locked, args, d.change);
      const updated: ItemsTable = {
        ...row!,
        encrypted_data: write.encryptedData,
        encrypted_name: write.encryptedName,
        revision: d.revision,
        key_version: keyVersion,
        updated_at: now,
      };
      const res = await trx
        .updateTable("items")
        .set({
          encrypted_data: updated.encrypted_data,
          encrypted_name: updated.encrypted_name,
          revision: updated.revision,
          key_version: keyVersion,
          updated_at: now,
        })
        .where("vault_id", "=", vaultId)
        .where("item_id", "=", itemId)
        .where("revision", "=", row!.revision)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw itemChangedMeanwhile();
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
      const locked = await this.lockForItems(trx, vaultId, actorId, "update");
      const row = await itemRow(trx, vaultId, itemId);
      await this.logStep(trx, locked, args, itemRules.decideItemDelete(itemRules.snapshotOf(locked, row && rowState(row)), itemId));
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
      const locked = await this.lockForItems(trx, vaultId, actorId, "update");
      const trashed = await trashRow(trx, vaultId, itemId);
      const d = decideItemRestore({ role: locked.role, trashed: trashed && rowState(trashed) }, itemId);
      await this.logStep(trx, locked, args, d.change);
      const { deleted_at: _at, deleted_by: _by, ...item } = trashed!;
      const row: ItemsTable = { ...item, revision: d.revision, updated_at: now };
      await trx.deleteFrom("item_trash").where("vault_id", "=", vaultId).where("item_id", "=", itemId).execute();
      await this.c.engine.insertItems(trx, [row], events);
      return toItem(row);
    });
  }

  async purgeItem({ vaultId, actorId, itemId, events }: ArgsOf<ItemStore["purgeItem"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const locked = await this.lockForItems(trx, vaultId, actorId, "update");
      decideTrashPurge({ role: locked.role, trashed: (await trashRow(trx, vaultId, itemId)) !== undefined });
      await trx.deleteFrom("item_trash").where("vault_id", "=", vaultId).where("item_id", "=", itemId).execute();
      await trx.deleteFrom("item_revisions").where("vault_id", "=", vaultId).where("item_id", "=", itemId).execute();
    });
  }

  async importItems(args: ArgsOf<ItemStore["importItems"]>): Promise<{ created: number }> {
    const { vaultId, actorId, items, keyVersion: stated, limits, now, events } = args;
    return this.c.tx(async (trx) => {
      const locked = await this.lockForItems(trx, vaultId, actorId, "update");
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
        await this.logStep(trx, locked, args, { op: "import", count: set.size, setDigest: itemSetDigestOf(set), added: items.length });
      }
      // The history is as locked: inserts do not change it.
      await makeRoom(trx, vaultId, limits, { items: firm.items + d.growth.items, bytes: firm.bytes + d.growth.bytes }, history);
      return { created: rows.length };
    });
  }

  async recordExport({ vaultId, actorId, events }: ArgsOf<ItemStore["recordExport"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await this.lockForItems(trx, vaultId, actorId, "share");
      await writeOutbox(trx, events);
    });
  }

  async appendCheckpoint(args: ArgsOf<ItemStore["appendCheckpoint"]>): Promise<void> {
    const { vaultId, actorId } = args;
    await this.c.tx(async (trx) => {
      const locked = await this.lockForItems(trx, vaultId, actorId, "update");
      const set = await this.itemSet(trx, vaultId);
      await this.logStep(trx, locked, args, { op: "checkpoint", count: set.size, setDigest: itemSetDigestOf(set) });
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
