/**
 * What every MongoDB aggregate file shares: the client and its collections, transactions (`tx`:
 * snapshot reads, majority writes, bounded retries), snapshot reads (`consistentRead`), and the
 * vault lock with the snapshot the domain decides on.
 *
 * Every operation that changes a vault runs in one transaction that first writes the vault
 * document, so concurrent changes to one vault are serialized like the SQL adapter's row lock. The
 * callback may run more than once: it reads everything it needs inside, keeps nothing between
 * attempts, and rethrows every error.
 */
import type { OutboxDoc } from "./outbox";
import type { ItemId, UserId, VaultId } from "../../domain/ids";
import type { ClientSession, Collection, Db, MongoClient, TransactionOptions } from "mongodb";
import { decideNewUserFree } from "../../domain/store-checks";
import type { MemberState, VaultSnapshot } from "../../domain/vaults/decisions";
import type { VaultView } from "../port";
import type { ItemLogEntry } from "../../domain/items/log";
import {
  COLLECTIONS,
  itemKey,
  itemLogHeadOf,
  rosterLinkKey,
  toVaultView,
  type ItemLinkDoc,
  type AuditEventDoc,
  type AuditHeadDoc,
  type InviteDoc,
  type ItemDoc,
  type ItemRevisionDoc,
  type ItemChangeDoc,
  type TrashedItemDoc,
  type KeyLogDoc,
  type OrgLogDoc,
  type LockDoc,
  type MemberDoc,
  type OrgDoc,
  type RefreshTokenDoc,
  type SessionDoc,
  type RememberedDeviceDoc,
  type RosterLinkDoc,
  type UserDoc,
  type VaultDoc,
  type SecondFactorDoc,
  type RecoveryCodeDoc,
  type OrgPoliciesDoc,
  type RecoveryEnrolmentDoc,
  type RecoveryShareDoc,
  type RecoveryRequestDoc,
  type RecoveryApprovalDoc,
  type PasskeyLoginDoc,
  type AttachmentDoc,
  type AttachmentChunkDoc,
  type SendDoc,
  type SendPartDoc,
  type GrantDoc,
} from "./documents";
import { isTransientTransactionError, isUnknownCommitResult, translateMongoError } from "./errors";

/** A majority write not acknowledged in this time fails (503) instead of waiting for a lost majority. */
export const WRITE_TIMEOUT_MS = 5_000;

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

export const REGISTRATIONS_LOCK = "registrations";

export class MongoContext {
  readonly orgs: Collection<OrgDoc>;
  readonly users: Collection<UserDoc>;
  readonly vaults: Collection<VaultDoc>;
  readonly members: Collection<MemberDoc>;
  readonly items: Collection<ItemDoc>;
  readonly itemRevisions: Collection<ItemRevisionDoc>;
  readonly itemTrash: Collection<TrashedItemDoc>;
  readonly itemChanges: Collection<ItemChangeDoc>;
  readonly invites: Collection<InviteDoc>;
  readonly refreshTokens: Collection<RefreshTokenDoc>;
  readonly sessions: Collection<SessionDoc>;
  readonly rememberedDevices: Collection<RememberedDeviceDoc>;
  readonly keyLog: Collection<KeyLogDoc>;
  readonly orgLog: Collection<OrgLogDoc>;
  readonly locks: Collection<LockDoc>;
  readonly auditEvents: Collection<AuditEventDoc>;
  readonly auditHeads: Collection<AuditHeadDoc>;
  readonly rosterLinks: Collection<RosterLinkDoc>;
  readonly itemLinks: Collection<ItemLinkDoc>;
  readonly serverKeys: Collection<{ _id: string; value: string; createdAt: string }>;
  readonly outbox: Collection<OutboxDoc>;
  readonly secondFactors: Collection<SecondFactorDoc>;
  readonly recoveryCodes: Collection<RecoveryCodeDoc>;
  readonly orgPolicies: Collection<OrgPoliciesDoc>;
  readonly recoveryEnrolments: Collection<RecoveryEnrolmentDoc>;
  readonly recoveryShares: Collection<RecoveryShareDoc>;
  readonly recoveryRequests: Collection<RecoveryRequestDoc>;
  readonly recoveryApprovals: Collection<RecoveryApprovalDoc>;
  readonly passkeyLogins: Collection<PasskeyLoginDoc>;
  readonly attachments: Collection<AttachmentDoc>;
  readonly attachmentChunks: Collection<AttachmentChunkDoc>;
  readonly sends: Collection<SendDoc>;
  readonly sendParts: Collection<SendPartDoc>;
  readonly emergencyGrants: Collection<GrantDoc>;

  constructor(
    readonly client: MongoClient,
    readonly db: Db,
  ) {
    this.orgs = db.collection(COLLECTIONS.orgs);
    this.users = db.collection(COLLECTIONS.users);
    this.vaults = db.collection(COLLECTIONS.vaults);
    this.members = db.collection(COLLECTIONS.members);
    this.items = db.collection(COLLECTIONS.items);
    this.itemRevisions = db.collection(COLLECTIONS.itemRevisions);
    this.itemTrash = db.collection(COLLECTIONS.itemTrash);
    this.itemChanges = db.collection(COLLECTIONS.itemChanges);
    this.invites = db.collection(COLLECTIONS.invites);
    this.refreshTokens = db.collection(COLLECTIONS.refreshTokens);
    this.sessions = db.collection(COLLECTIONS.sessions);
    this.rememberedDevices = db.collection(COLLECTIONS.rememberedDevices);
    this.keyLog = db.collection(COLLECTIONS.keyLog);
    this.orgLog = db.collection(COLLECTIONS.orgLog);
    this.locks = db.collection(COLLECTIONS.locks);
    this.auditEvents = db.collection(COLLECTIONS.auditEvents);
    this.auditHeads = db.collection(COLLECTIONS.auditHeads);
    this.rosterLinks = db.collection(COLLECTIONS.rosterLinks);
    this.itemLinks = db.collection(COLLECTIONS.itemLinks);
    this.serverKeys = db.collection(COLLECTIONS.serverKeys);
    this.outbox = db.collection(COLLECTIONS.outbox);
    this.secondFactors = db.collection(COLLECTIONS.secondFactors);
    this.recoveryCodes = db.collection(COLLECTIONS.recoveryCodes);
    this.orgPolicies = db.collection(COLLECTIONS.orgPolicies);
    this.recoveryEnrolments = db.collection(COLLECTIONS.recoveryEnrolments);
    this.recoveryShares = db.collection(COLLECTIONS.recoveryShares);
    this.recoveryRequests = db.collection(COLLECTIONS.recoveryRequests);
    this.recoveryApprovals = db.collection(COLLECTIONS.recoveryApprovals);
    this.passkeyLogins = db.collection(COLLECTIONS.passkeyLogins);
    this.attachments = db.collection(COLLECTIONS.attachments);
    this.attachmentChunks = db.collection(COLLECTIONS.attachmentChunks);
    this.sends = db.collection(COLLECTIONS.sends);
    this.sendParts = db.collection(COLLECTIONS.sendParts);
    this.emergencyGrants = db.collection(COLLECTIONS.emergencyGrants);
  }

  /**
   * Runs `fn` in a transaction, again from the start while the driver labels a failure transient
   * (a write conflict, a stepdown) and the deadline allows, and commits it, again while the
   * outcome of a commit is unknown. `fn` may run more than once: it reads everything it needs
   * inside and keeps nothing between attempts. Failures become the contract's errors
   * (`translateMongoError`): a lost race 409, too large 413, "not now" 503, never a hang.
   */
  async tx<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
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
  async consistentRead<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    const session = this.client.startSession({ snapshot: true });
    try {
      return await fn(session);
    } catch (err) {
      throw translateMongoError(err);
    } finally {
      await session.endSession().catch(() => undefined);
    }
  }

  /** Serializes registrations, so "the first user of the server" has one winner. */
  async lockRegistrations(session: ClientSession): Promise<void> {
    await this.locks.updateOne({ _id: REGISTRATIONS_LOCK }, { $inc: { seq: 1 } }, { session });
  }

  async assertEmailFree(session: ClientSession, email: string): Promise<void> {
    decideNewUserFree({ email: (await this.users.findOne({ email }, { session, projection: { _id: 1 } })) !== null });
  }

  /** 409 when the email is taken, or the user id, which is derived from the signing key (ids.ts, `userIdForKey`): a key already registered. */
  async assertNewUserFree(session: ClientSession, user: { email: string; userId: UserId }): Promise<void> {
    await this.assertEmailFree(session, user.email);
    const taken = await this.users.findOne({ _id: user.userId }, { session, projection: { _id: 1 } });
    decideNewUserFree({ email: false, signingKey: taken !== null });
  }

  /** The membership and its vault, read in the caller's session (a transaction or a snapshot). */
  async vaultView(session: ClientSession, vaultId: VaultId, userId: UserId): Promise<VaultView | null> {
    const member = await this.members.findOne({ vaultId, userId }, { session });
    const vault = member && (await this.vaults.findOne({ _id: vaultId }, { session }));
    // One taken out of the organization is a member of no vault, whatever the documents still say.
    if (!member || !vault || (await this.isRemoved(session, userId))) return null;
    return toVaultView(vault, member);
  }

  /** Whether the user was taken out of their organization. */
  async isRemoved(session: ClientSession, userId: UserId): Promise<boolean> {
    return (await this.users.findOne({ _id: userId }, { session, projection: { removedAt: 1 } }))?.removedAt !== undefined;
  }

  /**
   * Writes the vault document first (the lock: a concurrent transaction on this vault conflicts
   * and is retried on the new state), then reads what the decisions need.
   */
  async lockVault(session: ClientSession, vaultId: VaultId): Promise<VaultDoc | null> {
    return this.vaults.findOneAndUpdate({ _id: vaultId }, { $inc: { writeSeq: 1 } }, { session, returnDocument: "after" });
  }

  /**
   * Gives the item changes of a write their number (lib/domain/items/changes.ts), in the write's
   * transaction, after its `lockVault`: the vault's next change number, recorded against each item
   * touched; or, for a rekey (`reset`), marked as the vault's reset, which makes every earlier
   * change record moot. A vault of an earlier release (no counter) starts from a reset numbered 1.
   */
  async recordItemChanges(session: ClientSession, vaultId: VaultId, change: { itemIds: readonly string[] } | "reset"): Promise<void> {
    const next = { $add: [{ $ifNull: ["$changeSeq", 1] }, 1] };
    const vault = await this.vaults.findOneAndUpdate(
      { _id: vaultId },
      [{ $set: { changeSeq: next, resetSeq: change === "reset" ? next : { $ifNull: ["$resetSeq", 1] } } }],
      { session, returnDocument: "after", projection: { changeSeq: 1 } },
    );
    const seq = vault!.changeSeq!;
    if (change === "reset") {
      await this.itemChanges.deleteMany({ vaultId }, { session });
      return;
    }
    if (change.itemIds.length === 0) return;
    await this.itemChanges.bulkWrite(
      change.itemIds.map((itemId) => ({
        updateOne: { filter: { _id: itemKey(vaultId, itemId as ItemId) }, update: { $set: { vaultId, itemId, seq } }, upsert: true },
      })),
      { session, ordered: true },
    );
  }

  /** Stores a checked item link and moves the vault's head to it, in the write's transaction. */
  async appendItemLink(session: ClientSession, vaultId: VaultId, entry: ItemLogEntry, now: string): Promise<void> {
    const { seq, head: hash, baseSeq, rosterSeq } = entry.head;
    await this.itemLinks.insertOne({ _id: rosterLinkKey(vaultId, seq), vaultId, seq, link: entry.json, createdAt: now }, { session });
    await this.vaults.updateOne({ _id: vaultId }, { $set: { itemLog: { seq, hash, baseSeq, rosterSeq } } }, { session });
  }

  async snapshot(session: ClientSession, vaultId: VaultId): Promise<VaultSnapshot | null> {
    const vault = await this.lockVault(session, vaultId);
    if (!vault) return null;
    const members = await this.members.find({ vaultId }, { session }).toArray();
    const keys = await this.users
      .find({ _id: { $in: members.map((m) => m.userId) } }, { session, projection: { publicKey: 1, signingPublicKey: 1, removedAt: 1 } })
      .toArray();
    const keysOf = new Map(keys.map((k) => [k._id, k]));
    return {
      vault: {
        vaultId,
        orgId: vault.orgId,
        type: vault.type,
        name: vault.name,
        keyVersion: vault.keyVersion,
        rekeyRequired: vault.rekeyRequired,
        roster: vault.roster ?? null,
        itemLog: itemLogHeadOf(vault),
      },
      members: members.map((m): MemberState => ({
        userId: m.userId,
        role: m.role,
        publicKey: keysOf.get(m.userId)?.publicKey ?? "",
        signingPublicKey: keysOf.get(m.userId)?.signingPublicKey ?? "",
        ...(keysOf.get(m.userId)?.removedAt !== undefined && { removed: true }),
      })),
    };
  }
}

/** A short random pause before another attempt, growing with the attempts. */
function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(5 * 1.5 ** attempt, RETRY_BACKOFF_MAX_MS)));
}
