/**
 * Emergency access grants on SQL (the port: ../port/emergency.ts; MongoDB: ../mongo/emergency.ts).
 * Every change is one conditional UPDATE or DELETE on the grant's row, so that of a request and a
 * refusal, or a grant made again and a request, at once, each sees the other's outcome; a session a
 * grant opened ends in the same transaction as the change that ends it.
 */
import type { GrantRecord } from "../../domain/emergency/decisions";
import { grantFrozen, grantNotFound } from "../../domain/emergency/refusals";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, EmergencyStore } from "../port";
import type { Db, SqlContext } from "./context";
import { writeOutbox } from "./outbox";
import type { EmergencyGrantsTable } from "./schema";
import { endSessionsIn } from "./sessions";

export const toGrant = (r: EmergencyGrantsTable): GrantRecord => ({
  grantId: r.grant_id,
  orgId: r.org_id,
  grantorId: r.grantor_id,
  granteeId: r.grantee_id,
  level: r.level,
  waitHours: Number(r.wait_hours),
  granteeKeys: r.grantee_keys,
  keys: r.grant_keys,
  kdfVersion: Number(r.kdf_version),
  wrappedKey: r.wrapped_key,
  signature: r.signature,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  ...(r.requested_at !== null && { requestedAt: r.requested_at }),
  ...(r.refused_at !== null && { refusedAt: r.refused_at }),
  ...(r.session_id !== null && { sessionId: r.session_id }),
  ...(r.opened_at !== null && { openedAt: r.opened_at }),
});

/** Ends the session a grant opened as its grantor, if it still runs. */
async function endGrantSession(trx: Db, grantorId: UserId, sessionId: string | null, now: string): Promise<string[]> {
  return sessionId === null ? [] : endSessionsIn(trx, { userId: grantorId, now, only: sessionId });
}

/** A removed member's grants, both ways, in the removal's transaction: deleted, the sessions they opened ended. */
export async function dropGrantsOfIn(trx: Db, userId: UserId, now: string): Promise<string[]> {
  const rows = await trx
    .selectFrom("emergency_grants")
    .select(["grantor_id", "session_id"])
    .where((eb) => eb.or([eb("grantor_id", "=", userId), eb("grantee_id", "=", userId)]))
    .execute();
  const ended: string[] = [];
  for (const r of rows) ended.push(...(await endGrantSession(trx, r.grantor_id, r.session_id, now)));
  await trx
    .deleteFrom("emergency_grants")
    .where((eb) => eb.or([eb("grantor_id", "=", userId), eb("grantee_id", "=", userId)]))
    .execute();
  return ended;
}

/** A takeover's new password spends its grant, in the password change's transaction (false: no such grant for this session). */
export async function completeTakeoverIn(
  trx: Db,
  { grantId, sessionId, grantorId }: { grantId: string; sessionId: string; grantorId: UserId },
): Promise<boolean> {
  const done = await trx
    .deleteFrom("emergency_grants")
    .where("grant_id", "=", grantId)
    .where("grantor_id", "=", grantorId)
    .where("session_id", "=", sessionId)
    .where("level", "=", "takeover")
    .executeTakeFirst();
  return Number(done.numDeletedRows) === 1;
}

export class SqlEmergency implements EmergencyStore {
  constructor(private readonly c: SqlContext) {}

  async getGrant({ grantId }: ArgsOf<EmergencyStore["getGrant"]>): Promise<GrantRecord | null> {
    const r = await this.c.db.selectFrom("emergency_grants").selectAll().where("grant_id", "=", grantId).executeTakeFirst();
    return r ? toGrant(r) : null;
  }

  async grantBetween({ grantorId, granteeId }: ArgsOf<EmergencyStore["grantBetween"]>): Promise<GrantRecord | null> {
    const r = await this.c.db
      .selectFrom("emergency_grants")
      .selectAll()
      .where("grantor_id", "=", grantorId)
      .where("grantee_id", "=", granteeId)
      .executeTakeFirst();
    return r ? toGrant(r) : null;
  }

  async listGrants({ userId }: ArgsOf<EmergencyStore["listGrants"]>) {
    const rows = await this.c.db
      .selectFrom("emergency_grants")
      .selectAll()
      .where((eb) => eb.or([eb("grantor_id", "=", userId), eb("grantee_id", "=", userId)]))
      .orderBy("created_at")
      .orderBy("grant_id")
      .execute();
    const all = rows.map(toGrant);
    return { granted: all.filter((g) => g.grantorId === userId), received: all.filter((g) => g.granteeId === userId) };
  }

  async writeGrant({ grant, expect, now, events }: ArgsOf<EmergencyStore["writeGrant"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const made = {
        grantee_keys: grant.granteeKeys,
        grant_keys: grant.keys,
        kdf_version: grant.kdfVersion,
        wrapped_key: grant.wrappedKey,
        signature: grant.signature,
        updated_at: now,
      };
      if (expect === null) {
        await trx
          .insertInto("emergency_grants")
          .values({
            ...made,
            grant_id: grant.grantId,
            org_id: grant.orgId,
            grantor_id: grant.grantorId,
            grantee_id: grant.granteeId,
            level: grant.level,
            wait_hours: grant.waitHours,
            created_at: now,
            requested_at: null,
            refused_at: null,
            session_id: null,
            opened_at: null,
          })
          .execute();
        return;
      }
      // Made again: its level and wait change only while nobody has asked.
      const done = await trx
        .updateTable("emergency_grants")
        .set({ ...made, level: grant.level, wait_hours: grant.waitHours })
        .where("grant_id", "=", expect)
        .where("grantor_id", "=", grant.grantorId)
        .where((eb) =>
          eb.or([eb("requested_at", "is", null), eb.and([eb("level", "=", grant.level), eb("wait_hours", "=", grant.waitHours)])]),
        )
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 1) return;
      const still = await trx.selectFrom("emergency_grants").select("grant_id").where("grant_id", "=", expect).executeTakeFirst();
      throw still ? grantFrozen() : grantNotFound();
    });
  }

  async requestGrant({ grantId, granteeId, now, events }: ArgsOf<EmergencyStore["requestGrant"]>): Promise<boolean> {
    return this.c.tx(async (trx) => {
      const done = await trx
        .updateTable("emergency_grants")
        .set({ requested_at: now, updated_at: now })
        .where("grant_id", "=", grantId)
        .where("grantee_id", "=", granteeId)
        .where("requested_at", "is", null)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) return false;
      await writeOutbox(trx, events);
      return true;
    });
  }

  async refuseGrant({ grantId, grantorId, now, events }: ArgsOf<EmergencyStore["refuseGrant"]>) {
    return this.c.tx(async (trx) => {
      const row = await this.c.engine
        .rowLock(
          trx.selectFrom("emergency_grants").selectAll().where("grant_id", "=", grantId).where("grantor_id", "=", grantorId),
          "update",
        )
        .executeTakeFirst();
      if (!row || row.requested_at === null) return { refused: false, endedSessions: [] };
      await trx
        .updateTable("emergency_grants")
        .set({ requested_at: null, refused_at: now, session_id: null, opened_at: null, updated_at: now })
        .where("grant_id", "=", grantId)
        .execute();
      await writeOutbox(trx, events);
      return { refused: true, endedSessions: await endGrantSession(trx, grantorId, row.session_id, now) };
    });
  }

  async deleteGrant({ grantId, actorId, now, events }: ArgsOf<EmergencyStore["deleteGrant"]>) {
    return this.c.tx(async (trx) => {
      const row = await this.c.engine
        .rowLock(
          trx
            .selectFrom("emergency_grants")
            .selectAll()
            .where("grant_id", "=", grantId)
            .where((eb) => eb.or([eb("grantor_id", "=", actorId), eb("grantee_id", "=", actorId)])),
          "update",
        )
        .executeTakeFirst();
      if (!row) return { deleted: false, endedSessions: [] };
      await trx.deleteFrom("emergency_grants").where("grant_id", "=", grantId).execute();
      await writeOutbox(trx, events);
      return { deleted: true, endedSessions: await endGrantSession(trx, row.grantor_id, row.session_id, now) };
    });
  }

  async openedGrantSession({ grantId, requestedAt, sessionId, now, events }: ArgsOf<EmergencyStore["openedGrantSession"]>) {
    return this.c.tx(async (trx) => {
      const row = await this.c.engine
        .rowLock(trx.selectFrom("emergency_grants").selectAll().where("grant_id", "=", grantId), "update")
        .executeTakeFirst();
      if (!row) return { recorded: false, endedSessions: [] };
      if (row.requested_at !== requestedAt)
        return { recorded: false, endedSessions: await endGrantSession(trx, row.grantor_id, sessionId, now) };
      await trx.updateTable("emergency_grants").set({ session_id: sessionId, opened_at: now }).where("grant_id", "=", grantId).execute();
      await writeOutbox(trx, events);
      return { recorded: true, endedSessions: await endGrantSession(trx, row.grantor_id, row.session_id, now) };
    });
  }

  async findTakeover({ userId, sessionId, since }: ArgsOf<EmergencyStore["findTakeover"]>): Promise<string | null> {
    const r = await this.c.db
      .selectFrom("emergency_grants")
      .select("grant_id")
      .where("grantor_id", "=", userId)
      .where("session_id", "=", sessionId)
      .where("level", "=", "takeover")
      .where("opened_at", ">=", since)
      .executeTakeFirst();
    return r?.grant_id ?? null;
  }
}
