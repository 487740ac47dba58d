/**
 * Answers held, in bytes, until they have gone out (the rule: lib/domain/vaults/fair-share.ts,
 * `decideAnswerRoom`).
 *
 * The gateway writes an answer to its connection and holds what the client has not taken yet. A
 * client that asks and never reads holds it for as long as it keeps the connection open: a live
 * probe grew a server from 88 to 988 MB for a minute with 80 connections each asking for a member's
 * 10 MB item list. So every JSON answer (but the chunk routes', which hold slots of their own
 * before they are called: lib/http/large-answers.ts) is charged to its caller (its organization and
 * user; on a public route, its address) from the moment it is ready until it has gone out or its
 * connection has closed. Past the caller's share it is refused (429), past the process's limit
 * (503), with `Retry-After`, and dropped at once. One not taken in time (`answerDeadlineMs`) has
 * its connection closed. When the process's limit is reached, answers held past their
 * quantum by groups holding more than the asker's have their connections closed to make room
 * (`planAnswerRoom`): answers read a trickle at a time do not keep the room from everyone else.
 */
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { AppError } from "../errors";
import {
  answerDeadlineMs,
  chunkSlotQuantumMs,
  decideAnswerRoom,
  planAnswerRoom,
  slotRefusalStatus,
  whoseShare,
  type SlotRefusal,
} from "../domain/vaults/fair-share";
import { addressHolder, bump, type SlotHolder } from "../limits/slots";

/** Answers this large or larger have a deadline of their own (`answerDeadlineMs`). */
const DEADLINE_FROM_BYTES = 256 * 1024;

/** The wait a refused caller is asked for (`Retry-After`), and held to. */
const REFUSAL_WAIT_MS = 1_000;
/** Members refused whose waits are remembered before the ended ones are forgotten. */
const MAX_REMEMBERED = 4096;

interface Held {
  who: SlotHolder;
  bytes: number;
  since: number;
  res: ServerResponse;
}

export class AnswerBudget {
  private total = 0;
  private readonly byOrg = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  /** Until when each member refused must wait before it asks again (`ask`). */
  private readonly refusedUntil = new Map<string, number>();
  /** Each caller's last answer's size, by path (`ask`). */
  private readonly lastSize = new Map<string, number>();
  /** The answers held, which may be closed to make room. */
  private readonly entries = new Set<Held>();
  private readonly quantumMs: number;

  constructor(
    private readonly capBytes: number,
    private readonly requestTimeoutMs: number,
  ) {
    this.quantumMs = chunkSlotQuantumMs(requestTimeoutMs);
  }

  /**
   * Before an answer to `what` (its path) is made. An answer is refused only once it is made (its
   * size is not known before), so a caller at its share asking again and again would have the
   * server build large answers only to drop them: one that last answered `what` with more than its
   * shares now have room for is refused at once (429), and a caller refused is held to the wait it
   * was given (`Retry-After`).
   */
  ask(who: SlotHolder, what: string): void {
    const until = this.refusedUntil.get(who.member);
    const left = until === undefined ? 0 : until - Date.now();
    if (left > 0)
      throw new AppError("RATE_LIMITED", "Asked again before the wait it was given: too many answers waiting to be read", {
        retryAfterSec: Math.ceil(left / 1000),
      });
    const last = this.lastSize.get(`${who.member} ${what}`);
    if (last === undefined) return;
    const verdict = decideAnswerRoom(this.heldBy(who), last, this.capBytes);
    if (!verdict.ok && verdict.refusal !== "process-full") this.refuse(who, verdict.refusal);
  }

  /** Charges `bytes` of `res`'s answer to `what` to `who` until it has gone out or its connection closed; refused (429, 503) when there is no room. */
  charge(who: SlotHolder, res: ServerResponse, bytes: number, what = ""): void {
    this.remember(`${who.member} ${what}`, bytes);
    // Its client gone already: nothing will be held.
    if (res.destroyed || res.closed) return;
    const verdict = decideAnswerRoom(this.heldBy(who), bytes, this.capBytes);
    if (!verdict.ok && !(verdict.refusal === "process-full" && this.makeRoom(who, this.total + bytes - this.capBytes)))
      this.refuse(who, verdict.refusal);
    const entry: Held = { who, bytes, since: Date.now(), res };
    this.add(who, bytes);
    this.entries.add(entry);
    // A small answer's connection is closed by the server's own timeout once nothing moves on it;
    // a large one, read a trickle at a time, keeps it moving: it has a deadline of its own.
    const large = bytes >= DEADLINE_FROM_BYTES;
    const cut = large ? setTimeout(() => res.destroy(), answerDeadlineMs(bytes, this.requestTimeoutMs)) : undefined;
    cut?.unref();
    res.once("close", () => {
      clearTimeout(cut);
      this.free(entry);
    });
  }

  /** Refuses `who`, and holds it to its wait (`ask`); those whose wait is over are forgotten once there are many. */
  private refuse(who: SlotHolder, refusal: SlotRefusal): never {
    const now = Date.now();
    this.refusedUntil.set(who.member, now + REFUSAL_WAIT_MS);
    if (this.refusedUntil.size > MAX_REMEMBERED) for (const [k, until] of this.refusedUntil) if (until <= now) this.refusedUntil.delete(k);
    throw new AppError(slotRefusalStatus(refusal), `Too many answers${whoseShare(refusal)} waiting to be read`, {
      retryAfterSec: REFUSAL_WAIT_MS / 1000,
    });
  }

  /** The size of a caller's last answer to a path (`ask`), the oldest forgotten first once there are many. */
  private remember(key: string, bytes: number): void {
    this.lastSize.delete(key);
    this.lastSize.set(key, bytes);
    if (this.lastSize.size > MAX_REMEMBERED) this.lastSize.delete(this.lastSize.keys().next().value!);
  }

  private heldBy(who: SlotHolder) {
    return { total: this.total, org: this.byOrg.get(who.group) ?? 0, user: this.byUser.get(who.member) ?? 0 };
  }

  /** Bytes held now (for tests and metrics). */
  get held(): number {
    return this.total;
  }

  /** Closes the connections `planAnswerRoom` names to free `need` bytes for `who`: whether it could. */
  private makeRoom(who: SlotHolder, need: number): boolean {
    const now = Date.now();
    const held = [...this.entries];
    const plan = planAnswerRoom(
      need,
      this.byOrg.get(who.group) ?? 0,
      held.map((h) => ({ group: h.who.group, bytes: h.bytes, heldMs: now - h.since })),
      this.quantumMs,
    );
    if (!plan.ok) return false;
    for (const i of plan.close) {
      // Freed now, for the asker; its close, which comes later, frees nothing more.
      this.free(held[i]!);
      held[i]!.res.destroy();
    }
    return true;
  }

  /** Gives back `entry`'s bytes, once: an entry no longer held has given them back already. */
  private free(entry: Held): void {
    if (this.entries.delete(entry)) this.add(entry.who, -entry.bytes);
  }

  private add(who: SlotHolder, bytes: number): void {
    this.total += bytes;
    bump(this.byOrg, who.group, bytes);
    bump(this.byUser, who.member, bytes);
  }
}

type Route = { action: string; public?: boolean; largeAnswer?: boolean };
type Meta = { user?: { orgId: string; userId: string } | null; clientIp?: string; $responseType?: string };

/** A large result from another node (lib/http/large-results.ts): its JSON text, gathered. */
async function gathered(stream: Readable): Promise<string> {
  const decoder = new StringDecoder("utf8");
  let text = "";
  try {
    for await (const chunk of stream) text += typeof chunk === "string" ? chunk : decoder.write(chunk as Buffer);
  } catch {
    // Its node went away mid-answer: the client asks again, as for any node away.
    throw new AppError("UNAVAILABLE", "The answer was cut off on its way from another node; try again", { retryAfterSec: 1 });
  }
  return text + decoder.end();
}

/**
 * The gateway's two steps for answers: `before` the action, a caller refused is held to its wait
 * (`AnswerBudget.ask`); `after` it (its `onAfterCall`), each answer as its JSON text, charged to
 * its caller in `budget` (refused when there is no room for it). The chunk routes' answers are
 * left to their own slots.
 */
export function chargingAnswers(budget: AnswerBudget, routes: readonly Route[]) {
  const publicActions = new Set(routes.filter((r) => r.public).map((r) => r.action));
  const largeAnswerActions = new Set(routes.filter((r) => r.largeAnswer).map((r) => r.action));
  const whoOf = (ctx: { meta: Meta }, action: string): SlotHolder => {
    const user = publicActions.has(action) ? undefined : ctx.meta.user;
    return user ? { group: user.orgId, member: user.userId } : addressHolder(ctx.meta.clientIp ?? "");
  };
  /** Before the action: a caller refused is held to its wait. */
  const before = (ctx: { meta: Meta }, req: { $alias?: { action?: string }; url?: string }): void => {
    const action = req.$alias?.action ?? "";
    if (!largeAnswerActions.has(action)) budget.ask(whoOf(ctx, action), req.url ?? "");
  };
  const after = async function chargeAnswer(
    ctx: { meta: Meta },
    _route: unknown,
    req: { $alias?: { action?: string }; url?: string },
    res: ServerResponse,
    data: unknown,
  ): Promise<unknown> {
    const action = req.$alias?.action ?? "";
    if (data === null || data === undefined || largeAnswerActions.has(action)) return data;
    const text =
      data instanceof Readable ? await gathered(data) : typeof data === "string" && ctx.meta.$responseType ? data : JSON.stringify(data);
    ctx.meta.$responseType = "application/json; charset=utf-8";
    budget.charge(whoOf(ctx, action), res, Buffer.byteLength(text), req.url ?? "");
    return text;
  };
  return { before, after };
}
