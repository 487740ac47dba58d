/**
 * Sessions and their refresh tokens on SQL (the port: ../port/sessions.ts; MongoDB:
 * ../mongo/sessions.ts). `endSessionsIn` ends sessions inside another aggregate's transaction.
 */
import { decideSessionStart } from "../../domain/store-checks";
import { earlierSession, sessionsOverCap, type SessionEndReason } from "../../domain/accounts/sessions";
import type { FactorChangeSessions } from "../../domain/accounts/session-scope";
import type { UserId } from "../../domain/ids";
import type { ArgsOf, NewSession, RefreshOutcome, SessionRecord, SessionStore } from "../port";
import { chunks, type Db } from "./context";
import type { RefreshTokensTable, SessionsTable } from "./schema";
import { enrolOnlyIn } from "./session-scope";
import { SqlRememberedDevices } from "./remembered-devices";
import { lockAccount } from "./writes";

type EndSessions = ArgsOf<SessionStore["endSessions"]> & { ids?: string[]; why?: SessionEndReason };
type RefreshToken = Omit<RefreshTokensTable, "status">;

export class SqlSessions extends SqlRememberedDevices implements SessionStore {
  async startSession(args: ArgsOf<SessionStore["startSession"]>): Promise<{ ended: string[]; enrolOnly: boolean }> {
    const { session, token, accountVersion, maxLive } = args;
    return this.c.tx(async (trx) => {
      // Under the account's row lock: a password change, a policy change, an enrolment and this login come one after the other.
      decideSessionStart(await lockAccount(trx, session.userId), accountVersion);
      const enrolOnly = !args.fullAccess && (await enrolOnlyIn(trx, session.userId));
      await trx
        .insertInto("sessions")
        .values({ ...sessionRow(session), enrol_only: enrolOnly ? 1 : 0 })
        .execute();
      await insertToken(trx, {
        token_hash: token.tokenHash,
        family_id: session.sessionId,
        user_id: token.userId,
        expires_at: token.expiresAt,
        created_at: token.createdAt,
      });
      const live = await trx
        .selectFrom("sessions")
        .select("session_id")
        .where("user_id", "=", session.userId)
        .where("ended_at", "is", null)
        .orderBy("last_used_at", "desc")
        .orderBy("session_id")
        .execute();
      const over = sessionsOverCap(
        live.map((r) => r.session_id),
        maxLive,
      );
      const ended = over.length ? await endSessionsIn(trx, { userId: session.userId, now: session.createdAt, ids: over }) : [];
      return { ended, enrolOnly };
    });
  }

  async rotateRefreshToken({ oldHash, next, now, address }: ArgsOf<SessionStore["rotateRefreshToken"]>): Promise<RefreshOutcome> {
    return this.c.tx(async (trx): Promise<RefreshOutcome> => {
      const old = await trx.selectFrom("refresh_tokens").selectAll().where("token_hash", "=", oldHash).executeTakeFirst();
      if (!old) return { ok: false, reason: "unknown" };
      const sessionId = old.family_id;
      // Locks in one order everywhere (the session's row, then its tokens), as endSessions takes them.
      if (old.status !== "active") return endReused(trx, sessionId, now);
      if (old.expires_at <= now) {
        await trx.updateTable("refresh_tokens").set({ status: "used" }).where("token_hash", "=", oldHash).execute();
        return { ok: false, reason: "expired" };
      }
      const used = await recordUse(trx, old, { now, address, expiresAt: next.expiresAt });
      if (!used) return { ok: false, reason: "unknown" };
      const rotated = await trx
        .updateTable("refresh_tokens")
        .set({ status: "used" })
        .where("token_hash", "=", oldHash)
        .where("status", "=", "active")
        .executeTakeFirst();
      // Another rotation of this token won meanwhile: it was presented twice.
      if (Number(rotated.numUpdatedRows) !== 1) return endReused(trx, sessionId, now);
      await insertToken(trx, {
        token_hash: next.tokenHash,
        family_id: sessionId,
        user_id: old.user_id,
        expires_at: next.expiresAt,
        created_at: next.createdAt,
      });
      return { ok: true, userId: old.user_id, sessionId, enrolOnly: used.enrolOnly };
    });
  }

  async findSession(sessionId: string): Promise<SessionRecord | null> {
    const row = await this.c.db.selectFrom("sessions").selectAll().where("session_id", "=", sessionId).executeTakeFirst();
    return row ? toSession(row) : null;
  }

  async listSessions({ userId, now }: ArgsOf<SessionStore["listSessions"]>): Promise<SessionRecord[]> {
    const rows = await this.c.db
      .selectFrom("sessions")
      .selectAll()
      .where("user_id", "=", userId)
      .where("ended_at", "is", null)
      .where("expires_at", ">", now)
      .orderBy("last_used_at", "desc")
      .orderBy("session_id")
      .execute();
    return rows.map(toSession);
  }

  async endSessions(args: ArgsOf<SessionStore["endSessions"]>): Promise<string[]> {
    return this.c.tx((trx) => endSessionsIn(trx, args));
  }

  async endSessionOfToken({ tokenHash, userId, now }: ArgsOf<SessionStore["endSessionOfToken"]>): Promise<string | null> {
    return this.c.tx(async (trx) => {
      const token = await trx
        .selectFrom("refresh_tokens")
        .select(["family_id", "created_at"])
        .where("token_hash", "=", tokenHash)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (!token) return null;
      // The session's row, ended; written (so locked) before the tokens, as a rotation writes it. A family
      // whose row was never made gets one, ended: a first refresh racing this then finds it.
      await trx
        .insertInto("sessions")
        .values({
          ...sessionRow({
            ...earlierSession({ sessionId: token.family_id, userId, createdAt: token.created_at }),
            lastUsedAt: now,
            address: "unknown",
            expiresAt: now,
          }),
          ended_at: now,
        })
        .onConflict((oc) => oc.column("session_id").doUpdateSet({ ended_at: now }).where("sessions.ended_at", "is", null))
        .execute();
      await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", token.family_id).execute();
      return token.family_id;
    });
  }

  async touchSession({ sessionId, at, address }: ArgsOf<SessionStore["touchSession"]>): Promise<void> {
    await this.c.db
      .updateTable("sessions")
      .set({ last_used_at: at, address })
      .where("session_id", "=", sessionId)
      .where("ended_at", "is", null)
      .where("last_used_at", "<", at)
      .execute();
  }
}

async function insertToken(trx: Db, token: RefreshToken): Promise<void> {
  await trx
    .insertInto("refresh_tokens")
    .values({ ...token, status: "active" })
    .execute();
}

/** A used (or revoked) token presented again: whoever holds it, that login is over. */
async function endReused(trx: Db, sessionId: string, now: string): Promise<RefreshOutcome> {
  await trx.updateTable("sessions").set({ ended_at: now }).where("session_id", "=", sessionId).where("ended_at", "is", null).execute();
  await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "=", sessionId).execute();
  return { ok: false, reason: "reused", sessionId };
}

/**
 * A refresh's use, on its session's row: false when the session has ended, else its scope. The row
 * is written (and so locked) before the token: an end that races this either came first (no live
 * row: refused) or waits, and then revokes the new token too. A family from before sessions gets its row now.
 */
async function recordUse(
  trx: Db,
  old: RefreshToken,
  use: { now: string; address: string; expiresAt: string },
): Promise<false | { enrolOnly: boolean }> {
  const sessionId = old.family_id;
  const live = await trx
    .updateTable("sessions")
    .set({ last_used_at: use.now, address: use.address, expires_at: use.expiresAt })
    .where("session_id", "=", sessionId)
    .where("ended_at", "is", null)
    .returning("enrol_only")
    .executeTakeFirst();
  if (live) return { enrolOnly: Number(live.enrol_only) === 1 };
  const ended = await trx.selectFrom("sessions").select("session_id").where("session_id", "=", sessionId).executeTakeFirst();
  if (ended) return false;
  const earlier = earlierSession({ sessionId, userId: old.user_id, createdAt: old.created_at });
  await trx
    .insertInto("sessions")
    .values(sessionRow({ ...earlier, lastUsedAt: use.now, address: use.address, expiresAt: use.expiresAt }))
    // Two first refreshes at once: the second finds the row and loses on the token, as a reuse.
    .onConflict((oc) => oc.column("session_id").doNothing())
    .execute();
  return { enrolOnly: false };
}

function sessionRow(s: NewSession): SessionsTable {
  return {
    session_id: s.sessionId,
    user_id: s.userId,
    device_name: s.deviceName,
    created_at: s.createdAt,
    last_used_at: s.lastUsedAt,
    address: s.address,
    expires_at: s.expiresAt,
    ended_at: null,
    enrol_only: 0,
    ended_why: null,
  };
}

function toSession(r: SessionsTable): SessionRecord {
  return {
    sessionId: r.session_id,
    userId: r.user_id,
    deviceName: r.device_name,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    address: r.address,
    expiresAt: r.expires_at,
    ...(r.ended_at !== null && { endedAt: r.ended_at }),
    ...(r.ended_why !== null && { endedWhy: r.ended_why }),
    ...(Number(r.enrol_only) === 1 && { enrolOnly: true as const }),
  };
}

/**
 * Ends the user's live sessions (all, the `only` one, all but the `except` one, or the `ids`) and
 * revokes their refresh tokens, in the caller's transaction: the rows first (this locks them
 * against a rotation), then every token of their families; in chunks, whatever their number.
 */
export async function endSessionsIn(trx: Db, { userId, now, only, except, ids: given, why }: EndSessions): Promise<string[]> {
  let live = trx.selectFrom("sessions").select("session_id").where("user_id", "=", userId).where("ended_at", "is", null);
  if (only !== undefined) live = live.where("session_id", "=", only);
  if (except !== undefined) live = live.where("session_id", "!=", except);
  if (given !== undefined) live = live.where("session_id", "in", given.length ? given : [""]);
  const ids = (await live.execute()).map((r) => r.session_id);
  for (const chunk of chunks(ids, 500)) {
    await trx
      .updateTable("sessions")
      .set({ ended_at: now, ended_why: why ?? null })
      .where("session_id", "in", chunk)
      .where("ended_at", "is", null)
      .execute();
    await trx.updateTable("refresh_tokens").set({ status: "revoked" }).where("family_id", "in", chunk).execute();
  }
  return ids;
}

/**
 * A factor change's effect on the account's sessions (`planFactorChangeSessions`), in its
 * transaction: every other one ends, saying why; the kept one becomes whole when the plan says so.
 * Answers the ended ones.
 */
export async function applyFactorChangeIn(trx: Db, userId: UserId, plan: FactorChangeSessions, now: string): Promise<string[]> {
  const ended = await endSessionsIn(trx, { userId, now, why: plan.endedWhy, ...(plan.keep !== undefined && { except: plan.keep }) });
  if (plan.widenKept && plan.keep !== undefined) {
    await trx
      .updateTable("sessions")
      .set({ enrol_only: 0 })
      .where("session_id", "=", plan.keep)
      .where("user_id", "=", userId)
      .where("ended_at", "is", null)
      .execute();
  }
  return ended;
}
