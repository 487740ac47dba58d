/**
 * Sessions and their refresh tokens on MongoDB (the port: ../port/sessions.ts; SQL:
 * ../sql/sessions.ts). `endSessionsIn` ends sessions inside another aggregate's transaction.
 */
import type { ClientSession, Filter } from "mongodb";
import { decideSessionStart } from "../../domain/store-checks";
import { earlierSession, sessionsOverCap, type SessionEndReason } from "../../domain/accounts/sessions";
import type { FactorChangeSessions } from "../../domain/accounts/session-scope";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, NewSession, RefreshOutcome, SessionRecord, SessionStore } from "../port";
import type { MongoContext } from "./context";
import { toSession, type RefreshTokenDoc, type SessionDoc } from "./documents";
import { enrolOnlyIn } from "./session-scope";
import { lockAccount } from "./writes";
import { MongoRememberedDevices } from "./remembered-devices";

export class MongoSessions extends MongoRememberedDevices implements SessionStore {
  async startSession(args: ArgsOf<SessionStore["startSession"]>): Promise<{ ended: string[]; enrolOnly: boolean }> {
    const { session: s, token, accountVersion, maxLive } = args;
    return this.c.tx(async (session) => {
      // A real write to the account (a password change, a policy change, an enrolment write it too): one of the two retries on the other's outcome.
      decideSessionStart(await lockAccount(this.c, session, s.userId), accountVersion);
      const enrolOnly = !args.fullAccess && (await enrolOnlyIn(this.c, session, s.userId));
      await this.c.sessions.insertOne({ ...sessionDoc(s), ...(enrolOnly && { enrolOnly: true as const }) }, { session });
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
      const ended = over.length ? await endSessionsIn(this.c, session, { userId: s.userId, now: s.createdAt, ids: over }) : [];
      return { ended, enrolOnly };
    });
  }

  async rotateRefreshToken({ oldHash, next, now, address }: ArgsOf<SessionStore["rotateRefreshToken"]>): Promise<RefreshOutcome> {
    return this.c.tx(async (session): Promise<RefreshOutcome> => {
      const old = await this.c.refreshTokens.findOne({ _id: oldHash }, { session });
      if (!old) return { ok: false, reason: "unknown" };
      const sessionId = old.familyId;
      if (old.status !== "active") return this.endReused(session, sessionId, now);
      if (old.expiresAt <= now) {
        await this.c.refreshTokens.updateOne({ _id: oldHash }, { $set: { status: "used" } }, { session });
        return { ok: false, reason: "expired" };
      }
      const used = await this.recordUse(session, old, { lastUsedAt: now, address, expiresAt: next.expiresAt });
      if (!used) return { ok: false, reason: "unknown" };
      const rotated = await this.c.refreshTokens.updateOne({ _id: oldHash, status: "active" }, { $set: { status: "used" } }, { session });
      if (rotated.modifiedCount !== 1) return this.endReused(session, sessionId, now);
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
      return { ok: true, userId: old.userId, sessionId, enrolOnly: used.enrolOnly };
    });
  }

  /** A used (or revoked) token presented again: whoever holds it, that login is over. */
  private async endReused(session: ClientSession, sessionId: string, now: string): Promise<RefreshOutcome> {
    await this.c.sessions.updateOne({ _id: sessionId, endedAt: { $exists: false } }, { $set: { endedAt: now } }, { session });
    await this.c.refreshTokens.updateMany({ familyId: sessionId }, { $set: { status: "revoked" } }, { session });
    return { ok: false, reason: "reused", sessionId };
  }

  /**
   * A refresh's use, on its session's document: false when the session has ended, else its scope.
   * Written in the same transaction as the token: an end that races this conflicts with it, and one
   * of the two retries on the other's outcome. A family from before sessions gets its document now.
   */
  private async recordUse(
    session: ClientSession,
    old: RefreshTokenDoc,
    use: Pick<SessionRecord, "lastUsedAt" | "address" | "expiresAt">,
  ): Promise<false | { enrolOnly: boolean }> {
    const sessionId = old.familyId;
    const live = await this.c.sessions.findOneAndUpdate(
      { _id: sessionId, endedAt: { $exists: false } },
      { $set: use },
      { session, projection: { enrolOnly: 1 }, returnDocument: "after" },
    );
    if (live) return { enrolOnly: live.enrolOnly === true };
    if (await this.c.sessions.findOne({ _id: sessionId }, { session, projection: { _id: 1 } })) return false;
    const earlier = earlierSession({ sessionId, userId: old.userId, createdAt: old.createdAt });
    await this.c.sessions.insertOne(sessionDoc({ ...earlier, ...use }), { session });
    return { enrolOnly: false };
  }

  async findSession(sessionId: string): Promise<SessionRecord | null> {
    const doc = await this.c.sessions.findOne({ _id: sessionId });
    return doc ? toSession(doc) : null;
  }

  async listSessions({ userId, now }: ArgsOf<SessionStore["listSessions"]>): Promise<SessionRecord[]> {
    const docs = await this.c.sessions
      .find({ userId, endedAt: { $exists: false }, expiresAt: { $gt: now } })
      .sort({ lastUsedAt: -1, _id: 1 })
      .toArray();
    return docs.map(toSession);
  }

  async endSessions(args: ArgsOf<SessionStore["endSessions"]>): Promise<string[]> {
    return this.c.tx((session) => endSessionsIn(this.c, session, args));
  }

  async endSessionOfToken({ tokenHash, userId, now }: ArgsOf<SessionStore["endSessionOfToken"]>): Promise<string | null> {
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

  async touchSession({ sessionId, at, address }: ArgsOf<SessionStore["touchSession"]>): Promise<void> {
    await this.c.sessions.updateOne(
      { _id: sessionId, endedAt: { $exists: false }, lastUsedAt: { $lt: at } },
      { $set: { lastUsedAt: at, address } },
    );
  }
}

function sessionDoc(s: NewSession): SessionDoc {
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
export async function endSessionsIn(
  c: MongoContext,
  session: ClientSession,
  { userId, now, only, except, ids: given, why }: ArgsOf<SessionStore["endSessions"]> & { ids?: string[]; why?: SessionEndReason },
): Promise<string[]> {
  const filter: Filter<SessionDoc> = { userId, endedAt: { $exists: false } };
  if (only !== undefined) filter._id = only;
  else if (except !== undefined) filter._id = { $ne: except };
  else if (given !== undefined) filter._id = { $in: given };
  const ids = (await c.sessions.find(filter, { session, projection: { _id: 1 } }).toArray()).map((d) => d._id);
  if (ids.length === 0) return [];
  await c.sessions.updateMany(
    { _id: { $in: ids }, endedAt: { $exists: false } },
    { $set: { endedAt: now, ...(why !== undefined && { endedWhy: why }) } },
    { session },
  );
  await c.refreshTokens.updateMany({ familyId: { $in: ids } }, { $set: { status: "revoked" } }, { session });
  return ids;
}

/**
 * A factor change's effect on the account's sessions (`planFactorChangeSessions`), in its
 * transaction: every other one ends, saying why; the kept one becomes whole when the plan says so.
 */
export async function applyFactorChangeIn(
  c: MongoContext,
  session: ClientSession,
  userId: UserId,
  plan: FactorChangeSessions,
  now: string,
): Promise<string[]> {
  const ended = await endSessionsIn(c, session, { userId, now, why: plan.endedWhy, ...(plan.keep !== undefined && { except: plan.keep }) });
  if (plan.widenKept && plan.keep !== undefined) {
    await c.sessions.updateOne({ _id: plan.keep, userId, endedAt: { $exists: false } }, { $unset: { enrolOnly: "" } }, { session });
  }
  return ended;
}
