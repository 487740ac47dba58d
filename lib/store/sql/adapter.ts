/**
 * The store port on SQL, one query layer (Kysely) over two engines: SQLite (embedded) and
 * PostgreSQL. Engine differences live in `EngineOps` and nowhere else.
 */
import { sql, type CompiledQuery, type Kysely, type Transaction } from "kysely";
import { Migrator } from "kysely/migration";
import { AppError, conflict, forbidden, invalid, notFound, notRedeemable } from "../../errors";
import { isRedeemable, PURGEABLE_INVITE_STATUSES, type Invite, type InviteStatus } from "../../domain/invites";
import { auditRecord, chainRecords, EMPTY_HEAD, eventsByOrg, type AuditHead, type AuditRecord } from "../../domain/audit";
import type { DomainEvent, DomainEventType } from "../../domain/events";
import type { GrantableRole, Kdf, OrgRole, VaultRole, VaultType } from "../../domain/types";
import {
  decideAddMember, decideAdoptRoster, decideRekey, decideRemoveMember, decideRoleChange, requireMember, requirePermission,
  type MemberState, type VaultSnapshot,
} from "../../domain/vault-decisions";
import { assertKeyVersion } from "../../domain/rekey";
import type { RosterEntry, RosterLink } from "../../domain/roster";
import type {
  AppendOutcome, ItemRecord, ItemWrite, MemberEntry, NewMember, NewUser, NewVault, OrgRecord, PoolUsage, PurgeCounts, RefreshOutcome,
  RefreshTokenRecord, RekeyInput, RevokeOutcome, Store, UserRecord, VaultView,
} from "../port";
import { migrationProvider } from "./migrations";
import type { AuditEventsTable, Database, InvitesTable, ItemsTable, UsersTable, VaultsTable } from "./schema";

type Db = Kysely<Database> | Transaction<Database>;

/** The vault row's columns the locking read returns. */
export const LOCKED_VAULT_COLUMNS = ["org_id", "type", "key_version", "rekey_required", "roster_seq", "roster_hash"] as const;
type LockedVault = Pick<VaultsTable, (typeof LOCKED_VAULT_COLUMNS)[number]>;

/** What differs between the engines. */
export interface EngineOps {
  name: "sqlite" | "postgres";
  /** Takes the vault row's lock for the rest of the transaction (exclusive or shared). */
  lockVault(trx: Db, vaultId: string, mode: "update" | "share"): Promise<LockedVault | undefined>;
  /** Serializes registrations, so "the first user of the server" has one winner. */
  lockRegistrations(trx: Db): Promise<void>;
  isUniqueViolation(err: unknown): boolean;
  /** Rows per batched statement; bounded by the engine's parameter limit. */
  batchRows: number;
  /** Runs the migrations while holding a lock that keeps other processes starting at once out. */
  whileMigrating<T>(db: Kysely<Database>, migrate: () => Promise<T>): Promise<T>;
  /** The pool behind `db`, for an engine with one. */
  poolUsage(db: Kysely<Database>): PoolUsage | undefined;
  /** Runs a compiled read with new values; `name` identifies it for engines that prepare statements once per connection. */
  runPrepared<R>(db: Kysely<Database>, name: string, compiled: CompiledQuery<R>, values: unknown[]): Promise<R[]>;
  /** A consistent copy of the database into `file`, where the engine makes one (SQLite). */
  backupTo(db: Kysely<Database>, file: string): Promise<void>;
}

const VAULT_VIEW_COLUMNS = [
  "v.vault_id", "v.name", "v.type", "v.org_id", "v.key_version", "v.rekey_required", "v.created_at", "v.updated_at",
  "m.encrypted_vault_key", "m.sender_id", "m.wrap_signature", "m.role",
] as const;

interface VaultViewRow {
  vault_id: string; name: string; type: string; org_id: string; key_version: number; rekey_required: number;
  created_at: string; updated_at: string; encrypted_vault_key: string; sender_id: string; wrap_signature: string; role: string;
}

function toVaultView(r: VaultViewRow): VaultView {
  return {
    vaultId: r.vault_id,
    vaultName: r.name,
    vaultType: r.type as VaultType,
    orgId: r.org_id,
    encryptedVaultKey: r.encrypted_vault_key,
    senderId: r.sender_id,
    wrapSignature: r.wrap_signature,
    role: r.role as VaultRole,
    keyVersion: Number(r.key_version),
    rekeyRequired: Number(r.rekey_required) === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toMemberEntry(r: VaultViewRow & { user_id: string }): MemberEntry {
  return {
    userId: r.user_id,
    vaultId: r.vault_id,
    vaultName: r.name,
    vaultType: r.type as VaultType,
    encryptedVaultKey: r.encrypted_vault_key,
    senderId: r.sender_id,
    wrapSignature: r.wrap_signature,
    role: r.role as VaultRole,
  };
}

function toUser(r: UsersTable): UserRecord {
  return {
    userId: r.user_id,
    orgId: r.org_id,
    email: r.email,
    role: r.org_role as OrgRole,
    authHash: r.auth_hash,
    kdf: JSON.parse(r.kdf) as Kdf,
    publicKey: r.public_key,
    signingPublicKey: r.signing_public_key,
    publicKeySignature: r.public_key_signature,
    encryptedPrivateKey: r.encrypted_private_key,
    encryptedSigningPrivateKey: r.encrypted_signing_private_key,
    createdAt: r.created_at,
  };
}

function toItem(r: ItemsTable): ItemRecord {
  return {
    itemId: r.item_id,
    vaultId: r.vault_id,
    encryptedData: r.encrypted_data,
    encryptedName: r.encrypted_name,
    revision: Number(r.revision),
    keyVersion: Number(r.key_version),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toInvite(r: InvitesTable): Invite {
  return {
    inviteId: r.invite_id,
    orgId: r.org_id,
    email: r.email,
    role: r.role as GrantableRole,
    inviterId: r.inviter_id,
    status: r.status as InviteStatus,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
  };
}

function toAuditRecord(r: AuditEventsTable): AuditRecord {
  return auditRecord({
    eventId: r.event_id, seq: Number(r.seq), type: r.type as DomainEventType, at: r.at, actorId: r.actor_id, orgId: r.org_id,
    vaultId: r.vault_id ?? undefined, itemId: r.item_id ?? undefined, targetUserId: r.target_user_id ?? undefined, inviteId: r.invite_id ?? undefined,
    prevHash: r.prev_hash, hash: r.hash,
  });
}

function auditRow(r: AuditRecord): AuditEventsTable {
  return {
    org_id: r.orgId, seq: r.seq, event_id: r.eventId, type: r.type, at: r.at, actor_id: r.actorId,
    vault_id: r.vaultId ?? null, item_id: r.itemId ?? null, target_user_id: r.targetUserId ?? null, invite_id: r.inviteId ?? null,
    prev_hash: r.prevHash, hash: r.hash,
  };
}

/** Rows a purge deletes per statement: short transactions, whatever the backlog. */
const PURGE_BATCH = 1_000;

function userRow(user: NewUser, orgId: string, role: OrgRole): UsersTable {
  return {
    user_id: user.userId,
    org_id: orgId,
    email: user.email,
    org_role: role,
    auth_hash: user.authHash,
    kdf: JSON.stringify(user.kdf),
    public_key: user.publicKey,
    signing_public_key: user.signingPublicKey,
    public_key_signature: user.publicKeySignature,
    encrypted_private_key: user.encryptedPrivateKey,
    encrypted_signing_private_key: user.encryptedSigningPrivateKey,
    created_at: user.createdAt,
  };
}

/**
 * A hot read compiled once, then run with new values: building and compiling a Kysely query
 * costs more than SQLite's answer for a handful of rows. The values are bound in the order of the
 * placeholders the query was built with. The engine runs it (`EngineOps.runPrepared`): SQLite
 * through Kysely and its statement cache, PostgreSQL as a named prepared statement.
 */
class PreparedRead<R> {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: EngineOps,
    private readonly name: string,
    private readonly compiled: CompiledQuery<R>,
    private readonly arity: number,
  ) {
    if (compiled.parameters.length !== arity) throw new Error(`PreparedRead: ${compiled.parameters.length} placeholders, ${arity} expected`);
  }

  async rows(...values: unknown[]): Promise<R[]> {
    if (values.length !== this.arity) throw new Error("PreparedRead: wrong number of values");
    return this.engine.runPrepared<R>(this.db, this.name, this.compiled, values);
  }
}

function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

export class SqlStore implements Store {
  private readonly vaultsOfUser: PreparedRead<VaultViewRow>;
  private readonly vaultOfUser: PreparedRead<VaultViewRow>;

  private constructor(private readonly db: Kysely<Database>, private readonly engine: EngineOps) {
    // Every authenticated vault request reads one of these two.
    this.vaultsOfUser = new PreparedRead(db, engine, "vaults_of_user", this.vaultViews(db).where("m.user_id", "=", "$userId")
      .orderBy("v.created_at").orderBy("v.vault_id").compile(), 1);
    this.vaultOfUser = new PreparedRead(db, engine, "vault_of_user", this.vaultViews(db).where("m.vault_id", "=", "$vaultId").where("m.user_id", "=", "$userId").compile(), 2);
  }

  /** Applies pending migrations, then serves. */
  static async open(db: Kysely<Database>, engine: EngineOps): Promise<SqlStore> {
    const { error } = await engine.whileMigrating(db, () => new Migrator({ db, provider: migrationProvider }).migrateToLatest());
    if (error) throw error;
    return new SqlStore(db, engine);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.db);
  }

  poolUsage(): PoolUsage | undefined {
    return this.engine.poolUsage(this.db);
  }

  backupTo(file: string): Promise<void> {
    return this.engine.backupTo(this.db, file);
  }

  /** Runs `fn` in a transaction; a unique-key race becomes `409 CONFLICT`, never a 5xx. */
  private async tx<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(fn);
    } catch (err) {
      if (!(err instanceof AppError) && this.engine.isUniqueViolation(err)) throw conflict("Already exists");
      throw err;
    }
  }

  // ---------------------------------------------------------------- users and organizations

  async registerOwnerOfNewOrg(user: NewUser, org: OrgRecord, opts: { onlyIfFirstUser: boolean }): Promise<UserRecord> {
    return this.tx(async (trx) => {
      await this.engine.lockRegistrations(trx);
      if (opts.onlyIfFirstUser && (await this.anyUser(trx))) throw forbidden("Registration needs an invite");
      await this.assertEmailFree(trx, user.email);
      await trx.insertInto("orgs").values({ org_id: org.orgId, name: org.name, created_at: org.createdAt }).execute();
      const row = userRow(user, org.orgId, "owner");
      await trx.insertInto("users").values(row).execute();
      return toUser(row);
    });
  }

  async registerWithInvite(user: NewUser, inviteId: string, now: string): Promise<UserRecord> {
    return this.tx(async (trx) => {
      await this.engine.lockRegistrations(trx);
      const invite = await trx.selectFrom("invites").selectAll().where("invite_id", "=", inviteId).executeTakeFirst();
      if (!invite) throw notFound("Invite");
      if (!isRedeemable({ status: invite.status as InviteStatus, expiresAt: invite.expires_at }, now)) {
        throw notRedeemable();
      }
      if (invite.email !== user.email) throw invalid("The email is not the invited one", "email");
      await this.assertEmailFree(trx, user.email);
      // Conditional: of any number of concurrent redemptions, exactly one moves pending -> used.
      const used = await trx.updateTable("invites").set({ status: "used", updated_at: now })
        .where("invite_id", "=", inviteId).where("status", "=", "pending").executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) throw notRedeemable();
      const row = userRow(user, invite.org_id, invite.role as OrgRole);
      await trx.insertInto("users").values(row).execute();
      return toUser(row);
    });
  }

  private async assertEmailFree(db: Db, email: string): Promise<void> {
    const taken = await db.selectFrom("users").select("user_id").where("email", "=", email).executeTakeFirst();
    if (taken) throw conflict("A user with this email already exists", "email");
  }

  async hasUsers(): Promise<boolean> {
    return this.anyUser(this.db);
  }

  private async anyUser(db: Db): Promise<boolean> {
    return !!(await db.selectFrom("users").select("user_id").limit(1).executeTakeFirst());
  }

  async findUserByEmail(email: string): Promise<UserRecord | null> {
    const row = await this.db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async findUserById(userId: string): Promise<UserRecord | null> {
    const row = await this.db.selectFrom("users").selectAll().where("user_id", "=", userId).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async getOrg(orgId: string): Promise<OrgRecord | null> {
    const row = await this.db.selectFrom("orgs").selectAll().where("org_id", "=", orgId).executeTakeFirst();
    return row ? { orgId: row.org_id, name: row.name, createdAt: row.created_at } : null;
  }

  async listOrgMembers(orgId: string): Promise<UserRecord[]> {
    const rows = await this.db.selectFrom("users").selectAll().where("org_id", "=", orgId)
      .orderBy("created_at").orderBy("user_id").execute();
    return rows.map(toUser);
  }

  // ---------------------------------------------------------------- refresh tokens

  async saveRefreshToken(t: RefreshTokenRecord): Promise<void> {
    await this.db.insertInto("refresh_tokens").values({
      token_hash: t.tokenHash, family_id: t.familyId, user_id: t.userId, status: "active", expires_at: t.expiresAt, created_at: t.createdAt,
    }).execute();
  }

  async rotateRefreshToken(oldHash: string, next: Pick<RefreshTokenRecord, "tokenHash" | "expiresAt" | "createdAt">, now: string): Promise<RefreshOutcome> {
    return this.tx(async (trx): Promise<RefreshOutcome> => {
      const old = await trx.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", oldHash).executeTakeFirst();
      if (!old) return { ok: false, reason: "unknown" };
      const rotated = old.status === "active"
        ? await trx.updateTable("refresh_tokens").set({ status: "used" })
          .where("token_hash", "=", oldHash).where("status", "=", "active").executeTakeFirst()
        : undefined;
      if (!rotated || Number(rotated.numUpdatedRows) !== 1) {
        // A used (or revoked) token presented again: whoever holds it, that login is over.
        await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", old.family_id).execute();
        return { ok: false, reason: "reused" };
      }
      if (old.expires_at <= now) return { ok: false, reason: "expired" };
      await trx.insertInto("refresh_tokens").values({
        token_hash: next.tokenHash, family_id: old.family_id, user_id: old.user_id, status: "active",
        expires_at: next.expiresAt, created_at: next.createdAt,
      }).execute();
      return { ok: true, userId: old.user_id };
    });
  }

  async revokeRefreshFamily(tokenHash: string, userId: string): Promise<void> {
    const token = await this.db.selectFrom("refresh_tokens").select("family_id")
      .where("token_hash", "=", tokenHash).where("user_id", "=", userId).executeTakeFirst();
    if (token) await this.db.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", token.family_id).execute();
  }

  // ---------------------------------------------------------------- vaults

  private vaultViews(db: Db) {
    return db.selectFrom("vault_members as m").innerJoin("vaults as v", "v.vault_id", "m.vault_id").select(VAULT_VIEW_COLUMNS);
  }

  async listVaults(userId: string): Promise<VaultView[]> {
    return (await this.vaultsOfUser.rows(userId)).map(toVaultView);
  }

  async getVault(vaultId: string, userId: string): Promise<VaultView | null> {
    const [row] = await this.vaultOfUser.rows(vaultId, userId);
    return row ? toVaultView(row) : null;
  }

  private async vaultViewOrFail(db: Db, vaultId: string, userId: string): Promise<VaultView> {
    const row = await this.vaultViews(db).where("m.vault_id", "=", vaultId).where("m.user_id", "=", userId).executeTakeFirst();
    if (!row) throw notFound("Vault");
    return toVaultView(row);
  }

  async createVault(v: NewVault, now: string): Promise<VaultView> {
    return this.tx(async (trx) => {
      await trx.insertInto("vaults").values({
        vault_id: v.vaultId, org_id: v.orgId, name: v.name, type: v.type, key_version: 1, rekey_required: 0, created_at: now, updated_at: now,
        roster_seq: null, roster_hash: null,
      }).execute();
      if (v.roster) await this.appendRosterLink(trx, v.vaultId, v.roster, now);
      await trx.insertInto("vault_members").values({
        vault_id: v.vaultId, user_id: v.ownerId, role: "owner", encrypted_vault_key: v.encryptedVaultKey,
        sender_id: v.ownerId, wrap_signature: v.wrapSignature, created_at: now, updated_at: now,
      }).execute();
      return this.vaultViewOrFail(trx, v.vaultId, v.ownerId);
    });
  }

  /** Locks the vault and reads what the decisions need: the vault and its members with their keys. */
  private async snapshot(trx: Db, vaultId: string, mode: "update" | "share" = "update"): Promise<VaultSnapshot | null> {
    const vault = await this.engine.lockVault(trx, vaultId, mode);
    if (!vault) return null;
    const members = await trx.selectFrom("vault_members as m").innerJoin("users as u", "u.user_id", "m.user_id")
      .select(["m.user_id", "m.role", "u.public_key", "u.signing_public_key"]).where("m.vault_id", "=", vaultId).execute();
    return {
      vault: {
        vaultId, orgId: vault.org_id, type: vault.type as VaultType, keyVersion: Number(vault.key_version), rekeyRequired: Number(vault.rekey_required) === 1,
        roster: vault.roster_seq === null || vault.roster_hash === null ? null : { seq: Number(vault.roster_seq), hash: vault.roster_hash },
      },
      members: members.map((m): MemberState => ({ userId: m.user_id, role: m.role as VaultRole, publicKey: m.public_key, signingPublicKey: m.signing_public_key })),
    };
  }

  /** Locks the vault (shared: item writes may run side by side, never beside a rekey) and checks the caller's membership. */
  private async lockForItems(trx: Db, vaultId: string, actorId: string): Promise<{ keyVersion: number }> {
    const vault = await this.engine.lockVault(trx, vaultId, "share");
    const member = vault && await trx.selectFrom("vault_members").select("role")
      .where("vault_id", "=", vaultId).where("user_id", "=", actorId).executeTakeFirst();
    if (!vault || !member) throw notFound("Vault");
    return { keyVersion: Number(vault.key_version) };
  }

  async renameVault(vaultId: string, actorId: string, name: string, now: string): Promise<VaultView> {
    return this.tx(async (trx) => {
      requirePermission(await this.snapshot(trx, vaultId), actorId, "rename");
      await trx.updateTable("vaults").set({ name, updated_at: now }).where("vault_id", "=", vaultId).execute();
      return this.vaultViewOrFail(trx, vaultId, actorId);
    });
  }

  async deleteVault(vaultId: string, actorId: string): Promise<void> {
    await this.tx(async (trx) => {
      requirePermission(await this.snapshot(trx, vaultId), actorId, "delete");
      await trx.deleteFrom("items").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("roster_links").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("vault_members").where("vault_id", "=", vaultId).execute();
      await trx.deleteFrom("vaults").where("vault_id", "=", vaultId).execute();
    });
  }

  // ---------------------------------------------------------------- members

  private async memberEntries(db: Db, vaultId: string): Promise<MemberEntry[]> {
    const rows = await db.selectFrom("vault_members as m").innerJoin("vaults as v", "v.vault_id", "m.vault_id")
      .select([...VAULT_VIEW_COLUMNS, "m.user_id"]).where("m.vault_id", "=", vaultId)
      .orderBy("m.created_at").orderBy("m.user_id").execute();
    return rows.map(toMemberEntry);
  }

  async listMembers(vaultId: string, actorId: string): Promise<MemberEntry[] | null> {
    const entries = await this.memberEntries(this.db, vaultId);
    return entries.some((e) => e.userId === actorId) ? entries : null;
  }

  async addMember(vaultId: string, actorId: string, member: NewMember, now: string): Promise<void> {
    await this.tx(async (trx) => {
      const snap = await this.snapshot(trx, vaultId);
      requireMember(snap, actorId);
      const recipient = await trx.selectFrom("users").select(["user_id", "org_id", "public_key", "signing_public_key"])
        .where("user_id", "=", member.userId).executeTakeFirst();
      const roster = decideAddMember(snap, actorId, recipient
        ? { userId: recipient.user_id, orgId: recipient.org_id, publicKey: recipient.public_key, signingPublicKey: recipient.signing_public_key }
        : null, member);
      await trx.insertInto("vault_members").values({
        vault_id: vaultId, user_id: member.userId, role: member.role, encrypted_vault_key: member.encryptedVaultKey,
        sender_id: actorId, wrap_signature: member.wrapSignature, created_at: now, updated_at: now,
      }).execute();
      await trx.updateTable("vaults").set({ updated_at: now }).where("vault_id", "=", vaultId).execute();
      if (roster) await this.appendRosterLink(trx, vaultId, roster, now);
    });
  }

  async changeMemberRole(vaultId: string, actorId: string, targetId: string, role: VaultRole, now: string, rosterLink?: RosterLink): Promise<MemberEntry> {
    return this.tx(async (trx) => {
      const roster = decideRoleChange(await this.snapshot(trx, vaultId), actorId, targetId, role, rosterLink);
      await trx.updateTable("vault_members").set({ role, updated_at: now })
        .where("vault_id", "=", vaultId).where("user_id", "=", targetId).execute();
      if (roster) await this.appendRosterLink(trx, vaultId, roster, now);
      return (await this.memberEntries(trx, vaultId)).find((e) => e.userId === targetId)!;
    });
  }

  async removeMember(vaultId: string, actorId: string, targetId: string, now: string, rosterLink?: RosterLink) {
    return this.tx(async (trx) => {
      const { rekeyRequired, roster } = decideRemoveMember(await this.snapshot(trx, vaultId), actorId, targetId, rosterLink);
      if (roster) await this.appendRosterLink(trx, vaultId, roster, now);
      await trx.deleteFrom("vault_members").where("vault_id", "=", vaultId).where("user_id", "=", targetId).execute();
      await trx.updateTable("vaults")
        .set(rekeyRequired ? { rekey_required: 1, updated_at: now } : { updated_at: now })
        .where("vault_id", "=", vaultId).execute();
      return { rekeyRequired, remainingMembers: await this.memberEntries(trx, vaultId) };
    });
  }

  // ---------------------------------------------------------------- rekey

  async rekeyVault(vaultId: string, actorId: string, input: RekeyInput, now: string): Promise<void> {
    await this.tx(async (trx) => {
      const snap = await this.snapshot(trx, vaultId);
      requireMember(snap, actorId);
      const current = await trx.selectFrom("items").select(["item_id", "revision"]).where("vault_id", "=", vaultId).execute();
      const roster = decideRekey(snap, actorId, new Map(current.map((r) => [r.item_id, Number(r.revision)])), input);
      const keyVersion = snap!.vault.keyVersion + 1;
      if (roster) await this.appendRosterLink(trx, vaultId, roster, now);

      // Batched: one statement per chunk of rows, not one per row.
      for (const chunk of chunks(input.newKeys, this.engine.batchRows)) {
        const values = sql.join(chunk.map((k) => sql`(${k.userId}, ${k.encryptedVaultKey}, ${k.wrapSignature})`));
        const res = await sql`UPDATE vault_members SET encrypted_vault_key = v.column2, wrap_signature = v.column3,
            sender_id = ${actorId}, updated_at = ${now}
          FROM (VALUES ${values}) AS v WHERE vault_members.vault_id = ${vaultId} AND vault_members.user_id = v.column1`.execute(trx);
        if (Number(res.numAffectedRows) !== chunk.length) throw new Error("rekey: member rows changed under the lock");
      }
      for (const chunk of chunks(input.items, this.engine.batchRows)) {
        const values = sql.join(chunk.map((i) => sql`(${i.itemId}, ${i.encryptedData}, ${i.encryptedName})`));
        const res = await sql`UPDATE items SET encrypted_data = v.column2, encrypted_name = v.column3,
            revision = items.revision + 1, key_version = ${keyVersion}, updated_at = ${now}
          FROM (VALUES ${values}) AS v WHERE items.vault_id = ${vaultId} AND items.item_id = v.column1`.execute(trx);
        if (Number(res.numAffectedRows) !== chunk.length) throw new Error("rekey: item rows changed under the lock");
      }
      await trx.updateTable("vaults").set({ key_version: keyVersion, rekey_required: 0, updated_at: now })
        .where("vault_id", "=", vaultId).execute();
    });
  }

  // ---------------------------------------------------------------- signed roster

  /** Stores a checked link and makes it the vault's head, in the caller's transaction. */
  private async appendRosterLink(trx: Db, vaultId: string, entry: RosterEntry, now: string): Promise<void> {
    await trx.insertInto("roster_links").values({ vault_id: vaultId, seq: entry.seq, hash: entry.hash, link: entry.json, created_at: now }).execute();
    await trx.updateTable("vaults").set({ roster_seq: entry.seq, roster_hash: entry.hash }).where("vault_id", "=", vaultId).execute();
  }

  async adoptRoster(vaultId: string, actorId: string, link: RosterLink, now: string): Promise<void> {
    await this.tx(async (trx) => {
      const snap = await this.snapshot(trx, vaultId);
      requireMember(snap, actorId);
      const wraps = await trx.selectFrom("vault_members").select(["user_id", "encrypted_vault_key"]).where("vault_id", "=", vaultId).execute();
      const entry = decideAdoptRoster(snap, actorId, wraps.map((w) => ({ userId: w.user_id, encryptedVaultKey: w.encrypted_vault_key })), link);
      await this.appendRosterLink(trx, vaultId, entry, now);
    });
  }

  async getRoster(vaultId: string, actorId: string): Promise<RosterLink[] | null> {
    return this.tx(async (trx) => {
      const member = await trx.selectFrom("vault_members").select("role").where("vault_id", "=", vaultId).where("user_id", "=", actorId).executeTakeFirst();
      if (!member) return null;
      const rows = await trx.selectFrom("roster_links").select("link").where("vault_id", "=", vaultId).orderBy("seq").execute();
      return rows.map((r) => JSON.parse(r.link) as RosterLink);
    });
  }

  // ---------------------------------------------------------------- items

  async listItems(vaultId: string, actorId: string): Promise<ItemRecord[] | null> {
    if (!(await this.getVault(vaultId, actorId))) return null;
    const rows = await this.db.selectFrom("items").selectAll().where("vault_id", "=", vaultId)
      .orderBy("created_at").orderBy("item_id").execute();
    return rows.map(toItem);
  }

  async getItem(vaultId: string, actorId: string, itemId: string): Promise<ItemRecord> {
    if (!(await this.getVault(vaultId, actorId))) throw notFound("Vault");
    const row = await this.db.selectFrom("items").selectAll().where("vault_id", "=", vaultId).where("item_id", "=", itemId).executeTakeFirst();
    if (!row) throw notFound("Item");
    return toItem(row);
  }

  async createItem(vaultId: string, actorId: string, itemId: string, write: ItemWrite, now: string): Promise<ItemRecord> {
    return this.tx(async (trx) => {
      const { keyVersion } = await this.lockForItems(trx, vaultId, actorId);
      assertKeyVersion(keyVersion, write.keyVersion);
      const taken = await trx.selectFrom("items").select("item_id").where("vault_id", "=", vaultId).where("item_id", "=", itemId).executeTakeFirst();
      if (taken) throw conflict("An item with this itemId already exists", "itemId");
      const row: ItemsTable = {
        item_id: itemId, vault_id: vaultId, encrypted_data: write.encryptedData, encrypted_name: write.encryptedName,
        revision: 1, key_version: keyVersion, created_at: now, updated_at: now,
      };
      await trx.insertInto("items").values(row).execute();
      return toItem(row);
    });
  }

  async updateItem(vaultId: string, actorId: string, itemId: string, write: ItemWrite & { revision?: number }, now: string): Promise<ItemRecord> {
    return this.tx(async (trx) => {
      const { keyVersion } = await this.lockForItems(trx, vaultId, actorId);
      const row = await trx.selectFrom("items").selectAll().where("vault_id", "=", vaultId).where("item_id", "=", itemId).executeTakeFirst();
      if (!row) throw notFound("Item");
      if (write.revision !== undefined && write.revision !== Number(row.revision)) {
        throw conflict(`The item's revision is ${row.revision}, not ${write.revision}`, "revision");
      }
      assertKeyVersion(keyVersion, write.keyVersion);
      const updated: ItemsTable = {
        ...row, encrypted_data: write.encryptedData, encrypted_name: write.encryptedName,
        revision: Number(row.revision) + 1, key_version: keyVersion, updated_at: now,
      };
      const res = await trx.updateTable("items")
        .set({ encrypted_data: updated.encrypted_data, encrypted_name: updated.encrypted_name, revision: updated.revision, key_version: keyVersion, updated_at: now })
        .where("vault_id", "=", vaultId).where("item_id", "=", itemId).where("revision", "=", row.revision).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw conflict("The item changed meanwhile", "revision");
      return toItem(updated);
    });
  }

  async deleteItem(vaultId: string, actorId: string, itemId: string): Promise<void> {
    await this.tx(async (trx) => {
      await this.lockForItems(trx, vaultId, actorId);
      const res = await trx.deleteFrom("items").where("vault_id", "=", vaultId).where("item_id", "=", itemId).executeTakeFirst();
      if (Number(res.numDeletedRows) !== 1) throw notFound("Item");
    });
  }

  // ---------------------------------------------------------------- invites

  async createInvite(invite: Invite, tokenHash: string): Promise<void> {
    await this.tx(async (trx) => {
      await this.assertEmailFree(trx, invite.email);
      await trx.insertInto("invites").values({
        invite_id: invite.inviteId, org_id: invite.orgId, email: invite.email, role: invite.role, inviter_id: invite.inviterId,
        token_hash: tokenHash, status: invite.status, expires_at: invite.expiresAt, created_at: invite.createdAt, updated_at: invite.createdAt,
      }).execute();
    });
  }

  async listPendingInvites(orgId: string, now: string): Promise<Invite[]> {
    const rows = await this.db.selectFrom("invites").selectAll()
      .where("org_id", "=", orgId).where("status", "=", "pending").where("expires_at", ">", now)
      .orderBy("created_at", "desc").orderBy("invite_id", "desc").execute();
    return rows.map(toInvite);
  }

  async findInviteByTokenHash(tokenHash: string): Promise<Invite | null> {
    const row = await this.db.selectFrom("invites").selectAll().where("token_hash", "=", tokenHash).executeTakeFirst();
    return row ? toInvite(row) : null;
  }

  async getInvite(inviteId: string): Promise<Invite | null> {
    const row = await this.db.selectFrom("invites").selectAll().where("invite_id", "=", inviteId).executeTakeFirst();
    return row ? toInvite(row) : null;
  }

  async revokeInvite(inviteId: string, orgId: string, now: string): Promise<RevokeOutcome> {
    return this.tx(async (trx) => {
      const row = await trx.selectFrom("invites").select("status").where("invite_id", "=", inviteId).where("org_id", "=", orgId).executeTakeFirst();
      if (!row) return "not-found";
      // Conditional: of concurrent revokes, exactly one sees the change.
      const res = await trx.updateTable("invites").set({ status: "revoked", updated_at: now })
        .where("invite_id", "=", inviteId).where("status", "=", "pending").executeTakeFirst();
      return Number(res.numUpdatedRows) === 1 ? "revoked" : "not-pending";
    });
  }

  // ---------------------------------------------------------------- audit log

  async appendAuditEvents(events: DomainEvent[]): Promise<AppendOutcome> {
    if (events.length === 0) return { appended: 0, alreadyRecorded: 0 };
    const byOrg = eventsByOrg(events);
    return this.tx(async (trx) => {
      // Heads first, in a fixed order (no deadlock between workers); then, under their locks, the
      // check for events already recorded: a worker racing on the same event waits, then skips it.
      const heads = new Map<string, AuditHead>();
      for (const orgId of [...byOrg.keys()].sort()) {
        // One statement creates the head or, when it exists, locks its row (a no-op update) and reads it.
        const head = await trx.insertInto("audit_heads").values({ org_id: orgId, seq: EMPTY_HEAD.seq, hash: EMPTY_HEAD.hash })
          .onConflict((oc) => oc.column("org_id").doUpdateSet({ seq: (eb) => eb.ref("audit_heads.seq") }))
          .returning(["seq", "hash"]).executeTakeFirstOrThrow();
        heads.set(orgId, { seq: Number(head.seq), hash: head.hash });
      }
      const recorded = new Set<string>();
      for (const chunk of chunks(events.map((e) => e.eventId), this.engine.batchRows)) {
        const rows = await trx.selectFrom("audit_events").select("event_id").where("event_id", "in", chunk).execute();
        for (const r of rows) recorded.add(r.event_id);
      }
      let appended = 0;
      for (const [orgId, orgEvents] of byOrg) {
        const records = chainRecords(heads.get(orgId)!, orgEvents, recorded);
        if (records.length === 0) continue;
        for (const chunk of chunks(records, 100)) await trx.insertInto("audit_events").values(chunk.map(auditRow)).execute();
        const head = records[records.length - 1]!;
        await trx.updateTable("audit_heads").set({ seq: head.seq, hash: head.hash }).where("org_id", "=", orgId).execute();
        appended += records.length;
      }
      return { appended, alreadyRecorded: events.length - appended };
    });
  }

  async listAuditRecords(orgId: string, limit: number, before?: number): Promise<AuditRecord[]> {
    let q = this.db.selectFrom("audit_events").selectAll().where("org_id", "=", orgId);
    if (before !== undefined) q = q.where("seq", "<", before);
    return (await q.orderBy("seq", "desc").limit(limit).execute()).map(toAuditRecord);
  }

  async readAuditChain(orgId: string, afterSeq: number, upToSeq: number, limit: number): Promise<AuditRecord[]> {
    const rows = await this.db.selectFrom("audit_events").selectAll()
      .where("org_id", "=", orgId).where("seq", ">", afterSeq).where("seq", "<=", upToSeq)
      .orderBy("seq").limit(limit).execute();
    return rows.map(toAuditRecord);
  }

  async auditHead(orgId: string): Promise<AuditHead> {
    const row = await this.db.selectFrom("audit_heads").select(["seq", "hash"]).where("org_id", "=", orgId).executeTakeFirst();
    return row ? { seq: Number(row.seq), hash: row.hash } : EMPTY_HEAD;
  }

  // ---------------------------------------------------------------- housekeeping

  async purgeExpired(now: string, invitesExpiredBefore: string): Promise<PurgeCounts> {
    const invites = await this.purgeInBatches(() => this.db.deleteFrom("invites").where("invite_id", "in",
      this.db.selectFrom("invites").select("invite_id")
        .where("expires_at", "<=", invitesExpiredBefore).where("status", "in", [...PURGEABLE_INVITE_STATUSES]).limit(PURGE_BATCH)).executeTakeFirst());
    const refreshTokens = await this.purgeInBatches(() => this.db.deleteFrom("refresh_tokens").where("token_hash", "in",
      this.db.selectFrom("refresh_tokens").select("token_hash")
        .where((eb) => eb.or([eb("status", "=", "revoked"), eb("expires_at", "<=", now)])).limit(PURGE_BATCH)).executeTakeFirst());
    return { invites, refreshTokens };
  }

  private async purgeInBatches(batch: () => Promise<{ numDeletedRows: bigint }>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = Number((await batch()).numDeletedRows);
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }
}

/** SQLite: one connection, every transaction serialized by Kysely's connection mutex. */
export const sqliteOps: EngineOps = {
  name: "sqlite",
  async lockVault(trx, vaultId) {
    return trx.selectFrom("vaults").select(LOCKED_VAULT_COLUMNS).where("vault_id", "=", vaultId).executeTakeFirst();
  },
  async lockRegistrations() {
    // Transactions on the single connection never overlap.
  },
  isUniqueViolation(err) {
    // By message, not `instanceof Error`: node:sqlite's errors may come from another realm (a test VM).
    const message = (err as { message?: unknown })?.message;
    return typeof message === "string" && /UNIQUE constraint failed|PRIMARY KEY constraint failed/i.test(message);
  },
  batchRows: 500,
  // The file is opened in exclusive mode: no other process can be migrating it.
  whileMigrating: (_db, migrate) => migrate(),
  poolUsage: () => undefined,
  async runPrepared<R>(db: Kysely<Database>, _name: string, compiled: CompiledQuery<R>, values: unknown[]): Promise<R[]> {
    return (await db.executeQuery<R>({ ...compiled, parameters: values })).rows;
  },
  // One statement on the one connection: a snapshot of a single point in time; writes queue
  // behind it and go on once it is done.
  async backupTo(db, file) {
    await sql`VACUUM INTO ${file}`.execute(db);
  },
};
