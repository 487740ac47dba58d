/**
 * The gateway's session check: every authenticated request's session must be live
 * (`decideSessionLive`, lib/domain/accounts/sessions.ts). A session found live is taken as live for
 * SESSION_CHECK_INTERVAL without reading it again; a session ended on this node, or announced
 * ended by another (`session.ended`, broadcast to every node), is forgotten at once. So an ended
 * session's access tokens stop at once where the end was heard, and within the interval anywhere.
 */
import type { Context } from "moleculer";
import type { Clock } from "../clock";
import { timestamp } from "../domain/encoding";
import { decideSessionLive, shouldTouch } from "../domain/accounts/sessions";
import { sessionEnded } from "../domain/accounts/refusals";
import type { Caller } from "../domain/types";
import type { SessionStore } from "../store/port";

/** The broadcast a node sends after ending sessions, so that every gateway forgets them at once. */
export const SESSION_ENDED = "session.ended";
export interface SessionEnded {
  sessionIds: string[];
}

/** Sessions remembered as live at once, at most: a flood of tokens cannot grow it without bound. */
const CACHE_LIMIT = 50_000;

export class SessionCheck {
  /** Session id -> when it was last read live, and the last use written for it. */
  private readonly live = new Map<string, { checkedMs: number; usedMs: number }>();
  /** Sessions heard ended, for one interval: a read in flight when the end was heard does not bring one back. */
  private readonly ended = new Map<string, number>();

  constructor(
    private readonly sessions: Pick<SessionStore, "findSession" | "touchSession">,
    private readonly clock: Clock,
    private readonly intervalMs: number,
  ) {}

  /** Resolves when the caller's session is live; `401 UNAUTHORIZED` when it ended, expired, or the token names none. */
  async check(caller: Caller, address: string): Promise<void> {
    const nowMs = this.clock.nowMs();
    const sid = caller.sessionId;
    const hit = sid === undefined ? undefined : this.live.get(sid);
    if (hit && nowMs - hit.checkedMs < this.intervalMs) {
      if (shouldTouch(hit.usedMs, nowMs)) await this.touch(sid!, hit, nowMs, address);
      return;
    }
    const session = sid === undefined ? null : await this.sessions.findSession(sid);
    decideSessionLive(sid, session, caller.userId, timestamp(new Date(nowMs)));
    const endedAt = this.ended.get(sid!);
    if (endedAt !== undefined && nowMs - endedAt < this.intervalMs) throw sessionEnded();
    const entry = { checkedMs: nowMs, usedMs: Date.parse(session!.lastUsedAt) };
    if (!this.live.has(sid!) && this.live.size >= CACHE_LIMIT) this.live.delete(this.live.keys().next().value!);
    this.live.set(sid!, entry);
    if (shouldTouch(entry.usedMs, nowMs)) await this.touch(sid!, entry, nowMs, address);
  }

  /** The sessions ended: their tokens are refused from the next request on. */
  forget(sessionIds: Iterable<string>): void {
    const nowMs = this.clock.nowMs();
    for (const sid of sessionIds) {
      this.live.delete(sid);
      if (this.ended.size >= CACHE_LIMIT) this.ended.delete(this.ended.keys().next().value!);
      this.ended.set(sid, nowMs);
    }
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
export async function announceEnded(ctx: Context, check: SessionCheck, sessionIds: string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  check.forget(sessionIds);
  for (let i = 0; i < sessionIds.length; i += IDS_PER_BROADCAST) {
    const chunk = sessionIds.slice(i, i + IDS_PER_BROADCAST);
    try {
      await ctx.broadcast(SESSION_ENDED, { sessionIds: chunk } satisfies SessionEnded);
    } catch (err) {
      ctx.broker.logger.warn(
        `could not announce ${chunk.length} ended sessions (${(err as Error).message}): other gateways stop them within SESSION_CHECK_INTERVAL`,
      );
    }
  }
}
