/**
 * Emergency access grants on MongoDB (the port: ../port/emergency.ts; SQL: ../sql/emergency.ts).
 * Every change is one conditional write of the grant's document (its filter states what must still
 * hold), in a transaction: of a request and a refusal, or a grant made again and a request, at
 * once, one conflicts and runs again on the other's outcome. A session a grant opened ends in the
 * same transaction as the change that ends it.
 */
import type { ClientSession } from "mongodb";
import type { GrantRecord } from "../../domain/emergency/decisions";
import { grantFrozen, grantNotFound } from "../../domain/emergency/refusals";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, EmergencyStore } from "../port";
import type { MongoContext } from "./context";
import { toGrant, type GrantDoc } from "./documents";
import { writeOutbox } from "./outbox";
import { endSessionsIn } from "./sessions";

/** Ends the session a grant opened as its grantor, if it still runs. */
function endGrantSession(c: MongoContext, session: ClientSession, grantorId: UserId, sessionId: string | null, now: string) {
  return sessionId === null ? Promise.resolve([]) : endSessionsIn(c, session, { userId: grantorId, now, only: sessionId });
}

/** A removed member's grants, both ways, in the removal's transaction: deleted, the sessions they opened ended. */
export async function dropGrantsOfIn(c: MongoContext, session: ClientSession, userId: UserId, now: string): Promise<string[]> {
  const theirs = { $or: [{ grantorId: userId }, { granteeId: userId }] };
  const docs = await c.emergencyGrants.find(theirs, { session, projection: { grantorId: 1, sessionId: 1 } }).toArray();
  const ended: string[] = [];
  for (const d of docs) ended.push(...(await endGrantSession(c, session, d.grantorId, d.sessionId ?? null, now)));
  await c.emergencyGrants.deleteMany(theirs, { session });
  return ended;
}

/** A takeover's new password spends its grant, in the password change's transaction (false: no such grant for this session). */
export async function completeTakeoverIn(
  c: MongoContext,
  session: ClientSession,
  { grantId, sessionId, grantorId }: { grantId: string; sessionId: string; grantorId: UserId },
): Promise<boolean> {
  const done = await c.emergencyGrants.deleteOne({ _id: grantId, grantorId, sessionId, level: "takeover" }, { session });
  return done.deletedCount === 1;
}

export class MongoEmergency implements EmergencyStore {
  constructor(private readonly c: MongoContext) {}

  async getGrant({ grantId }: ArgsOf<EmergencyStore["getGrant"]>): Promise<GrantRecord | null> {
    const d = await this.c.emergencyGrants.findOne({ _id: grantId });
    return d ? toGrant(d) : null;
  }

  async grantBetween({ grantorId, granteeId }: ArgsOf<EmergencyStore["grantBetween"]>): Promise<GrantRecord | null> {
    const d = await this.c.emergencyGrants.findOne({ grantorId, granteeId });
    return d ? toGrant(d) : null;
  }

  async listGrants({ userId }: ArgsOf<EmergencyStore["listGrants"]>) {
    const docs = await this.c.emergencyGrants
      .find({ $or: [{ grantorId: userId }, { granteeId: userId }] })
      .sort({ createdAt: 1, _id: 1 })
      .toArray();
    const all = docs.map(toGrant);
    return { granted: all.filter((g) => g.grantorId === userId), received: all.filter((g) => g.granteeId === userId) };
  }

  async writeGrant({ grant, expect, now, events }: ArgsOf<EmergencyStore["writeGrant"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      const made = {
        granteeKeys: grant.granteeKeys,
        keys: grant.keys,
        kdfVersion: grant.kdfVersion,
        wrappedKey: grant.wrappedKey,
        signature: grant.signature,
        updatedAt: now,
      };
      if (expect === null) {
        // A pair or an id taken meanwhile breaks a unique index: 409, as `tx` translates it.
        const doc: GrantDoc = {
          ...made,
          _id: grant.grantId,
          orgId: grant.orgId,
          grantorId: grant.grantorId,
          granteeId: grant.granteeId,
          level: grant.level,
          waitHours: grant.waitHours,
          createdAt: now,
          requestedAt: null,
          refusedAt: null,
          sessionId: null,
          openedAt: null,
        };
        await this.c.emergencyGrants.insertOne(doc, { session });
        return;
      }
      // Made again: its level and wait change only while nobody has asked.
      const done = await this.c.emergencyGrants.updateOne(
        {
          _id: expect,
          grantorId: grant.grantorId,
          $or: [{ requestedAt: null }, { level: grant.level, waitHours: grant.waitHours }],
        },
        { $set: { ...made, level: grant.level, waitHours: grant.waitHours } },
        { session },
      );
      if (done.matchedCount === 1) return;
      const still = await this.c.emergencyGrants.findOne({ _id: expect }, { session, projection: { _id: 1 } });
      throw still ? grantFrozen() : grantNotFound();
    });
  }

  async requestGrant({ grantId, granteeId, now, events }: ArgsOf<EmergencyStore["requestGrant"]>): Promise<boolean> {
    return this.c.tx(async (session) => {
      const done = await this.c.emergencyGrants.updateOne(
        { _id: grantId, granteeId, requestedAt: null },
        { $set: { requestedAt: now, updatedAt: now } },
        { session },
      );
      if (done.matchedCount !== 1) return false;
      await writeOutbox(this.c, session, events);
      return true;
    });
  }

  async refuseGrant({ grantId, grantorId, now, events }: ArgsOf<EmergencyStore["refuseGrant"]>) {
    return this.c.tx(async (session) => {
      const before = await this.c.emergencyGrants.findOneAndUpdate(
        { _id: grantId, grantorId, requestedAt: { $ne: null } },
        { $set: { requestedAt: null, refusedAt: now, sessionId: null, openedAt: null, updatedAt: now } },
        { session, returnDocument: "before" },
      );
      if (!before) return { refused: false, endedSessions: [] };
      await writeOutbox(this.c, session, events);
      return { refused: true, endedSessions: await endGrantSession(this.c, session, grantorId, before.sessionId ?? null, now) };
    });
  }

  async deleteGrant({ grantId, actorId, now, events }: ArgsOf<EmergencyStore["deleteGrant"]>) {
    return this.c.tx(async (session) => {
      const gone = await this.c.emergencyGrants.findOneAndDelete(
        { _id: grantId, $or: [{ grantorId: actorId }, { granteeId: actorId }] },
        { session },
      );
      if (!gone) return { deleted: false, endedSessions: [] };
      await writeOutbox(this.c, session, events);
      return { deleted: true, endedSessions: await endGrantSession(this.c, session, gone.grantorId, gone.sessionId ?? null, now) };
    });
  }

  async openedGrantSession({ grantId, requestedAt, sessionId, now, events }: ArgsOf<EmergencyStore["openedGrantSession"]>) {
    return this.c.tx(async (session) => {
      const before = await this.c.emergencyGrants.findOneAndUpdate(
        { _id: grantId, requestedAt },
        { $set: { sessionId, openedAt: now } },
        { session, returnDocument: "before" },
      );
      if (!before) {
        // The request no longer stands as it was released: the session just opened ends instead.
        const grant = await this.c.emergencyGrants.findOne({ _id: grantId }, { session, projection: { grantorId: 1 } });
        if (!grant) return { recorded: false, endedSessions: [] };
        return { recorded: false, endedSessions: await endGrantSession(this.c, session, grant.grantorId, sessionId, now) };
      }
      await writeOutbox(this.c, session, events);
      return { recorded: true, endedSessions: await endGrantSession(this.c, session, before.grantorId, before.sessionId ?? null, now) };
    });
  }

  async findTakeover({ userId, sessionId, since }: ArgsOf<EmergencyStore["findTakeover"]>): Promise<string | null> {
    const d = await this.c.emergencyGrants.findOne(
      { grantorId: userId, sessionId, level: "takeover", openedAt: { $gte: since } },
      { projection: { _id: 1 } },
    );
    return d?._id ?? null;
  }
}
