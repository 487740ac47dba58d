/**
 * A vault's item creates, grouped on SQL: the first create of a quiet moment runs alone, at once;
 * creates that arrive while one runs wait, and run as the next group under one lock, one insert
 * and one commit (lib/domain/items/creates.ts decides each). Design: docs/design/grouped-creates.md.
 */
import type { DomainEvent } from "../../domain/audit/events";
import type { UserId, VaultId } from "../../domain/ids";
import { decideGroupedCreates, planItemCreate, type LockedForCreates } from "../../domain/items/creates";
import type { VaultRole } from "../../domain/types";
import { itemBytes } from "../../domain/vaults/limits";
import { AppError } from "../../errors";
import type { ArgsOf, ItemRecord, ItemStore } from "../port";
import { appendItemLink, itemLogHead, rosterHeadOf, type Db, type LockedVault, type SqlContext } from "./context";
import { KeyedGroups } from "./groups";
import { makeRoom, sizesOfRow, toItem } from "./item-history";
import { ACTOR, lockForItems, newItemRow, usedIds } from "./item-rows";
import type { ItemsTable } from "./schema";

type CreateArgs = ArgsOf<ItemStore["createItem"]>;
/** Creates of one vault stored together at most (KeyedGroups): every one of them waits for the group's commit. */
const GROUP_MAX_CREATES = 100;

export class GroupedCreates {
  constructor(private readonly c: SqlContext) {}

  submit(args: CreateArgs): Promise<ItemRecord> {
    return this.groups.submit(args.vaultId, args);
  }

  private readonly groups = new KeyedGroups<CreateArgs, ItemRecord>(
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
      const locked = await lockForItems(this.c, trx, vaultId, actorId, "update", itemId);
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
}
