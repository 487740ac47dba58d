/**
 * Who may take one of a process's slots for large bodies (a rekey's, of up to REKEY_BODY_LIMIT;
 * an attachment chunk's or a send part's): each slot holds a body while it is read and applied, so
 * the process caps them; within the cap, no organization and no user may hold more than its
 * share, so that one tenant's stalled uploads never starve another's rekeys (a rekey is what a
 * removal requires). There is no share per client address: behind a proxy that is not declared
 * (TRUST_PROXY), every client has the proxy's address, and such a share would halve the slots of all.
 */
export interface SlotShares {
  /** Slots of the process (REKEY_CONCURRENCY). */
  total: number;
  /** Slots one organization may hold at once. */
  perOrg: number;
  /** Slots one user may hold at once. */
  perUser: number;
}

/** Half the slots per organization, a quarter per user, at least one each. */
export function slotShares(total: number): SlotShares {
  return { total, perOrg: Math.max(1, Math.floor(total / 2)), perUser: Math.max(1, Math.floor(total / 4)) };
}

export interface SlotsHeld {
  total: number;
  org: number;
  user: number;
}

export type SlotRefusal = "process-full" | "organization-share" | "user-share";

/**
 * How a refusal is answered once the caller has waited its turn (`slotWaitMs`): a caller at its
 * own or its organization's share is asked to slow down (429); a process at its cap is
 * overloaded (503). Both with `Retry-After`.
 */
export function slotRefusalStatus(refusal: SlotRefusal): "RATE_LIMITED" | "UNAVAILABLE" {
  return refusal === "process-full" ? "UNAVAILABLE" : "RATE_LIMITED";
}

/** What a refusal's message says of whose share is used up ("Too many uploads of yours in progress"). */
export const whoseShare = (refusal: SlotRefusal): string =>
  ({ "process-full": "", "user-share": " of yours", "organization-share": " of your organization" })[refusal];

/** Longest a request waits for a slot before it is refused: two seconds, and at most a quarter of its deadline (the rest is for its work). */
export const slotWaitMs = (requestTimeoutMs: number): number => Math.min(2_000, Math.floor(requestTimeoutMs / 4));

/**
 * The slowest a body may arrive while it holds a slot that another request is waiting for (the
 * process at its cap): on average since its first `SLOW_BODY_GRACE_MS`, else it is cut (408) and
 * its slot given to the waiter. A body sent at a few bytes a second would otherwise hold its slot
 * until the request's deadline, and a handful of them every slot. A whole chunk (1.4 MB of JSON)
 * must arrive at about 50 KB/s anyway to beat the 30 s deadline; an idle process cuts nobody.
 */
export const SLOWEST_BODY_BYTES_PER_SEC = 32 * 1024;
export const SLOW_BODY_GRACE_MS = 3_000;

/** Requests one user may have waiting for a slot at once (each holds its unread body meanwhile): as many as its share. */
export const waitersPerUser = (shares: SlotShares): number => shares.perUser;

/** Whether one more slot may be taken, given what is held; the refusal names the share that is used up. */
export function decideSlot(held: SlotsHeld, shares: SlotShares): { ok: true } | { ok: false; refusal: SlotRefusal } {
  if (held.user >= shares.perUser) return { ok: false, refusal: "user-share" };
  if (held.org >= shares.perOrg) return { ok: false, refusal: "organization-share" };
  if (held.total >= shares.total) return { ok: false, refusal: "process-full" };
  return { ok: true };
}

/**
 * Fairness in time, under contention. The pace makes holding a slot cost bandwidth, no more: four
 * free accounts sending bodies just above it (about 2.5 Mbit/s in all) held every chunk slot. So
 * while a request waits for want of a free slot, a body still arriving that has held its slot for
 * a quantum, of an organization holding more slots than the waiter's, gives its slot up to it
 * (408, and the SDK sends it again): each organization waiting gets a slot within about a quantum,
 * however many bodies another keeps going. Only if that organization has also used slots more of
 * late than the waiter's (its slot time, the time held so far included): a ring of accounts that
 * give their bodies up early and queue again would otherwise cut every body of a slow but honest
 * upload at its quantum, for ever. The quantum is a third of REQUEST_TIMEOUT for a chunk
 * (10 s by default: a whole chunk at 140 KB/s, needed only under such contention), two thirds for a
 * rekey or import body, which may be tens of MB.
 */
export const chunkSlotQuantumMs = (requestTimeoutMs: number): number => Math.floor(requestTimeoutMs / 3);
export const bodySlotQuantumMs = (requestTimeoutMs: number): number => Math.floor((requestTimeoutMs * 2) / 3);

/** An organization as the rule sees it: the slots it holds, and its use of slots of late (slot-milliseconds, `decayedUse`, the time held so far included). */
export interface GroupStanding {
  groupHeld: number;
  groupUse: number;
}

/** A slot held, as the rule sees it: its organization's standing, how long it has been held, and whether its transfer is in progress (a body arriving, an answer going out). */
export interface SlotHolding extends GroupStanding {
  heldMs: number;
  inTransfer: boolean;
}

/**
 * Why no holder gives way: none is in transfer, none is of an organization holding more
 * than the waiter's, none of one that also used slots more of late, none has had its quantum.
 */
export type GiveWayRefusal = "none-in-transfer" | "no-organization-holds-more" | "no-organization-used-more" | "none-past-quantum";

/**
 * Which holder gives its slot to a request waiting for room, of an organization standing as
 * `waiter`: of the slots in transfer (a body arriving, an answer going out), of organizations holding more and having used more of
 * late, held for at least `quantumMs`, one of the organization holding most, the longest held.
 * Once its body is whole a slot is only being applied, which takes no time an attacker chooses.
 */
export function planGiveWay(
  waiter: GroupStanding,
  holders: readonly SlotHolding[],
  quantumMs: number,
): { ok: true; holder: number } | { ok: false; refusal: GiveWayRefusal } {
  const moving = holders.map((h, i) => ({ ...h, i })).filter((h) => h.inTransfer);
  if (moving.length === 0) return { ok: false, refusal: "none-in-transfer" };
  const richer = moving.filter((h) => h.groupHeld > waiter.groupHeld);
  if (richer.length === 0) return { ok: false, refusal: "no-organization-holds-more" };
  const busier = richer.filter((h) => h.groupUse > waiter.groupUse);
  if (busier.length === 0) return { ok: false, refusal: "no-organization-used-more" };
  const due = busier.filter((h) => h.heldMs >= quantumMs);
  if (due.length === 0) return { ok: false, refusal: "none-past-quantum" };
  due.sort((a, b) => b.groupHeld - a.groupHeld || b.heldMs - a.heldMs);
  return { ok: true, holder: due[0]!.i };
}

/** A waiter as the order sees it: its organization's standing, when the organization began to wait (over its requests, while unserved), and when it did. */
export interface WaiterTurn extends GroupStanding {
  groupSince: number;
  since: number;
}

/**
 * The order waiters are served in when a slot is given back: first those whose organization holds
 * fewest slots, then those whose organization has held slots least of late, then the one that has
 * waited longest: counted from its organization's first request refused and asked again since,
 * then from its own. Many waiters of one organization (or of many that each hold plenty) do not
 * push another's request past its wait; nor do accounts that give their bodies up before their
 * quantum and queue again at once, so as always to be the oldest waiter (their use of late counts
 * against them), nor fresh accounts or addresses that each queue just before a slot frees (a
 * client that has been asking again is older).
 */
export function byTurn(a: WaiterTurn, b: WaiterTurn): number {
  return a.groupHeld - b.groupHeld || a.groupUse - b.groupUse || a.groupSince - b.groupSince || a.since - b.since;
}

/** How long an organization's use of slots counts against it when waiters are ordered: halved every 30 s. */
export const USE_HALF_LIFE_MS = 30_000;

/** `use` (slot-milliseconds) as it counts `elapsedMs` later. */
export const decayedUse = (use: number, elapsedMs: number): number => use * 2 ** (-elapsedMs / USE_HALF_LIFE_MS);

/**
 * Answers held while they go out (lib/http/answer-budget.ts): bytes the gateway keeps for clients
 * that have not taken them yet, bounded by ANSWER_MEMORY_LIMIT and shared as slots are (an
 * organization at most half, a user a quarter). A caller holding nothing may always take one
 * answer the process has room for, however large (a full vault's list may exceed a quarter); an
 * idle process sends any answer.
 */
export function decideAnswerRoom(held: SlotsHeld, bytes: number, capBytes: number): { ok: true } | { ok: false; refusal: SlotRefusal } {
  if (held.total === 0) return { ok: true };
  if (held.user > 0 && held.user + bytes > capBytes / 4) return { ok: false, refusal: "user-share" };
  if (held.org > 0 && held.org + bytes > capBytes / 2) return { ok: false, refusal: "organization-share" };
  if (held.total + bytes > capBytes) return { ok: false, refusal: "process-full" };
  return { ok: true };
}

/**
 * How fast an answer must be taken: within REQUEST_TIMEOUT, or at 32 KiB/s on average (a body's
 * pace) for one so large it needs longer (a 43 MB list: 22 min), else its connection is closed and
 * its bytes freed. A slow link is served; what stops answers read a trickle at a time from keeping
 * the room from others is `planAnswerRoom`.
 */
export const SLOWEST_ANSWER_BYTES_PER_SEC = 32 * 1024;
export const answerDeadlineMs = (bytes: number, requestTimeoutMs: number): number =>
  Math.max(requestTimeoutMs, Math.ceil((bytes / SLOWEST_ANSWER_BYTES_PER_SEC) * 1000));

/** An answer held while it goes out, as the rule sees it: its group, its bytes, and how long it has been held. */
export interface AnswerHeld {
  group: string;
  bytes: number;
  heldMs: number;
}

/** Why no room can be made: no answer past its quantum is of a group holding more than the asker's, or they free too little. */
export type AnswerRoomRefusal = "none-to-close" | "too-little";

/**
 * Room for an answer of the asker's group, which holds `groupBytes`, when the process's limit is
 * reached: the answers whose connections are closed to free `need` bytes. Fairness in time, as for
 * slots (`planGiveWay`): only answers held for `quantumMs`, of groups holding more than the
 * asker's, one at a time from the group holding most as they are closed, its longest held first,
 * until no group holds more than the asker's.
 * Either enough is freed, or nothing is closed (503).
 */
export function planAnswerRoom(
  need: number,
  groupBytes: number,
  held: readonly AnswerHeld[],
  quantumMs: number,
): { ok: true; close: number[] } | { ok: false; refusal: AnswerRoomRefusal } {
  const byGroup = new Map<string, number>();
  for (const a of held) byGroup.set(a.group, (byGroup.get(a.group) ?? 0) + a.bytes);
  // Each group's answers past their quantum, the longest held first.
  const due = new Map<string, Array<AnswerHeld & { i: number }>>();
  held.forEach((a, i) => {
    if (a.heldMs < quantumMs || byGroup.get(a.group)! <= groupBytes) return;
    const list = due.get(a.group) ?? [];
    list.push({ ...a, i });
    due.set(a.group, list);
  });
  if (due.size === 0) return { ok: false, refusal: "none-to-close" };
  for (const list of due.values()) list.sort((a, b) => b.heldMs - a.heldMs);
  const close: number[] = [];
  let freed = 0;
  while (freed < need) {
    // From the group holding most now, while it holds more than the asker's.
    let richest: string | undefined;
    for (const [g, list] of due)
      if (list.length > 0 && byGroup.get(g)! > groupBytes && (!richest || byGroup.get(g)! > byGroup.get(richest)!)) richest = g;
    if (richest === undefined) return { ok: false, refusal: "too-little" };
    const next = due.get(richest)!.shift()!;
    close.push(next.i);
    freed += next.bytes;
    byGroup.set(richest, byGroup.get(richest)! - next.bytes);
  }
  return { ok: true, close };
}
