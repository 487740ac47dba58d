/** Accounts on MongoDB (the port: ../port/accounts.ts; sessions: ./sessions.ts; SQL: ../sql/accounts.ts). */
import { appendOrgLink } from "./org-log";
import { recoveryNotPending, staleAccountVersion } from "../../domain/accounts/refusals";
import { inviteNotRedeemable, userNotFound } from "../../domain/orgs/refusals";
import {
  decideFirstUser,
  decideInviteRedemption,
  decideKeyLogHead,
  decidePersonalVaultsLocked,
  decideRotationVaultsLocked,
  decideStatementSet,
} from "../../domain/store-checks";
import type { OrgId, UserId } from "../../domain/ids";
import { completeRecoveryIn } from "./security";
import type { Filter } from "mongodb";
import { decidePasswordChange } from "../../domain/accounts/password-change";
import type { VaultSnapshot } from "../../domain/vaults/decisions";
import { lockAccount, memberVaultIds, personalVaultIds, replaceOwnWrap } from "./writes";
import { decideKeyRotation, keyLogHead, type KeyLogEntry } from "../../domain/accounts/key-rotation";
import { keyLogEntryBytes } from "../../../protocol/formats/key-log";
import { sha256Hex } from "../../domain/vaults/roster";
import { decideOrgRemoval, decideVaultsAfterRemoval, type HeldVault } from "../../domain/orgs/membership";
import { failpoint } from "../../failpoints";
import type { AccountStore, ArgsOf, OrgRecord, UserRecord } from "../port";
import type { MongoContext } from "./context";
import { toInvite, toOrg, toUser, userDoc, type UserDoc } from "./documents";
import { insertKeyLogEntry, keyLogIn, lockHeldVaults, writeRotatedWraps } from "./key-log";
import { endSessionsIn } from "./sessions";
import { forgetDevicesIn } from "./remembered-devices";
import { dropSendsOf } from "./sends";
import { completeTakeoverIn, dropGrantsOfIn } from "./emergency";
import { grantNotFound } from "../../domain/emergency/refusals";
import { rewrapPasskeysIn } from "./passkey-logins";
import { writeOutbox } from "./outbox";

export class MongoAccounts implements AccountStore {
  constructor(private readonly c: MongoContext) {}

  async registerOwnerOfNewOrg({ user, org, onlyIfFirstUser, events }: ArgsOf<AccountStore["registerOwnerOfNewOrg"]>): Promise<UserRecord> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.lockRegistrations(session);
      decideFirstUser(onlyIfFirstUser, onlyIfFirstUser && (await this.c.users.findOne({}, { session, projection: { _id: 1 } })) !== null);
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
      const doc = await this.c.invites.findOne({ _id: inviteId }, { session });
      const invite = decideInviteRedemption(doc && toInvite(doc), user.email, now);
      await this.c.assertNewUserFree(session, user);
      // Conditional: of any number of concurrent redemptions, exactly one moves pending -> used.
      const used = await this.c.invites.updateOne(
        { _id: inviteId, status: "pending" },
        { $set: { status: "used", updatedAt: now } },
        { session },
      );
      if (used.modifiedCount !== 1) throw inviteNotRedeemable();
      const created = userDoc(user, invite.orgId, invite.role);
      await this.c.users.insertOne(created, { session });
      return toUser(created);
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

  async changePassword({
    userId,
    change,
    authHash,
    encryptedPrivateKey,
    encryptedSigningPrivateKey,
    passkeys,
    provenAuthHash,
    keepSession,
    completeRecovery,
    completeTakeover,
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
        if (!user) throw userNotFound();
        throw staleAccountVersion(user.accountVersion ?? 1, change.accountVersion);
      }
      const heldNow = await personalVaultIds(this.c, session, userId);
      const locked = decidePersonalVaultsLocked(heldNow, snapshots);
      const rosters = decidePasswordChange({ userId, accountVersion: change.accountVersion }, locked, change);
      for (const v of change.vaults) await replaceOwnWrap(this.c, session, userId, v, rosters.get(v.vaultId), now);
      if (completeTakeover !== undefined) {
        if (!(await completeTakeoverIn(this.c, session, { grantId: completeTakeover, sessionId: keepSession ?? "", grantorId: userId })))
          throw grantNotFound();
        // What signed the grantor in besides the password goes with it: the grantee holds none of it.
        await this.c.recoveryCodes.deleteMany({ userId }, { session });
        await this.c.secondFactors.deleteMany({ userId }, { session });
        await this.c.passkeyLogins.deleteMany({ userId }, { session });
      }
      // A takeover's re-wraps are of passkeys just deleted: none is kept.
      await rewrapPasskeysIn(this.c, session, userId, completeTakeover === undefined ? (passkeys ?? []) : []);
      if (completeRecovery !== undefined && !(await completeRecoveryIn(this.c, session, completeRecovery, now))) throw recoveryNotPending();
      failpoint("password-change-before-commit");
      // The devices that skipped the second step were trusted by the old password's holder: forgotten with it.
      await forgetDevicesIn(this.c, session, userId);
      return { endedSessions: await endSessionsIn(this.c, session, { userId, now, except: keepSession }) };
    });
  }

  async rotateKeys({ userId, rotation, passkeys, headVersion, keepSession, now, events }: ArgsOf<AccountStore["rotateKeys"]>): Promise<{
    endedSessions: string[];
  }> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const held = await lockHeldVaults(this.c, session, userId);
      // A real write to the account: another rotation, a password change or a login conflicts with it, and one retries.
      const version = await lockAccount(this.c, session, userId);
      const doc = await this.c.users.findOne({ _id: userId }, { session });
      if (!doc) throw userNotFound();
      const stored = await keyLogIn(this.c, userId, session);
      const head = keyLogHead(toUser(doc), stored);
      decideKeyLogHead(head.entry.version, headVersion);
      // A share to them writes their account first (vaults.ts, addMember): one made meanwhile conflicts with this transaction.
      const heldNow = await memberVaultIds(this.c, session, userId);
      const locked = decideRotationVaultsLocked(heldNow, held);
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
      await writeRotatedWraps(this.c, session, userId, rotation, rosters, now);
      await rewrapPasskeysIn(this.c, session, userId, passkeys ?? []);
      failpoint("key-rotation-before-commit");
      return { endedSessions: await endSessionsIn(this.c, session, { userId, now, except: keepSession }) };
    });
  }

  async keyLog(userId: UserId): Promise<KeyLogEntry[]> {
    return keyLogIn(this.c, userId);
  }

  async removeFromOrg({ caller, targetId, now, orgLink, events }: ArgsOf<AccountStore["removeFromOrg"]>) {
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
      if (orgLink) await appendOrgLink(this.c, session, caller.orgId, orgLink, "orgLink", now);
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
      await forgetDevicesIn(this.c, session, targetId);
      // Their sends go with them: a link a removed member handed out opens nothing more.
      await dropSendsOf(this.c, session, targetId);
      // Their emergency access grants, both ways: a session one opened as its grantor ends.
      const grantSessions = await dropGrantsOfIn(this.c, session, targetId, now);
      return {
        vaults,
        endedSessions: [...grantSessions, ...(await endSessionsIn(this.c, session, { userId: targetId, now }))],
        revokedInvites: pending.map((i) => i._id),
      };
    });
  }

  async setStatements({ userId, keyStatement, kdfStatement }: ArgsOf<AccountStore["setStatements"]>): Promise<void> {
    await this.c.tx(async (session) => {
      const doc = await this.c.users.findOne({ _id: userId }, { session, projection: { keyStatement: 1, kdfStatement: 1 } });
      if (!doc) throw userNotFound();
      const set: Partial<Pick<UserDoc, "keyStatement" | "kdfStatement">> = {};
      if (keyStatement) set.keyStatement = decideStatementSet(doc.keyStatement, keyStatement, "keyStatement");
      if (kdfStatement) set.kdfStatement = decideStatementSet(doc.kdfStatement, kdfStatement, "kdfStatement");
      await this.c.users.updateOne({ _id: userId }, { $set: set }, { session });
    });
  }
}

/** A filter on the account's key version (a document without one is at version 1). */
function versionIs(version: number): Filter<UserDoc> {
  return version === 1 ? { $or: [{ accountVersion: 1 }, { accountVersion: { $exists: false } }] } : { accountVersion: version };
}
