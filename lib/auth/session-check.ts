/**
 * The gateway's session check: every authenticated request's session must be live
 * (`decideSessionLive`, lib/domain/accounts/sessions.ts), and grants what the session grants now (a
 * session narrowed to enrolment narrows its tokens). A session found live is taken as live, with its
 * scope, for SESSION_CHECK_INTERVAL without reading it again; a session ended on this node, or
 * announced ended by another (`session.ended`, broadcast to every node, with why), is forgotten at
 * once, and so is one whose scope changed (`session.changed`). So an ended or narrowed session's
 * access tokens stop at once where the change was heard, and within the interval anywhere.
 */
import type { Context } from "moleculer";
import type { Clock } from "../clock";
import { timestamp } from "../domain/encoding";
import { decideSessionLive, sessionEndedRefusal, shouldTouch, type SessionEndReason } from "../domain/accounts/sessions";
import type { Caller } from "../domain/types";
import type { SessionStore } from "../store/port";

/** The broadcast a node sends after ending sessions, so that every gateway forgets them at once (and says why). */
export const SESSION_ENDED = "session.ended";
export interface SessionEnded {
  sessionIds: string[];
  why?: SessionEndReason;
}

/** The broadcast a node sends after changing sessions' scope (a policy narrowed them, an enrolment widened one): every gateway reads them again. */
export const SESSION_CHANGED = "session.changed";
export interface SessionChanged {
  sessionIds: string[];
}

/** Sessions remembered as live at once, at most: a flood of tokens cannot grow it without bound. */
const CACHE_LIMIT = 50_000;

export class SessionCheck {
  /** Session id -> when it was last read live, the last use written for it, and its scope. */
  private readonly live = new Map<string, { checkedMs: number; usedMs: number; enrolOnly: boolean }>();
  /** Sessions heard ended, for one interval, and why: a read in flight when the end was heard does not bring one back. */
  private readonly ended = new Map<string, { atMs: number; why?: SessionEndReason }>();

  constructor(
    private readonly sessions: Pick<SessionStore, "findSession" | "touchSession">,
    private readonly clock: Clock,
    private readonly intervalMs: number,
  ) {}

  /**
   * Resolves with what the caller's session grants (`enrolOnly`: only enrolling a second factor)
   * when it is live; `401 UNAUTHORIZED` when it ended (saying why, where that is told), expired, or
   * the token names none.
   */
  async check(caller: Caller, address: string): Promise<{ enrolOnly: boolean }> {
    const nowMs = this.clock.nowMs();
    const sid = caller.sessionId;
    const hit = sid === undefined ? undefined : this.live.get(sid);
    if (hit && nowMs - hit.checkedMs < this.intervalMs) {
      if (shouldTouch(hit.usedMs, nowMs)) await this.touch(sid!, hit, nowMs, address);
      return { enrolOnly: hit.enrolOnly };
    }
    const session = sid === undefined ? null : await this.sessions.findSession(sid);
    const { enrolOnly } = decideSessionLive(sid, session, caller.userId, timestamp(new Date(nowMs)));
    const ended = this.ended.get(sid!);
    if (ended !== undefined && nowMs - ended.atMs < this.intervalMs) throw sessionEndedRefusal(ended.why);
    const entry = { checkedMs: nowMs, usedMs: Date.parse(session!.lastUsedAt), enrolOnly };
    if (!this.live.has(sid!) && this.live.size >= CACHE_LIMIT) this.live.delete(this.live.keys().next().value!);
    this.live.set(sid!, entry);
    if (shouldTouch(entry.usedMs, nowMs)) await this.touch(sid!, entry, nowMs, address);
    return { enrolOnly };
  }

  /** The sessions ended (`why`, when their devices are told): their tokens are refused from the next request on. */
  forget(sessionIds: Iterable<string>, why?: SessionEndReason): void {
    const nowMs = this.clock.nowMs();
    for (const sid of sessionIds) {
      this.live.delete(sid);
      if (this.ended.size >= CACHE_LIMIT) this.ended.delete(this.ended.keys().next().value!);
      this.ended.set(sid, { atMs: nowMs, ...(why !== undefined && { why }) });
    }
  }

  /** The sessions' scope changed: they are read again at their next request. */
  recheck(sessionIds: Iterable<string>): void {
    for (const sid of sessionIds) this.live.delete(sid);
  }

  private async touch(sid: string, entry: { usedMs: number }, nowMs: number, address: string): Promise<void> {
    entry.usedMs = nowMs;
    await this.sessions.touchSession({ sessionId: sid, at: timestamp(new Date(nowMs)), address });
  }
}

/** Ids per broadcast: far below a transporter's message limit (NATS: 1 MB). */
const IDS_PER_BROADCAST = 1_000;

/**
 * After sessions ended (and were committed): this node's gateway forgets them now, every other
 * node's when the broadcast arrives. A broadcast that fails is logged, never the request's
 * failure: the change stands, and SESSION_CHECK_INTERVAL bounds the rest.
 */
export async function announceEnded(ctx: Context, check: SessionCheck, sessionIds: string[], why?: SessionEndReason): Promise<void> {
  if (sessionIds.length === 0) return;
  check.forget(sessionIds, why);
  await broadcastInChunks(ctx, sessionIds, "ended", (chunk) => ({
    event: SESSION_ENDED,
    payload: { sessionIds: chunk, ...(why !== undefined && { why }) } satisfies SessionEnded,
  }));
}

/** After sessions' scope changed (and was committed): every gateway reads them again, as `announceEnded` tells their end. */
export async function announceChanged(ctx: Context, check: SessionCheck, sessionIds: string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  check.recheck(sessionIds);
  await broadcastInChunks(ctx, sessionIds, "changed", (chunk) => ({
    event: SESSION_CHANGED,
    payload: { sessionIds: chunk } satisfies SessionChanged,
  }));
}

async function broadcastInChunks(
  ctx: Context,
  sessionIds: string[],
  what: string,
  message: (chunk: string[]) => { event: string; payload: object },
): Promise<void> {
  for (let i = 0; i < sessionIds.length; i += IDS_PER_BROADCAST) {
    const chunk = sessionIds.slice(i, i + IDS_PER_BROADCAST);
    const { event, payload } = message(chunk);
    try {
      await ctx.broadcast(event, payload);
    } catch (err) {
      ctx.broker.logger.warn(
        `could not announce ${chunk.length} ${what} sessions (${(err as Error).message}): other gateways see them within SESSION_CHECK_INTERVAL`,
      );
    }
  }
}
