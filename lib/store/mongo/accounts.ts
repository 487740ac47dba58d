/** Accounts and sessions on MongoDB (the port: ../port/accounts.ts; SQL: ../sql/accounts.ts). */
import {
  inviteRequired,
  notTheInvitedEmail,
  passwordChangedMeanwhile,
  keyLogEntryStale,
  personalVaultsChanged,
  rotationVaultsChanged,
  staleAccountVersion,
  recoveryNotPending,
} from "../../domain/refusals";
import type { OrgId, UserId } from "../../domain/ids";
import { completeRecoveryIn } from "./security";
import { conflict, notFound, notRedeemable } from "../../errors";
import type { SignedStatement } from "../../domain/types";
import { isRedeemable } from "../../domain/invites";
import type { ClientSession, Filter } from "mongodb";
import { decidePasswordChange } from "../../domain/password-change";
import type { VaultSnapshot } from "../../domain/vault-decisions";
import { lockAccount, memberVaultIds, personalVaultIds, replaceOwnWrap } from "./writes";
import { decideKeyRotation, keyLogHead, type HeldVault as HeldRotationVault, type KeyLogEntry } from "../../domain/key-rotation";
import { keyLogEntryBytes } from "../../../protocol/formats/key-log";
import { sha256Hex } from "../../domain/roster";
import { decideOrgRemoval, decideVaultsAfterRemoval, type HeldVault } from "../../domain/org-membership";
import { failpoint } from "../../failpoints";
import { earlierSession, sessionsOverCap } from "../../domain/sessions";
import type { AccountStore, ArgsOf, OrgRecord, RefreshOutcome, SessionRecord, UserRecord } from "../port";
import type { MongoContext } from "./context";
import { keyLogKey, toOrg, toSession, toUser, userDoc, type SessionDoc, type UserDoc } from "./documents";
import { writeOutbox } from "./outbox";

export class MongoAccounts implements AccountStore {
  constructor(private readonly c: MongoContext) {}

  async registerOwnerOfNewOrg({ user, org, onlyIfFirstUser, events }: ArgsOf<AccountStore["registerOwnerOfNewOrg"]>): Promise<UserRecord> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.lockRegistrations(session);
      if (onlyIfFirstUser && (await this.c.users.findOne({}, { session, projection: { _id: 1 } }))) throw inviteRequired();
      await this.c.assertNewUserFree(session, user);
      await this.c.orgs.insertOne({ _id: org.orgId, name: org.name, createdAt: org.createdAt }, { session });
      const doc = userDoc(user, org.orgId, "owner");
      await this.c.users.insertOne(doc, { session });
      return toUser(doc);
    });
  }

  async registerWithInvite({ user, inviteId, now, events }: ArgsOf<AccountStore["registerWithInvite"]>): Promise<UserRecord> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.lockRegistrations(session);
      const invite = await this.c.invites.findOne({ _id: inviteId }, { session });
      if (!invite) throw notFound("Invite");
      if (!isRedeemable({ status: invite.status, expiresAt: invite.expiresAt }, now)) throw notRedeemable();
      if (invite.email !== user.email) throw notTheInvitedEmail();
      await this.c.assertNewUserFree(session, user);
      // Conditional: of any number of concurrent redemptions, exactly one moves pending -> used.
      const used = await this.c.invites.updateOne(
        { _id: inviteId, status: "pending" },
        { $set: { status: "used", updatedAt: now } },
        { session },
      );
      if (used.modifiedCount !== 1) throw notRedeemable();
      const doc = userDoc(user, invite.orgId, invite.role);
      await this.c.users.insertOne(doc, { session });
      return toUser(doc);
    });
  }

  async hasUsers(): Promise<boolean> {
    return (await this.c.users.findOne({}, { projection: { _id: 1 } })) !== null;
  }

  async findUserByEmail(email: string): Promise<UserRecord | null> {
    const doc = await this.c.users.findOne({ email });
    return doc ? toUser(doc) : null;
  }

  async findUserById(userId: UserId): Promise<UserRecord | null> {
    const doc = await this.c.users.findOne({ _id: userId });
    return doc ? toUser(doc) : null;
  }

  async getOrg(orgId: OrgId): Promise<OrgRecord | null> {
    const doc = await this.c.orgs.findOne({ _id: orgId });
    return doc ? toOrg(doc) : null;
  }

  async listOrgMembers(orgId: OrgId): Promise<UserRecord[]> {
    return (await this.c.users.find({ orgId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(toUser);
  }

  // ---------------------------------------------------------------- sessions and refresh tokens

  async startSession({ session: s, token, accountVersion, maxLive }: ArgsOf<AccountStore["startSession"]>): Promise<{ ended: string[] }> {
    return this.c.tx(async (session) => {
      // A real write to the account (a password change writes it too): one of the two retries on the other's outcome.
      if ((await lockAccount(this.c, session, s.userId)) !== accountVersion) throw passwordChangedMeanwhile();
      await this.c.sessions.insertOne(sessionDoc(s), { session });
      await this.c.refreshTokens.insertOne(
        {
          _id: token.tokenHash,
          familyId: s.sessionId,
          userId: token.userId,
          status: "active",
          expiresAt: token.expiresAt,
          createdAt: token.createdAt,
        },
        { session },
      );
      const live = await this.c.sessions
        .find({ userId: s.userId, endedAt: { $exists: false } }, { session, projection: { _id: 1 } })
        .sort({ lastUsedAt: -1, _id: 1 })
        .toArray();
      const over = sessionsOverCap(
        live.map((d) => d._id),
        maxLive,
      );
      return { ended: over.length ? await endSessionsIn(this.c, session, { userId: s.userId, now: s.createdAt, ids: over }) : [] };
    });
  }

  async rotateRefreshToken({ oldHash, next, now, address }: ArgsOf<AccountStore["rotateRefreshToken"]>): Promise<RefreshOutcome> {
    return this.c.tx(async (session): Promise<RefreshOutcome> => {
      const old = await this.c.refreshTokens.findOne({ _id: oldHash }, { session });
      if (!old) return { ok: false, reason: "unknown" };
      const sessionId = old.familyId;
      const reused = async (): Promise<RefreshOutcome> => {
        // A used (or revoked) token presented again: whoever holds it, that login is over.
        await this.c.sessions.updateOne({ _id: sessionId, endedAt: { $exists: false } }, { $set: { endedAt: now } }, { session });
        await this.c.refreshTokens.updateMany({ familyId: sessionId }, { $set: { status: "revoked" } }, { session });
        return { ok: false, reason: "reused", sessionId };
      };
      if (old.status !== "active") return reused();
      if (old.expiresAt <= now) {
        await this.c.refreshTokens.updateOne({ _id: oldHash }, { $set: { status: "used" } }, { session });
        return { ok: false, reason: "expired" };
      }
      // The session's document is written in the same transaction as the token: an end that
      // races this conflicts with it, and one of the two retries on the other's outcome.
      const live = await this.c.sessions.updateOne(
        { _id: sessionId, endedAt: { $exists: false } },
        { $set: { lastUsedAt: now, address, expiresAt: next.expiresAt } },
        { session },
      );
      if (live.matchedCount !== 1) {
        if (await this.c.sessions.findOne({ _id: sessionId }, { session, projection: { _id: 1 } })) return { ok: false, reason: "unknown" };
        const earlier = earlierSession({ sessionId, userId: old.userId, createdAt: old.createdAt });
        await this.c.sessions.insertOne(sessionDoc({ ...earlier, lastUsedAt: now, address, expiresAt: next.expiresAt }), { session });
      }
      const rotated = await this.c.refreshTokens.updateOne({ _id: oldHash, status: "active" }, { $set: { status: "used" } }, { session });
      if (rotated.modifiedCount !== 1) return reused();
      await this.c.refreshTokens.insertOne(
        {
          _id: next.tokenHash,
          familyId: sessionId,
          userId: old.userId,
          status: "active",
          expiresAt: next.expiresAt,
          createdAt: next.createdAt,
        },
        { session },
      );
      return { ok: true, userId: old.userId, sessionId };
    });
  }

  async findSession(sessionId: string): Promise<SessionRecord | null> {
    const doc = await this.c.sessions.findOne({ _id: sessionId });
    return doc ? toSession(doc) : null;
  }

  async listSessions({ userId, now }: ArgsOf<AccountStore["listSessions"]>): Promise<SessionRecord[]> {
    const docs = await this.c.sessions
      .find({ userId, endedAt: { $exists: false }, expiresAt: { $gt: now } })
      .sort({ lastUsedAt: -1, _id: 1 })
      .toArray();
    return docs.map(toSession);
  }

  async endSessions(args: ArgsOf<AccountStore["endSessions"]>): Promise<string[]> {
    return this.c.tx((session) => endSessionsIn(this.c, session, args));
  }

  async changePassword({
    userId,
    change,
    authHash,
    encryptedPrivateKey,
    encryptedSigningPrivateKey,
    provenAuthHash,
    keepSession,
    completeRecovery,
    now,
    events,
  }: ArgsOf<AccountStore["changePassword"]>): Promise<{ endedSessions: string[] }> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      // Each personal vault locked (its write sequence bumped: a concurrent write to it conflicts and retries).
      const snapshots: VaultSnapshot[] = [];
      for (const vaultId of await personalVaultIds(this.c, session, userId)) {
        const snap = await this.c.snapshot(session, vaultId);
        if (snap) snapshots.push(snap);
      }
      // The compare-and-swap on the account (a document without a version is at version 1).
      const swapped = await this.c.users.updateOne(
        { _id: userId, authHash: provenAuthHash, ...versionIs(change.accountVersion) },
        {
          $set: {
            accountVersion: change.accountVersion + 1,
            authHash,
            kdf: change.kdf,
            encryptedPrivateKey,
            encryptedSigningPrivateKey,
            kdfStatement: { version: change.kdfStatement.version, signature: change.kdfStatement.signature },
          },
        },
        { session },
      );
      if (swapped.matchedCount !== 1) {
        const user = await this.c.users.findOne({ _id: userId }, { session, projection: { accountVersion: 1 } });
        if (!user) throw notFound("User");
        throw staleAccountVersion(user.accountVersion ?? 1, change.accountVersion);
      }
      const heldNow = await personalVaultIds(this.c, session, userId);
      const locked = snapshots.filter((s) => heldNow.includes(s.vault.vaultId));
      if (heldNow.length !== locked.length) throw personalVaultsChanged(heldNow.length - locked.length, 0);
      const rosters = decidePasswordChange({ userId, accountVersion: change.accountVersion }, locked, change);
      for (const v of change.vaults) await replaceOwnWrap(this.c, session, userId, v, rosters.get(v.vaultId), now);
      if (completeRecovery !== undefined && !(await completeRecoveryIn(this.c, session, completeRecovery, now))) throw recoveryNotPending();
      failpoint("password-change-before-commit");
      return { endedSessions: await endSessionsIn(this.c, session, { userId, now, except: keepSession }) };
    });
  }

  async rotateKeys({ userId, rotation, headVersion, keepSession, now, events }: ArgsOf<AccountStore["rotateKeys"]>): Promise<{
    endedSessions: string[];
  }> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      // Every vault they are in, each locked in id order (its write sequence bumped: a concurrent write to it conflicts and retries).
      const held: HeldRotationVault[] = [];
      for (const vaultId of await memberVaultIds(this.c, session, userId)) {
        const snapshot = await this.c.snapshot(session, vaultId);
        if (!snapshot) continue;
        const sentWraps = await this.c.members
          .find({ vaultId, senderId: userId }, { session, projection: { userId: 1, encryptedVaultKey: 1 } })
          .toArray();
        held.push({ snapshot, sentWraps: sentWraps.map((w) => ({ userId: w.userId, encryptedVaultKey: w.encryptedVaultKey })) });
      }
      // A real write to the account: another rotation, a password change or a login conflicts with it, and one retries.
      const version = await lockAccount(this.c, session, userId);
      const doc = await this.c.users.findOne({ _id: userId }, { session });
      if (!doc) throw notFound("User");
      const before = toUser(doc);
      const stored = await keyLogIn(this.c, userId, session);
      const head = keyLogHead(before, stored);
      if (head.entry.version !== headVersion) throw keyLogEntryStale(head.entry.version);
      // A share to them writes their account first (vaults.ts, addMember): one made meanwhile conflicts with this transaction.
      const heldNow = await memberVaultIds(this.c, session, userId);
      const locked = held.filter((h) => heldNow.includes(h.snapshot.vault.vaultId));
      if (heldNow.length !== locked.length) throw rotationVaultsChanged(heldNow.length - locked.length, 0);
      const rosters = decideKeyRotation({ userId, accountVersion: version }, locked, rotation);
      const entry = rotation.keyLogEntry;
      if (stored.length === 0) await insertKeyLogEntry(this.c, session, head.entry, head.hash, now);
      await insertKeyLogEntry(this.c, session, entry, sha256Hex(keyLogEntryBytes(entry)), now);
      await this.c.users.updateOne(
        { _id: userId },
        {
          $set: {
            accountVersion: version + 1,
            publicKey: entry.publicKey,
            signingPublicKey: entry.signingPublicKey,
            publicKeySignature: entry.publicKeySignature,
            encryptedPrivateKey: rotation.encryptedPrivateKey,
            encryptedSigningPrivateKey: rotation.encryptedSigningPrivateKey,
            keyStatement: { version: rotation.keyStatement.version, signature: rotation.keyStatement.signature },
            kdfStatement: { version: rotation.kdfStatement.version, signature: rotation.kdfStatement.signature },
          },
        },
        { session },
      );
      for (const v of rotation.vaults) {
        await replaceOwnWrap(this.c, session, userId, v, rosters.get(v.vaultId), now);
        if (v.resigned.length > 0)
          await this.c.members.bulkWrite(
            v.resigned.map((r) => ({
              updateOne: {
                filter: { vaultId: v.vaultId, userId: r.userId, senderId: userId },
                update: { $set: { wrapSignature: r.wrapSignature } },
              },
            })),
            { session, ordered: true },
          );
      }
      failpoint("key-rotation-before-commit");
      return { endedSessions: await endSessionsIn(this.c, session, { userId, now, except: keepSession }) };
    });
  }

  async keyLog(userId: UserId): Promise<KeyLogEntry[]> {
    return keyLogIn(this.c, userId);
  }

  async endSessionOfToken({ tokenHash, userId, now }: ArgsOf<AccountStore["endSessionOfToken"]>): Promise<string | null> {
    return this.c.tx(async (session) => {
      const token = await this.c.refreshTokens.findOne({ _id: tokenHash, userId }, { session, projection: { familyId: 1, createdAt: 1 } });
      if (!token) return null;
      // The session's document, ended (made, ended, for a family that never had one), then the tokens.
      const earlier = earlierSession({ sessionId: token.familyId, userId, createdAt: token.createdAt });
      await this.c.sessions.updateOne(
        { _id: token.familyId },
        {
          $set: { endedAt: now },
          $setOnInsert: {
            userId,
            deviceName: earlier.deviceName,
            createdAt: earlier.createdAt,
            lastUsedAt: now,
            address: "unknown",
            expiresAt: now,
          },
        },
        { session, upsert: true },
      );
      await this.c.refreshTokens.updateMany({ familyId: token.familyId }, { $set: { status: "revoked" } }, { session });
      return token.familyId;
    });
  }

  async touchSession({ sessionId, at, address }: ArgsOf<AccountStore["touchSession"]>): Promise<void> {
    await this.c.sessions.updateOne(
      { _id: sessionId, endedAt: { $exists: false }, lastUsedAt: { $lt: at } },
      { $set: { lastUsedAt: at, address } },
    );
  }

  async removeFromOrg({ caller, targetId, now, events }: ArgsOf<AccountStore["removeFromOrg"]>) {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const memberships = await this.c.members
        .find({ userId: targetId }, { session, projection: { vaultId: 1 } })
        .sort({ vaultId: 1 })
        .toArray();
      const held: HeldVault[] = [];
      for (const { vaultId } of memberships) {
        const snap = await this.c.snapshot(session, vaultId);
        const them = snap?.members.find((m) => m.userId === targetId);
        if (!snap || !them) continue;
        const others = snap.members.filter((m) => m.userId !== targetId && !m.removed).map((m) => ({ userId: m.userId, role: m.role }));
        held.push({ vaultId, type: snap.vault.type, role: them.role, others });
      }
      // The organization's removals one at a time: each writes the organization's document.
      await this.c.orgs.updateOne({ _id: caller.orgId }, { $inc: { writeSeq: 1 } }, { session });
      await lockAccount(this.c, session, targetId);
      const doc = await this.c.users.findOne({ _id: targetId }, { session });
      const owners = await this.c.users.countDocuments({ orgId: caller.orgId, role: "owner", removedAt: { $exists: false } }, { session });
      decideOrgRemoval(caller, doc ? toUser(doc) : null, owners);
      const vaults = decideVaultsAfterRemoval(held);
      await this.c.users.updateOne({ _id: targetId }, { $set: { removedAt: now } }, { session });
      const toRekey = vaults.filter((v) => v.needs === "rekey").map((v) => v.vaultId);
      if (toRekey.length)
        await this.c.vaults.updateMany({ _id: { $in: toRekey } }, { $set: { rekeyRequired: true, updatedAt: now } }, { session });
      const pending = await this.c.invites.find({ inviterId: targetId, status: "pending" }, { session, projection: { _id: 1 } }).toArray();
      if (pending.length)
        await this.c.invites.updateMany(
          { _id: { $in: pending.map((i) => i._id) } },
          { $set: { status: "revoked", updatedAt: now } },
          { session },
        );
      return {
        vaults,
        endedSessions: await endSessionsIn(this.c, session, { userId: targetId, now }),
        revokedInvites: pending.map((i) => i._id),
      };
    });
  }

  async setStatements({ userId, keyStatement, kdfStatement }: ArgsOf<AccountStore["setStatements"]>): Promise<void> {
    await this.c.tx(async (session) => {
      const doc = await this.c.users.findOne({ _id: userId }, { session, projection: { keyStatement: 1, kdfStatement: 1 } });
      if (!doc) throw notFound("User");
      const set: Partial<Pick<UserDoc, "keyStatement" | "kdfStatement">> = {};
      if (keyStatement) set.keyStatement = settledStatement(doc.keyStatement, keyStatement, "keyStatement");
      if (kdfStatement) set.kdfStatement = settledStatement(doc.kdfStatement, kdfStatement, "kdfStatement");
      await this.c.users.updateOne({ _id: userId }, { $set: set }, { session });
    });
  }
}

/** A statement after an upgrade: set once; the same statement again is fine, another one a conflict. */
function settledStatement(stored: SignedStatement | undefined, given: SignedStatement, field: string): SignedStatement {
  const next = { version: given.version, signature: given.signature };
  if (stored && (stored.version !== next.version || stored.signature !== next.signature))
    throw conflict("This account's statement is already set: a changed one needs a key change", field);
  return next;
}

function sessionDoc(s: Omit<SessionRecord, "endedAt">): SessionDoc {
  return {
    _id: s.sessionId,
    userId: s.userId,
    deviceName: s.deviceName,
    createdAt: s.createdAt,
    lastUsedAt: s.lastUsedAt,
    address: s.address,
    expiresAt: s.expiresAt,
  };
}

/** Ends the user's live sessions (all, the `only` one, all but the `except` one, or the `ids`) and revokes their refresh tokens, in the caller's transaction. */
async function endSessionsIn(
  c: MongoContext,
  session: ClientSession,
  { userId, now, only, except, ids: given }: ArgsOf<AccountStore["endSessions"]> & { ids?: string[] },
): Promise<string[]> {
  const filter: Filter<SessionDoc> = { userId, endedAt: { $exists: false } };
  if (only !== undefined) filter._id = only;
  else if (except !== undefined) filter._id = { $ne: except };
  else if (given !== undefined) filter._id = { $in: given };
  const ids = (await c.sessions.find(filter, { session, projection: { _id: 1 } }).toArray()).map((d) => d._id);
  if (ids.length === 0) return [];
  await c.sessions.updateMany({ _id: { $in: ids }, endedAt: { $exists: false } }, { $set: { endedAt: now } }, { session });
  await c.refreshTokens.updateMany({ familyId: { $in: ids } }, { $set: { status: "revoked" } }, { session });
  return ids;
}

/** A filter on the account's key version (a document without one is at version 1). */
function versionIs(version: number): Filter<UserDoc> {
  return version === 1 ? { $or: [{ accountVersion: 1 }, { accountVersion: { $exists: false } }] } : { accountVersion: version };
}

/** The user's stored key log, oldest first (in the caller's transaction, if given). */
async function keyLogIn(c: MongoContext, userId: UserId, session?: ClientSession): Promise<KeyLogEntry[]> {
  const docs = await c.keyLog
    .find({ userId }, { session, projection: { entry: 1 } })
    .sort({ version: 1 })
    .toArray();
  return docs.map((d) => JSON.parse(d.entry) as KeyLogEntry);
}

async function insertKeyLogEntry(c: MongoContext, session: ClientSession, entry: KeyLogEntry, hash: string, now: string): Promise<void> {
  const userId = entry.userId as UserId;
  await c.keyLog.insertOne(
    { _id: keyLogKey(userId, entry.version), userId, version: entry.version, hash, entry: JSON.stringify(entry), createdAt: now },
    { session },
  );
}
