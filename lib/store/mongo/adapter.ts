/**
 * The store port on MongoDB (the official driver), method for method the counterpart of
 * `sql/adapter.ts`. Every operation that changes a vault runs in one transaction (`tx`: snapshot
 * reads, majority writes, bounded retries) that first writes the vault document, so concurrent
 * changes to one vault are serialized like the SQL adapter's row lock. The callback may run more
 * than once: it reads everything it needs inside, keeps nothing between attempts, and rethrows
 * every error. Reads that must agree with each other share one snapshot (`consistentRead`).
 *
 * Tested only where MONGO_URL points at a replica set (test/store.mongo.test.ts); the mappings
 * and error translation are unit-tested everywhere (test/store.mongo.unit.test.ts).
 */
import { MongoClient, type ClientSession, type Collection, type Db, type TransactionOptions } from "mongodb";
import { conflict, forbidden, invalid, notFound, notRedeemable } from "../../errors";
import { isRedeemable, PURGEABLE_INVITE_STATUSES, type Invite } from "../../domain/invites";
import { chainRecords, EMPTY_HEAD, eventsByOrg, type AuditHead, type AuditRecord } from "../../domain/audit";
import type { DomainEvent } from "../../domain/events";
import type { VaultRole } from "../../domain/types";
import {
  decideAddMember, decideAdoptRoster, decideRekey, decideRemoveMember, decideRoleChange, requireMember, requirePermission,
  type MemberState, type VaultSnapshot,
} from "../../domain/vault-decisions";
import { assertKeyVersion } from "../../domain/rekey";
import type { RosterEntry, RosterLink } from "../../domain/roster";
import type {
  AppendOutcome, ItemRecord, ItemWrite, MemberEntry, NewMember, NewUser, NewVault, OrgRecord, PurgeCounts, RefreshOutcome,
  RefreshTokenRecord, RekeyInput, RevokeOutcome, Store, UserRecord, VaultView,
} from "../port";
import {
  auditDoc, byCreatedThenId, COLLECTIONS, inviteDoc, itemKey, rosterLinkKey, toAuditRecord, toInvite, toItem, toMemberEntry, toOrg, toUser, toVaultView, userDoc,
  type AuditEventDoc, type AuditHeadDoc, type InviteDoc, type ItemDoc, type LockDoc, type MemberDoc, type OrgDoc, type RefreshTokenDoc, type RosterLinkDoc,
  type UserDoc, type VaultDoc,
} from "./documents";
import { assertTransactionsSupported, isTransientTransactionError, isUnknownCommitResult, translateMongoError } from "./errors";

/** A majority write not acknowledged in this time fails (503) instead of waiting for a lost majority. */
const WRITE_TIMEOUT_MS = 5_000;

const TRANSACTION: TransactionOptions = {
  readConcern: { level: "snapshot" },
  writeConcern: { w: "majority", wtimeoutMS: WRITE_TIMEOUT_MS },
  readPreference: "primary",
  maxCommitTimeMS: WRITE_TIMEOUT_MS,
};

/**
 * How long one transaction may take, retries included. The driver's `withTransaction` retries
 * for up to 120 s (its timeout option does nothing in this driver version), far past the
 * callers' request timeout: `tx` runs its own bounded loop instead.
 */
const TRANSACTION_DEADLINE_MS = 10_000;
const RETRY_BACKOFF_MAX_MS = 200;

const REGISTRATIONS_LOCK = "registrations";

export interface MongoStoreOptions {
  /** The database; default: the one named in the URL (the driver's default, `test`, otherwise). */
  dbName?: string;
  serverSelectionTimeoutMS?: number;
}

export class MongoStore implements Store {
  private readonly orgs: Collection<OrgDoc>;
  private readonly users: Collection<UserDoc>;
  private readonly vaults: Collection<VaultDoc>;
  private readonly members: Collection<MemberDoc>;
  private readonly items: Collection<ItemDoc>;
  private readonly invites: Collection<InviteDoc>;
  private readonly refreshTokens: Collection<RefreshTokenDoc>;
  private readonly locks: Collection<LockDoc>;
  private readonly auditEvents: Collection<AuditEventDoc>;
  private readonly auditHeads: Collection<AuditHeadDoc>;
  private readonly rosterLinks: Collection<RosterLinkDoc>;

  private constructor(private readonly client: MongoClient, readonly db: Db) {
    this.orgs = db.collection(COLLECTIONS.orgs);
    this.users = db.collection(COLLECTIONS.users);
    this.vaults = db.collection(COLLECTIONS.vaults);
    this.members = db.collection(COLLECTIONS.members);
    this.items = db.collection(COLLECTIONS.items);
    this.invites = db.collection(COLLECTIONS.invites);
    this.refreshTokens = db.collection(COLLECTIONS.refreshTokens);
    this.locks = db.collection(COLLECTIONS.locks);
    this.auditEvents = db.collection(COLLECTIONS.auditEvents);
    this.auditHeads = db.collection(COLLECTIONS.auditHeads);
    this.rosterLinks = db.collection(COLLECTIONS.rosterLinks);
  }

  /** Connects, refuses a server that cannot run transactions, creates collections and indexes. */
  static async open(url: string, opts: MongoStoreOptions = {}): Promise<MongoStore> {
    const client = new MongoClient(url, {
      readConcern: { level: "majority" },
      writeConcern: { w: "majority", wtimeoutMS: WRITE_TIMEOUT_MS },
      readPreference: "primary",
      serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? 10_000,
    });
    try {
      await client.connect();
      const db = client.db(opts.dbName);
      assertTransactionsSupported(await db.admin().command({ hello: 1 }));
      const store = new MongoStore(client, db);
      await store.createIndexes();
      return store;
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  /** Idempotent: creating an index that exists is a no-op, so every node may run it at start. */
  private async createIndexes(): Promise<void> {
    await this.users.createIndexes([{ key: { email: 1 }, unique: true }, { key: { orgId: 1, createdAt: 1 } }]);
    await this.members.createIndexes([{ key: { vaultId: 1, userId: 1 }, unique: true }, { key: { userId: 1 } }]);
    await this.items.createIndexes([{ key: { vaultId: 1, createdAt: 1, itemId: 1 } }]);
    await this.invites.createIndexes([{ key: { tokenHash: 1 }, unique: true }, { key: { orgId: 1, status: 1, createdAt: -1 } }, { key: { expiresAt: 1 } }]);
    // The sweeper's purge takes expired tokens (by expiresAt) and revoked ones (this partial index: only those).
    await this.refreshTokens.createIndexes([{ key: { familyId: 1 } }, { key: { expiresAt: 1 } },
      { key: { status: 1 }, name: "revoked_1", partialFilterExpression: { status: "revoked" } }]);
    await this.auditEvents.createIndexes([{ key: { orgId: 1, seq: 1 }, unique: true }]);
    await this.rosterLinks.createIndexes([{ key: { vaultId: 1, seq: 1 }, unique: true }]);
    // Collections a transaction writes must exist beforehand; the lock document too, so that
    // two first registrations never race to insert it.
    for (const name of [COLLECTIONS.orgs, COLLECTIONS.vaults, COLLECTIONS.auditHeads]) await this.db.createCollection(name).catch(ignoreExists);
    await this.locks.updateOne({ _id: REGISTRATIONS_LOCK }, { $setOnInsert: { seq: 0 } }, { upsert: true }).catch(ignoreDuplicate);
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async backupTo(): Promise<void> {
    throw new Error("A MongoDB store is backed up with mongodump and restored with mongorestore");
  }

  /** The driver's pool has no public figures (it reports through CMAP events): none. */
  poolUsage(): undefined {
    return undefined;
  }

  /**
   * Runs `fn` in a transaction, again from the start while the driver labels a failure transient
   * (a write conflict, a stepdown) and the deadline allows, and commits it, again while the
   * outcome of a commit is unknown. `fn` may run more than once: it reads everything it needs
   * inside and keeps nothing between attempts. Failures become the contract's errors
   * (`translateMongoError`): a lost race 409, too large 413, "not now" 503, never a hang.
   */
  private async tx<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    const deadline = Date.now() + TRANSACTION_DEADLINE_MS;
    const session = this.client.startSession();
    try {
      for (let attempt = 1; ; attempt++) {
        session.startTransaction(TRANSACTION);
        let result: T;
        try {
          result = await fn(session);
        } catch (err) {
          if (session.inTransaction()) await session.abortTransaction().catch(() => undefined);
          if (isTransientTransactionError(err) && Date.now() < deadline) {
            await backoff(attempt);
            continue;
          }
          throw err;
        }
        const committed = await this.commit(session, deadline);
        if (committed) return result;
        await backoff(attempt); // the commit hit a transient error: the whole transaction again
      }
    } catch (err) {
      throw translateMongoError(err);
    } finally {
      await session.endSession().catch(() => undefined);
    }
  }

  /** Commits; false when the whole transaction should run again. */
  private async commit(session: ClientSession, deadline: number): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await session.commitTransaction();
        return true;
      } catch (err) {
        if (Date.now() >= deadline) throw err;
        if (isUnknownCommitResult(err)) {
          // The outcome is unknown (the reply was lost): commit the same transaction again (never
          // run it again), after a pause, so that a network failing at once is not asked in a tight loop.
          await backoff(attempt);
          continue;
        }
        if (isTransientTransactionError(err)) return false;
        throw err;
      }
    }
  }

  /**
   * Reads that must agree with each other (a membership and its vault's key version, a list and
   * the check that the caller may see it) on one snapshot: a rekey committing in between is seen
   * wholly or not at all, never an old wrap beside a new key version.
   */
  private async consistentRead<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    const session = this.client.startSession({ snapshot: true });
    try {
      return await fn(session);
    } catch (err) {
      throw translateMongoError(err);
    } finally {
      await session.endSession().catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------- users and organizations

  /** Serializes registrations, so "the first user of the server" has one winner. */
  private async lockRegistrations(session: ClientSession): Promise<void> {
    await this.locks.updateOne({ _id: REGISTRATIONS_LOCK }, { $inc: { seq: 1 } }, { session });
  }

  async registerOwnerOfNewOrg(user: NewUser, org: OrgRecord, opts: { onlyIfFirstUser: boolean }): Promise<UserRecord> {
    return this.tx(async (session) => {
      await this.lockRegistrations(session);
      if (opts.onlyIfFirstUser && (await this.users.findOne({}, { session, projection: { _id: 1 } }))) throw forbidden("Registration needs an invite");
      await this.assertEmailFree(session, user.email);
      await this.orgs.insertOne({ _id: org.orgId, name: org.name, createdAt: org.createdAt }, { session });
      const doc = userDoc(user, org.orgId, "owner");
      await this.users.insertOne(doc, { session });
      return toUser(doc);
    });
  }

  async registerWithInvite(user: NewUser, inviteId: string, now: string): Promise<UserRecord> {
    return this.tx(async (session) => {
      await this.lockRegistrations(session);
      const invite = await this.invites.findOne({ _id: inviteId }, { session });
      if (!invite) throw notFound("Invite");
      if (!isRedeemable({ status: invite.status, expiresAt: invite.expiresAt }, now)) throw notRedeemable();
      if (invite.email !== user.email) throw invalid("The email is not the invited one", "email");
      await this.assertEmailFree(session, user.email);
      // Conditional: of any number of concurrent redemptions, exactly one moves pending -> used.
      const used = await this.invites.updateOne({ _id: inviteId, status: "pending" }, { $set: { status: "used", updatedAt: now } }, { session });
      if (used.modifiedCount !== 1) throw notRedeemable();
      const doc = userDoc(user, invite.orgId, invite.role);
      await this.users.insertOne(doc, { session });
      return toUser(doc);
    });
  }

  private async assertEmailFree(session: ClientSession, email: string): Promise<void> {
    if (await this.users.findOne({ email }, { session, projection: { _id: 1 } })) throw conflict("A user with this email already exists", "email");
  }

  async hasUsers(): Promise<boolean> {
    return (await this.users.findOne({}, { projection: { _id: 1 } })) !== null;
  }

  async findUserByEmail(email: string): Promise<UserRecord | null> {
    const doc = await this.users.findOne({ email });
    return doc ? toUser(doc) : null;
  }

  async findUserById(userId: string): Promise<UserRecord | null> {
    const doc = await this.users.findOne({ _id: userId });
    return doc ? toUser(doc) : null;
  }

  async getOrg(orgId: string): Promise<OrgRecord | null> {
    const doc = await this.orgs.findOne({ _id: orgId });
    return doc ? toOrg(doc) : null;
  }

  async listOrgMembers(orgId: string): Promise<UserRecord[]> {
    return (await this.users.find({ orgId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(toUser);
  }

  // ---------------------------------------------------------------- refresh tokens

  async saveRefreshToken(t: RefreshTokenRecord): Promise<void> {
    await this.refreshTokens.insertOne({ _id: t.tokenHash, familyId: t.familyId, userId: t.userId, status: "active", expiresAt: t.expiresAt, createdAt: t.createdAt });
  }

  async rotateRefreshToken(oldHash: string, next: Pick<RefreshTokenRecord, "tokenHash" | "expiresAt" | "createdAt">, now: string): Promise<RefreshOutcome> {
    return this.tx(async (session): Promise<RefreshOutcome> => {
      const old = await this.refreshTokens.findOne({ _id: oldHash }, { session });
      if (!old) return { ok: false, reason: "unknown" };
      const rotated = old.status === "active"
        ? await this.refreshTokens.updateOne({ _id: oldHash, status: "active" }, { $set: { status: "used" } }, { session })
        : undefined;
      if (!rotated || rotated.modifiedCount !== 1) {
        // A used (or revoked) token presented again: whoever holds it, that login is over.
        await this.refreshTokens.updateMany({ familyId: old.familyId }, { $set: { status: "revoked" } }, { session });
        return { ok: false, reason: "reused" };
      }
      if (old.expiresAt <= now) return { ok: false, reason: "expired" };
      await this.refreshTokens.insertOne({
        _id: next.tokenHash, familyId: old.familyId, userId: old.userId, status: "active", expiresAt: next.expiresAt, createdAt: next.createdAt,
      }, { session });
      return { ok: true, userId: old.userId };
    });
  }

  async revokeRefreshFamily(tokenHash: string, userId: string): Promise<void> {
    const token = await this.refreshTokens.findOne({ _id: tokenHash, userId }, { projection: { familyId: 1 } });
    if (token) await this.refreshTokens.updateMany({ familyId: token.familyId }, { $set: { status: "revoked" } });
  }

  // ---------------------------------------------------------------- vaults

  async listVaults(userId: string): Promise<VaultView[]> {
    return this.consistentRead(async (session) => {
      const memberships = await this.members.find({ userId }, { session }).toArray();
      const vaults = await this.vaults.find({ _id: { $in: memberships.map((m) => m.vaultId) } }, { session }).toArray();
      const byId = new Map(vaults.map((v) => [v._id, v]));
      return memberships
        .filter((m) => byId.has(m.vaultId))
        .map((m) => toVaultView(byId.get(m.vaultId)!, m))
        .sort(byCreatedThenId((v) => v.createdAt, (v) => v.vaultId));
    });
  }

  async getVault(vaultId: string, userId: string): Promise<VaultView | null> {
    return this.consistentRead((session) => this.vaultView(session, vaultId, userId));
  }

  /** The membership and its vault, read in the caller's session (a transaction or a snapshot). */
  private async vaultView(session: ClientSession, vaultId: string, userId: string): Promise<VaultView | null> {
    const member = await this.members.findOne({ vaultId, userId }, { session });
    const vault = member && (await this.vaults.findOne({ _id: vaultId }, { session }));
    return member && vault ? toVaultView(vault, member) : null;
  }

  private async vaultViewOrFail(session: ClientSession, vaultId: string, userId: string): Promise<VaultView> {
    const view = await this.vaultView(session, vaultId, userId);
    if (!view) throw notFound("Vault");
    return view;
  }

  async createVault(v: NewVault, now: string): Promise<VaultView> {
    return this.tx(async (session) => {
      await this.vaults.insertOne({ _id: v.vaultId, orgId: v.orgId, name: v.name, type: v.type, keyVersion: 1, rekeyRequired: false, createdAt: now, updatedAt: now, writeSeq: 0 }, { session });
      await this.members.insertOne({
        vaultId: v.vaultId, userId: v.ownerId, role: "owner", encryptedVaultKey: v.encryptedVaultKey,
        senderId: v.ownerId, wrapSignature: v.wrapSignature, createdAt: now, updatedAt: now,
      }, { session });
      if (v.roster) await this.appendRosterLink(session, v.vaultId, v.roster, now);
      return this.vaultViewOrFail(session, v.vaultId, v.ownerId);
    });
  }

  /**
   * Writes the vault document first (the lock: a concurrent transaction on this vault conflicts
   * and is retried on the new state), then reads what the decisions need.
   */
  private async lockVault(session: ClientSession, vaultId: string): Promise<VaultDoc | null> {
    return this.vaults.findOneAndUpdate({ _id: vaultId }, { $inc: { writeSeq: 1 } }, { session, returnDocument: "after" });
  }

  private async snapshot(session: ClientSession, vaultId: string): Promise<VaultSnapshot | null> {
    const vault = await this.lockVault(session, vaultId);
    if (!vault) return null;
    const members = await this.members.find({ vaultId }, { session }).toArray();
    const keys = await this.users.find({ _id: { $in: members.map((m) => m.userId) } }, { session, projection: { publicKey: 1, signingPublicKey: 1 } }).toArray();
    const keysOf = new Map(keys.map((k) => [k._id, k]));
    return {
      vault: { vaultId, orgId: vault.orgId, type: vault.type, keyVersion: vault.keyVersion, rekeyRequired: vault.rekeyRequired, roster: vault.roster ?? null },
      members: members.map((m): MemberState => ({
        userId: m.userId, role: m.role, publicKey: keysOf.get(m.userId)?.publicKey ?? "", signingPublicKey: keysOf.get(m.userId)?.signingPublicKey ?? "",
      })),
    };
  }

  /**
   * Locks the vault for an item write and checks the caller's membership. MongoDB has no shared
   * lock, so item writes to one vault are serialized (the SQL adapter lets them run side by side).
   */
  private async lockForItems(session: ClientSession, vaultId: string, actorId: string): Promise<{ keyVersion: number }> {
    const vault = await this.lockVault(session, vaultId);
    const member = vault && (await this.members.findOne({ vaultId, userId: actorId }, { session, projection: { role: 1 } }));
    if (!vault || !member) throw notFound("Vault");
    return { keyVersion: vault.keyVersion };
  }

  async renameVault(vaultId: string, actorId: string, name: string, now: string): Promise<VaultView> {
    return this.tx(async (session) => {
      requirePermission(await this.snapshot(session, vaultId), actorId, "rename");
      await this.vaults.updateOne({ _id: vaultId }, { $set: { name, updatedAt: now } }, { session });
      return this.vaultViewOrFail(session, vaultId, actorId);
    });
  }

  async deleteVault(vaultId: string, actorId: string): Promise<void> {
    await this.tx(async (session) => {
      requirePermission(await this.snapshot(session, vaultId), actorId, "delete");
      await this.items.deleteMany({ vaultId }, { session });
      await this.rosterLinks.deleteMany({ vaultId }, { session });
      await this.members.deleteMany({ vaultId }, { session });
      await this.vaults.deleteOne({ _id: vaultId }, { session });
    });
  }

  // ---------------------------------------------------------------- members

  private async memberEntries(vaultId: string, session: ClientSession): Promise<MemberEntry[]> {
    const vault = await this.vaults.findOne({ _id: vaultId }, { session });
    if (!vault) return [];
    const members = await this.members.find({ vaultId }, { session }).sort({ createdAt: 1, userId: 1 }).toArray();
    return members.map((m) => toMemberEntry(vault, m));
  }

  async listMembers(vaultId: string, actorId: string): Promise<MemberEntry[] | null> {
    const entries = await this.consistentRead((session) => this.memberEntries(vaultId, session));
    return entries.some((e) => e.userId === actorId) ? entries : null;
  }

  async addMember(vaultId: string, actorId: string, member: NewMember, now: string): Promise<void> {
    await this.tx(async (session) => {
      const snap = await this.snapshot(session, vaultId);
      requireMember(snap, actorId);
      const recipient = await this.users.findOne({ _id: member.userId }, { session, projection: { orgId: 1, publicKey: 1, signingPublicKey: 1 } });
      const roster = decideAddMember(snap, actorId, recipient
        ? { userId: recipient._id, orgId: recipient.orgId, publicKey: recipient.publicKey, signingPublicKey: recipient.signingPublicKey }
        : null, member);
      await this.members.insertOne({
        vaultId, userId: member.userId, role: member.role, encryptedVaultKey: member.encryptedVaultKey,
        senderId: actorId, wrapSignature: member.wrapSignature, createdAt: now, updatedAt: now,
      }, { session });
      await this.vaults.updateOne({ _id: vaultId }, { $set: { updatedAt: now } }, { session });
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
    });
  }

  async changeMemberRole(vaultId: string, actorId: string, targetId: string, role: VaultRole, now: string, rosterLink?: RosterLink): Promise<MemberEntry> {
    return this.tx(async (session) => {
      const roster = decideRoleChange(await this.snapshot(session, vaultId), actorId, targetId, role, rosterLink);
      await this.members.updateOne({ vaultId, userId: targetId }, { $set: { role, updatedAt: now } }, { session });
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
      return (await this.memberEntries(vaultId, session)).find((e) => e.userId === targetId)!;
    });
  }

  async removeMember(vaultId: string, actorId: string, targetId: string, now: string, rosterLink?: RosterLink) {
    return this.tx(async (session) => {
      const { rekeyRequired, roster } = decideRemoveMember(await this.snapshot(session, vaultId), actorId, targetId, rosterLink);
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);
      await this.members.deleteOne({ vaultId, userId: targetId }, { session });
      await this.vaults.updateOne({ _id: vaultId }, { $set: rekeyRequired ? { rekeyRequired: true, updatedAt: now } : { updatedAt: now } }, { session });
      return { rekeyRequired, remainingMembers: await this.memberEntries(vaultId, session) };
    });
  }

  // ---------------------------------------------------------------- rekey

  async rekeyVault(vaultId: string, actorId: string, input: RekeyInput, now: string): Promise<void> {
    await this.tx(async (session) => {
      const snap = await this.snapshot(session, vaultId);
      requireMember(snap, actorId);
      const current = await this.items.find({ vaultId }, { session, projection: { itemId: 1, revision: 1 } }).toArray();
      const roster = decideRekey(snap, actorId, new Map(current.map((i) => [i.itemId, i.revision])), input);
      const keyVersion = snap!.vault.keyVersion + 1;
      if (roster) await this.appendRosterLink(session, vaultId, roster, now);

      // One bulk write per collection; the driver splits it into batches the server accepts.
      const wraps = await this.members.bulkWrite(input.newKeys.map((k) => ({
        updateOne: {
          filter: { vaultId, userId: k.userId },
          update: { $set: { encryptedVaultKey: k.encryptedVaultKey, wrapSignature: k.wrapSignature, senderId: actorId, updatedAt: now } },
        },
      })), { session, ordered: true });
      if (wraps.matchedCount !== input.newKeys.length) throw new Error("rekey: member documents changed inside the transaction");
      if (input.items.length > 0) {
        const items = await this.items.bulkWrite(input.items.map((i) => ({
          updateOne: {
            filter: { _id: itemKey(vaultId, i.itemId) },
            update: { $set: { encryptedData: i.encryptedData, encryptedName: i.encryptedName, keyVersion, updatedAt: now }, $inc: { revision: 1 } },
          },
        })), { session, ordered: true });
        if (items.matchedCount !== input.items.length) throw new Error("rekey: item documents changed inside the transaction");
      }
      await this.vaults.updateOne({ _id: vaultId }, { $set: { keyVersion, rekeyRequired: false, updatedAt: now } }, { session });
    });
  }

  // ---------------------------------------------------------------- signed roster

  /** Stores a checked link and makes it the vault's head, in the caller's transaction. */
  private async appendRosterLink(session: ClientSession, vaultId: string, entry: RosterEntry, now: string): Promise<void> {
    await this.rosterLinks.insertOne({ _id: rosterLinkKey(vaultId, entry.seq), vaultId, seq: entry.seq, hash: entry.hash, link: entry.json, createdAt: now }, { session });
    await this.vaults.updateOne({ _id: vaultId }, { $set: { roster: { seq: entry.seq, hash: entry.hash } } }, { session });
  }

  async adoptRoster(vaultId: string, actorId: string, link: RosterLink, now: string): Promise<void> {
    await this.tx(async (session) => {
      const snap = await this.snapshot(session, vaultId);
      requireMember(snap, actorId);
      const wraps = await this.members.find({ vaultId }, { session, projection: { userId: 1, encryptedVaultKey: 1 } }).toArray();
      const entry = decideAdoptRoster(snap, actorId, wraps.map((w) => ({ userId: w.userId, encryptedVaultKey: w.encryptedVaultKey })), link);
      await this.appendRosterLink(session, vaultId, entry, now);
    });
  }

  async getRoster(vaultId: string, actorId: string): Promise<RosterLink[] | null> {
    return this.consistentRead(async (session) => {
      if (!(await this.members.findOne({ vaultId, userId: actorId }, { session, projection: { _id: 1 } }))) return null;
      const links = await this.rosterLinks.find({ vaultId }, { session }).sort({ seq: 1 }).toArray();
      return links.map((l) => JSON.parse(l.link) as RosterLink);
    });
  }

  // ---------------------------------------------------------------- items

  async listItems(vaultId: string, actorId: string): Promise<ItemRecord[] | null> {
    return this.consistentRead(async (session) => {
      if (!(await this.vaultView(session, vaultId, actorId))) return null;
      return (await this.items.find({ vaultId }, { session }).sort({ createdAt: 1, itemId: 1 }).toArray()).map(toItem);
    });
  }

  async getItem(vaultId: string, actorId: string, itemId: string): Promise<ItemRecord> {
    const doc = await this.consistentRead(async (session) => {
      if (!(await this.vaultView(session, vaultId, actorId))) throw notFound("Vault");
      return this.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
    });
    if (!doc) throw notFound("Item");
    return toItem(doc);
  }

  async createItem(vaultId: string, actorId: string, itemId: string, write: ItemWrite, now: string): Promise<ItemRecord> {
    return this.tx(async (session) => {
      const { keyVersion } = await this.lockForItems(session, vaultId, actorId);
      assertKeyVersion(keyVersion, write.keyVersion);
      if (await this.items.findOne({ _id: itemKey(vaultId, itemId) }, { session, projection: { _id: 1 } })) throw conflict("An item with this itemId already exists", "itemId");
      const doc: ItemDoc = {
        _id: itemKey(vaultId, itemId), itemId, vaultId, encryptedData: write.encryptedData, encryptedName: write.encryptedName,
        revision: 1, keyVersion, createdAt: now, updatedAt: now,
      };
      await this.items.insertOne(doc, { session });
      return toItem(doc);
    });
  }

  async updateItem(vaultId: string, actorId: string, itemId: string, write: ItemWrite & { revision?: number }, now: string): Promise<ItemRecord> {
    return this.tx(async (session) => {
      const { keyVersion } = await this.lockForItems(session, vaultId, actorId);
      const doc = await this.items.findOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (!doc) throw notFound("Item");
      if (write.revision !== undefined && write.revision !== doc.revision) {
        throw conflict(`The item's revision is ${doc.revision}, not ${write.revision}`, "revision");
      }
      assertKeyVersion(keyVersion, write.keyVersion);
      const updated: ItemDoc = { ...doc, encryptedData: write.encryptedData, encryptedName: write.encryptedName, revision: doc.revision + 1, keyVersion, updatedAt: now };
      const res = await this.items.updateOne({ _id: doc._id, revision: doc.revision }, {
        $set: { encryptedData: updated.encryptedData, encryptedName: updated.encryptedName, revision: updated.revision, keyVersion, updatedAt: now },
      }, { session });
      if (res.matchedCount !== 1) throw conflict("The item changed meanwhile", "revision");
      return toItem(updated);
    });
  }

  async deleteItem(vaultId: string, actorId: string, itemId: string): Promise<void> {
    await this.tx(async (session) => {
      await this.lockForItems(session, vaultId, actorId);
      const res = await this.items.deleteOne({ _id: itemKey(vaultId, itemId) }, { session });
      if (res.deletedCount !== 1) throw notFound("Item");
    });
  }

  // ---------------------------------------------------------------- invites

  async createInvite(invite: Invite, tokenHash: string): Promise<void> {
    await this.tx(async (session) => {
      await this.assertEmailFree(session, invite.email);
      await this.invites.insertOne(inviteDoc(invite, tokenHash), { session });
    });
  }

  async listPendingInvites(orgId: string, now: string): Promise<Invite[]> {
    const docs = await this.invites.find({ orgId, status: "pending", expiresAt: { $gt: now } }).sort({ createdAt: -1, _id: -1 }).toArray();
    return docs.map(toInvite);
  }

  async findInviteByTokenHash(tokenHash: string): Promise<Invite | null> {
    const doc = await this.invites.findOne({ tokenHash });
    return doc ? toInvite(doc) : null;
  }

  async getInvite(inviteId: string): Promise<Invite | null> {
    const doc = await this.invites.findOne({ _id: inviteId });
    return doc ? toInvite(doc) : null;
  }

  async revokeInvite(inviteId: string, orgId: string, now: string): Promise<RevokeOutcome> {
    return this.tx(async (session): Promise<RevokeOutcome> => {
      const doc = await this.invites.findOne({ _id: inviteId, orgId }, { session, projection: { status: 1 } });
      if (!doc) return "not-found";
      const res = await this.invites.updateOne({ _id: inviteId, status: "pending" }, { $set: { status: "revoked", updatedAt: now } }, { session });
      return res.modifiedCount === 1 ? "revoked" : "not-pending";
    });
  }

  // ---------------------------------------------------------------- audit log

  async appendAuditEvents(events: DomainEvent[]): Promise<AppendOutcome> {
    if (events.length === 0) return { appended: 0, alreadyRecorded: 0 };
    const byOrg = eventsByOrg(events);
    return this.tx(async (session) => {
      // Each head is written first (the lock: a concurrent append retries on the new state), in a
      // fixed order; then, on this snapshot, the check for events already recorded.
      const heads = new Map<string, AuditHead>();
      for (const orgId of [...byOrg.keys()].sort()) {
        const head = await this.auditHeads.findOneAndUpdate({ _id: orgId },
          { $inc: { writes: 1 }, $setOnInsert: { seq: EMPTY_HEAD.seq, hash: EMPTY_HEAD.hash } },
          { upsert: true, returnDocument: "after", session });
        heads.set(orgId, { seq: head!.seq, hash: head!.hash });
      }
      const ids = events.map((e) => e.eventId);
      const recorded = new Set((await this.auditEvents.find({ _id: { $in: ids } }, { session, projection: { _id: 1 } }).toArray()).map((d) => d._id));
      let appended = 0;
      for (const [orgId, orgEvents] of byOrg) {
        const records = chainRecords(heads.get(orgId)!, orgEvents, recorded);
        if (records.length === 0) continue;
        await this.auditEvents.insertMany(records.map(auditDoc), { session });
        const head = records[records.length - 1]!;
        await this.auditHeads.updateOne({ _id: orgId }, { $set: { seq: head.seq, hash: head.hash } }, { session });
        appended += records.length;
      }
      return { appended, alreadyRecorded: events.length - appended };
    });
  }

  async listAuditRecords(orgId: string, limit: number, before?: number): Promise<AuditRecord[]> {
    const filter = before === undefined ? { orgId } : { orgId, seq: { $lt: before } };
    return (await this.auditEvents.find(filter).sort({ seq: -1 }).limit(limit).toArray()).map(toAuditRecord);
  }

  async readAuditChain(orgId: string, afterSeq: number, upToSeq: number, limit: number): Promise<AuditRecord[]> {
    const docs = await this.auditEvents.find({ orgId, seq: { $gt: afterSeq, $lte: upToSeq } }).sort({ seq: 1 }).limit(limit).toArray();
    return docs.map(toAuditRecord);
  }

  async auditHead(orgId: string): Promise<AuditHead> {
    const doc = await this.auditHeads.findOne({ _id: orgId });
    return doc ? { seq: doc.seq, hash: doc.hash } : EMPTY_HEAD;
  }

  // ---------------------------------------------------------------- housekeeping

  async purgeExpired(now: string, invitesExpiredBefore: string): Promise<PurgeCounts> {
    const invites = await this.invites.deleteMany({ expiresAt: { $lte: invitesExpiredBefore }, status: { $in: [...PURGEABLE_INVITE_STATUSES] } });
    const tokens = await this.refreshTokens.deleteMany({ $or: [{ status: "revoked" }, { expiresAt: { $lte: now } }] });
    return { invites: invites.deletedCount, refreshTokens: tokens.deletedCount };
  }
}

/** It exists already (an earlier start, or another node): fine. */
function ignoreExists(err: unknown): void {
  if ((err as { codeName?: string }).codeName !== "NamespaceExists") throw err;
}

function ignoreDuplicate(err: unknown): void {
  if ((err as { code?: number }).code !== 11000) throw err;
}

/** A short random pause before another attempt, growing with the attempts. */
function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(5 * 1.5 ** attempt, RETRY_BACKOFF_MAX_MS)));
}
