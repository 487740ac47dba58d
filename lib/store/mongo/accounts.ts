/** Accounts and sessions on MongoDB (the port: ../port/accounts.ts; SQL: ../sql/accounts.ts). */
import { inviteRequired, notTheInvitedEmail } from "../../domain/refusals";
import type { OrgId, UserId } from "../../domain/ids";
import { conflict, notFound, notRedeemable } from "../../errors";
import type { SignedStatement } from "../../domain/types";
import { isRedeemable } from "../../domain/invites";
import type { AccountStore, ArgsOf, OrgRecord, RefreshOutcome, RefreshTokenRecord, UserRecord } from "../port";
import type { MongoContext } from "./context";
import { toOrg, toUser, userDoc, type UserDoc } from "./documents";
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

  // ---------------------------------------------------------------- refresh tokens

  async saveRefreshToken(t: RefreshTokenRecord): Promise<void> {
    await this.c.refreshTokens.insertOne({
      _id: t.tokenHash,
      familyId: t.familyId,
      userId: t.userId,
      status: "active",
      expiresAt: t.expiresAt,
      createdAt: t.createdAt,
    });
  }

  async rotateRefreshToken({ oldHash, next, now }: ArgsOf<AccountStore["rotateRefreshToken"]>): Promise<RefreshOutcome> {
    return this.c.tx(async (session): Promise<RefreshOutcome> => {
      const old = await this.c.refreshTokens.findOne({ _id: oldHash }, { session });
      if (!old) return { ok: false, reason: "unknown" };
      const rotated =
        old.status === "active"
          ? await this.c.refreshTokens.updateOne({ _id: oldHash, status: "active" }, { $set: { status: "used" } }, { session })
          : undefined;
      if (!rotated || rotated.modifiedCount !== 1) {
        // A used (or revoked) token presented again: whoever holds it, that login is over.
        await this.c.refreshTokens.updateMany({ familyId: old.familyId }, { $set: { status: "revoked" } }, { session });
        return { ok: false, reason: "reused" };
      }
      if (old.expiresAt <= now) return { ok: false, reason: "expired" };
      await this.c.refreshTokens.insertOne(
        {
          _id: next.tokenHash,
          familyId: old.familyId,
          userId: old.userId,
          status: "active",
          expiresAt: next.expiresAt,
          createdAt: next.createdAt,
        },
        { session },
      );
      return { ok: true, userId: old.userId };
    });
  }

  async revokeRefreshFamily({ tokenHash, userId }: ArgsOf<AccountStore["revokeRefreshFamily"]>): Promise<void> {
    const token = await this.c.refreshTokens.findOne({ _id: tokenHash, userId }, { projection: { familyId: 1 } });
    if (token) await this.c.refreshTokens.updateMany({ familyId: token.familyId }, { $set: { status: "revoked" } });
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
