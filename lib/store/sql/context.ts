/**
 * What every SQL aggregate file shares: the database handle, the engine's differences
 * (`EngineOps`, implemented in sqlite.ts and postgres.ts and nowhere else), transactions, and the
 * vault lock with the snapshot the domain decides on.
 */
import type { UserId, VaultId } from "../../domain/ids";
import type { CompiledQuery, Kysely, Transaction } from "kysely";
import { AppError } from "../../errors";
import { alreadyExists } from "../../domain/refusals";
import { decideNewUserFree } from "../../domain/store-checks";
import type { MemberState, VaultSnapshot } from "../../domain/vaults/decisions";
import type { PoolUsage } from "../port";
import type { Database, ItemsTable, VaultsTable } from "./schema";
import type { DomainEvent } from "../../domain/audit/events";
import type { ItemId } from "../../domain/ids";
import { writeOutbox } from "./outbox";
import type { ItemLogEntry, ItemLogHead } from "../../domain/items/log";
import { param, prepared } from "./prepared";
import type { ChunkFiles } from "./attachment-files";

export type Db = Kysely<Database> | Transaction<Database>;

/** The vault row's columns the locking read returns. */
export const LOCKED_VAULT_COLUMNS = [
  "org_id",
  "type",
  "name",
  "key_version",
  "rekey_required",
  "roster_seq",
  "roster_hash",
  "item_seq",
  "item_hash",
  "item_base_seq",
  "item_roster_seq",
  // The sizes the item writes check their limits against (migration 017's triggers keep them):
  // read with the lock, not in a statement of their own.
  "firm_items",
  "firm_bytes",
  "history_items",
  "history_bytes",
] as const;
export type LockedVault = Pick<VaultsTable, (typeof LOCKED_VAULT_COLUMNS)[number]>;

/** The vault row as the item writes decide on it, by a `vaultId` param: what each engine's `lockVault` prepares. */
export const lockedVaultRow = (db: Db) =>
  db.selectFrom("vaults").select(LOCKED_VAULT_COLUMNS).where("vault_id", "=", param<VaultId>("vaultId"));

/** An item of a rekey, re-encrypted. */
export interface RekeyedItem {
  itemId: string;
  encryptedData: string;
  encryptedName: string;
}

/** What differs between the engines. */
export interface EngineOps {
  name: "sqlite" | "postgres";
  /** Takes the vault row's lock for the rest of the transaction (exclusive or shared). */
  lockVault(trx: Db, vaultId: VaultId, mode: "update" | "share"): Promise<LockedVault | undefined>;
  /**
   * `query`, taking for the rest of the transaction the lock of the rows it reads (exclusive or
   * shared) where the engine has row locks (PostgreSQL); on SQLite, as it is (the single connection
   * serializes every transaction already).
   */
  rowLock<Q extends { forUpdate(): Q; forShare(): Q }>(query: Q, mode: "update" | "share"): Q;
  /** Serializes registrations, so "the first user of the server" has one winner. */
  lockRegistrations(trx: Db): Promise<void>;
  /** Serializes, for the rest of the transaction, the transactions that take the lock of this name (a recovery request's address). */
  lockName(trx: Db, name: string): Promise<void>;
  isUniqueViolation(err: unknown): boolean;
  /** Rows per batched statement; bounded by the engine's parameter limit. */
  batchRows: number;
  /**
   * Writes a rekey's items, as the rekey's rules checked them under the lock: each row's new
   * ciphertexts, its revision plus one, the new key version. Throws if a row is not there.
   */
  rekeyItems(trx: Db, vaultId: VaultId, items: readonly RekeyedItem[], keyVersion: number, now: string): Promise<void>;
  /** One item's change (recordItemChanges): the vault's next change number, recorded against the item. */
  recordItemChange(trx: Db, vaultId: VaultId, itemId: string): Promise<void>;
  /**
   * New items' rows (a create, a group of creates, a restore, an import) of one vault, their
   * change record and the writes' events, in the caller's transaction under the vault's lock: on
   * PostgreSQL one statement for the usual one row and one event (one round trip where
   * `insertItemSteps` takes three).
   */
  insertItems(trx: Db, rows: readonly ItemsTable[], events: readonly DomainEvent[] | undefined): Promise<void>;
  /** Runs the migrations while holding a lock that keeps other processes starting at once out. */
  whileMigrating<T>(db: Kysely<Database>, migrate: () => Promise<T>): Promise<T>;
  /** The pool behind `db`, for an engine with one. */
  poolUsage(db: Kysely<Database>): PoolUsage | undefined;
  /** Runs a compiled read with new values, outside a transaction (on PostgreSQL, a named statement: prepared.ts). */
  runPrepared<R>(db: Kysely<Database>, compiled: CompiledQuery<R>, values: unknown[]): Promise<R[]>;
  /** A consistent copy of the database into `file`, where the engine makes one (SQLite). */
  backupTo(db: Kysely<Database>, file: string): Promise<void>;
  /** Runs a transaction (`run`) and answers once it is durable (SQLite's group commit; as it is elsewhere). */
  durably<T>(db: Kysely<Database>, run: () => Promise<T>): Promise<T>;
}

export class SqlContext {
  constructor(
    readonly db: Kysely<Database>,
    readonly engine: EngineOps,
    /** Where attachment chunks are files (the embedded store); absent: in their rows (attachments.ts). */
    readonly chunks?: ChunkFiles,
  ) {}

  /**
   * Runs `fn` in a transaction; a unique-key race becomes `409 CONFLICT`, never a 5xx. Answers
   * once the transaction is durable (on SQLite, once its group has committed: sqlite.ts).
   */
  async tx<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    try {
      return await this.engine.durably(this.db, () => this.db.transaction().execute(fn));
    } catch (err) {
      if (!(err instanceof AppError) && this.engine.isUniqueViolation(err)) throw alreadyExists();
      throw err;
    }
  }

  /** Locks the vault and reads what the decisions need: the vault and its members with their keys. */
  async snapshot(trx: Db, vaultId: VaultId, mode: "update" | "share" = "update"): Promise<VaultSnapshot | null> {
    const vault = await this.engine.lockVault(trx, vaultId, mode);
    if (!vault) return null;
    const members = await trx
      .selectFrom("vault_members as m")
      .innerJoin("users as u", "u.user_id", "m.user_id")
      .select(["m.user_id", "m.role", "u.public_key", "u.signing_public_key", "u.removed_at"])
      .where("m.vault_id", "=", vaultId)
      .execute();
    return {
      vault: {
        vaultId,
        orgId: vault.org_id,
        type: vault.type,
        name: vault.name,
        keyVersion: Number(vault.key_version),
        rekeyRequired: Number(vault.rekey_required) === 1,
        roster: rosterHeadOf(vault),
        itemLog: itemLogHead(vaultId, vault),
      },
      members: members.map((m): MemberState => ({
        userId: m.user_id,
        role: m.role,
        publicKey: m.public_key,
        signingPublicKey: m.signing_public_key,
        ...(m.removed_at !== null && { removed: true }),
      })),
    };
  }

  /** 409 when a user with the email exists (registration, and an invite to a taken address). */
  async assertEmailFree(db: Db, email: string): Promise<void> {
    const taken = await db.selectFrom("users").select("user_id").where("email", "=", email).executeTakeFirst();
    decideNewUserFree({ email: !!taken });
  }

  /** 409 when the email is taken, or the user id, which is derived from the signing key (ids.ts, `userIdForKey`): a key already registered. */
  async assertNewUserFree(db: Db, user: { email: string; userId: UserId }): Promise<void> {
    await this.assertEmailFree(db, user.email);
    const taken = await db.selectFrom("users").select("user_id").where("user_id", "=", user.userId).executeTakeFirst();
    decideNewUserFree({ email: false, signingKey: !!taken });
  }
}

/** The vault row's roster head, or null for a vault without a signed roster. */
export function rosterHeadOf(v: Pick<VaultsTable, "roster_seq" | "roster_hash">): { seq: number; hash: string } | null {
  return v.roster_seq === null || v.roster_hash === null ? null : { seq: Number(v.roster_seq), hash: v.roster_hash };
}

/** The vault row's item-log head, or null for a vault without a log. */
export function itemLogHead(vaultId: VaultId, v: LockedVault): ItemLogHead | null {
  if (v.item_seq === null || v.item_hash === null) return null;
  return {
    vaultId,
    seq: Number(v.item_seq),
    head: v.item_hash,
    keyVersion: Number(v.key_version),
    baseSeq: Number(v.item_base_seq),
    rosterSeq: Number(v.item_roster_seq),
  };
}

/** Stores a checked item link and moves the vault's head to it, in the write's transaction. */
export async function appendItemLink(trx: Db, vaultId: VaultId, entry: ItemLogEntry, now: string): Promise<void> {
  await trx.insertInto("item_links").values({ vault_id: vaultId, seq: entry.head.seq, link: entry.json, created_at: now }).execute();
  await trx
    .updateTable("vaults")
    .set({ item_seq: entry.head.seq, item_hash: entry.head.head, item_base_seq: entry.head.baseSeq, item_roster_seq: entry.head.rosterSeq })
    .where("vault_id", "=", vaultId)
    .execute();
}

/** The vault's next change number (prepared.ts: the item writes' hot path). */
export const NEXT_CHANGE = prepared("next_change", (db) =>
  db
    .updateTable("vaults")
    .set((eb) => ({ change_seq: eb("change_seq", "+", 1) }))
    .where("vault_id", "=", param<VaultId>("vaultId"))
    .returning("change_seq as seq"),
);
/** The same, marked as the vault's reset (a rekey). */
const NEXT_RESET = prepared("next_reset", (db) =>
  db
    .updateTable("vaults")
    .set((eb) => ({ change_seq: eb("change_seq", "+", 1), reset_seq: eb("change_seq", "+", 1) }))
    .where("vault_id", "=", param<VaultId>("vaultId"))
    .returning("change_seq as seq"),
);
/** One item's change record: what a single item write leaves. */
export const ONE_CHANGE = prepared("one_change", (db) =>
  db
    .insertInto("item_changes")
    .values({ vault_id: param<VaultId>("vaultId"), item_id: param<string>("itemId"), seq: param<number>("seq") })
    .onConflict((oc) => oc.columns(["vault_id", "item_id"]).doUpdateSet((eb) => ({ seq: eb.ref("excluded.seq") }))),
);

export function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** A new item's row (prepared.ts). */
export const INSERT_ITEM = prepared("insert_item", (db) =>
  db.insertInto("items").values({
    item_id: param<ItemId>("item_id"),
    vault_id: param<VaultId>("vault_id"),
    encrypted_data: param<string>("encrypted_data"),
    encrypted_name: param<string>("encrypted_name"),
    revision: param<number>("revision"),
    key_version: param<number>("key_version"),
    created_at: param<string>("created_at"),
    updated_at: param<string>("updated_at"),
  }),
);

/** `EngineOps.insertItems` one statement after the other: the events, the rows, their change record. */
export async function insertItemSteps(
  engine: EngineOps,
  trx: Db,
  rows: readonly ItemsTable[],
  events: readonly DomainEvent[] | undefined,
): Promise<void> {
  await writeOutbox(trx, events);
  const vaultId = rows[0]?.vault_id;
  if (vaultId === undefined) return;
  if (rows.length === 1) await INSERT_ITEM.run(trx, { ...rows[0]! });
  else for (const chunk of chunks(rows, engine.batchRows)) await trx.insertInto("items").values(chunk).execute();
  await recordItemChanges(engine, trx, vaultId, { itemIds: rows.map((r) => r.item_id) });
}

/**
 * Gives the item changes of a write their number (lib/domain/items/changes.ts), in the write's
 * transaction and under its exclusive vault lock: the vault's next change number, recorded against
 * each item touched; or, for a rekey (`reset`), marked as the vault's reset, which makes every
 * earlier change record moot.
 */
export async function recordItemChanges(
  engine: EngineOps,
  trx: Db,
  vaultId: VaultId,
  change: { itemIds: readonly string[] } | "reset",
): Promise<void> {
  // One item (every single-item write): as the engine does it best.
  if (change !== "reset" && change.itemIds.length === 1) return engine.recordItemChange(trx, vaultId, change.itemIds[0]!);
  const [next] = (await (change === "reset" ? NEXT_RESET : NEXT_CHANGE).run(trx, { vaultId })).rows;
  if (!next) throw new Error(`recordItemChanges: no vault ${vaultId}`);
  const seq = Number(next.seq);
  if (change === "reset") {
    await trx.deleteFrom("item_changes").where("vault_id", "=", vaultId).execute();
    return;
  }
  for (const chunk of chunks(change.itemIds, 500)) {
    await trx
      .insertInto("item_changes")
      .values(chunk.map((itemId) => ({ vault_id: vaultId, item_id: itemId, seq: Number(seq) })))
      .onConflict((oc) => oc.columns(["vault_id", "item_id"]).doUpdateSet({ seq: Number(seq) }))
      .execute();
  }
}
