/**
 * A process's slots for large bodies, shared fairly (the rules: lib/domain/vaults/fair-share.ts).
 * `take` answers at once: a slot, or the share that is used up; `takeWithin` waits its turn for a
 * while first, served before the waiters of organizations holding more, or that held more of late. Releasing twice gives back
 * one slot. `starved` says whether a request is waiting for want of a free slot (not of its own
 * share): what lets a slow body be cut for it (lib/http/request-body.ts, `readJsonStream`'s pace).
 * While its transfer is in progress (a body arriving, an answer going out), a slot may be asked to
 * give way to such a waiter (`inTransfer`): fairness
 * in time between organizations (`planGiveWay`).
 */
import {
  byTurn,
  decayedUse,
  decideSlot,
  planGiveWay,
  slotShares,
  waitersPerUser,
  type SlotRefusal,
  type SlotShares,
} from "../domain/vaults/fair-share";

/** A slot held: given back with `release`; `inTransfer` offers it to waiters while its body arrives or its answer goes out (see `FairSlots`). */
export interface HeldSlot {
  release(): void;
  /** Until the returned withdrawal, the slot may be given up to a waiter: `giveWay` then ends its body's read. */
  inTransfer(giveWay: () => void): () => void;
}

type Slot = HeldSlot | { refusal: SlotRefusal };

/** Whose a slot is: an organization (or, on a public route, a group) and a member of it. */
export interface SlotHolder {
  group: string;
  member: string;
}

/** Who holds a slot or an answer on a public route: its client's address, as group and member both. */
export const addressHolder = (address: string): SlotHolder => ({ group: `address ${address}`, member: `address ${address}` });

interface Holding {
  group: string;
  since: number;
  /** Set while its body arrives and it may still give way. */
  giveWay?: () => void;
}

interface Waiter {
  group: string;
  /** When its group began to wait (`GroupWaits`), and when this request did. */
  groupSince: number;
  since: number;
  wake: () => void;
}

/** How long a group that stopped waiting, unserved, keeps the time it began to wait: a client's pause before it asks again. */
const GROUP_WAIT_MEMORY_MS = 5_000;

/**
 * When each group began to wait for a slot, kept across its requests while it is not served: a
 * client refused after its wait that asks again soon keeps its place in line. Otherwise accounts
 * or addresses that each queue a request a moment before a slot frees, always new, would always be
 * older than a request that has just begun to wait, and served before it, however long its client
 * has been trying.
 */
class GroupWaits {
  private readonly groups = new Map<string, { since: number; waiting: number; left: number }>();

  /** A request of `group` begins to wait: when the group began to. */
  begin(group: string, now: number): number {
    let g = this.groups.get(group);
    if (!g || (g.waiting === 0 && now - g.left > GROUP_WAIT_MEMORY_MS)) this.groups.set(group, (g = { since: now, waiting: 0, left: now }));
    g.waiting++;
    return g.since;
  }

  /** A request of `group` stops waiting: served, its group's turn is over; else the group keeps its place a while. */
  end(group: string, served: boolean, now: number): void {
    const g = this.groups.get(group);
    if (!g) return;
    g.waiting--;
    g.left = now;
    if (served || g.waiting <= 0) {
      if (served) this.groups.delete(group);
      if (this.groups.size > MAX_GROUPS_REMEMBERED)
        for (const [k, v] of this.groups) if (v.waiting === 0 && now - v.left > GROUP_WAIT_MEMORY_MS) this.groups.delete(k);
    }
  }
}

/** Organizations whose use is remembered before the faded ones are forgotten. */
const MAX_GROUPS_REMEMBERED = 4096;

/** How often a request waiting for room looks again for a body that has had its quantum. */
const LOOK_AGAIN_MS = 250;

export class FairSlots {
  private readonly holdings = new Set<Holding>();
  private readonly byOrg = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  /** Each organization's use of slots of late (slot-milliseconds, as of `at`), for the waiters' turn. */
  private readonly use = new Map<string, { use: number; at: number }>();
  /** Requests waiting for a slot: each is woken to try again when a slot is released, in turn (`byTurn`). */
  private readonly waiters = new Set<Waiter>();
  private readonly waitingByUser = new Map<string, number>();
  private readonly groupWaits = new GroupWaits();
  /** Requests waiting whose last refusal was the process at its cap. */
  private waitingForRoom = 0;
  readonly shares: SlotShares;

  /** `quantumMs`: how long a body may hold its slot while another organization waits for room (none given: for ever). */
  constructor(
    total: number,
    private readonly quantumMs = Infinity,
  ) {
    this.shares = slotShares(total);
  }

  /**
   * A slot within `waitMs`: taken at once when the shares allow, else after the releases that make
   * room, in turn. A user already at its number of waiting requests is refused at once; the
   * refusal after the wait names the share still used up. Waiting for room, a request asks a body
   * past its quantum to give way (`planGiveWay`).
   */
  async takeWithin(who: SlotHolder, waitMs: number): Promise<Slot> {
    const first = this.take(who);
    if ("release" in first || (this.waitingByUser.get(who.member) ?? 0) >= waitersPerUser(this.shares)) return first;
    const since = Date.now();
    const deadline = since + waitMs;
    const groupSince = this.groupWaits.begin(who.group, since);
    let served = false;
    bump(this.waitingByUser, who.member, 1);
    // Whether this request is counted in `waitingForRoom` (its last refusal: the process at its cap).
    let forRoom = false;
    // Whether a body gave way for it since the last release it was woken by.
    let asked = false;
    const note = (slot: Slot) => {
      const now = "refusal" in slot && slot.refusal === "process-full";
      this.waitingForRoom += Number(now) - Number(forRoom);
      forRoom = now;
    };
    try {
      for (let slot: Slot = first; ; slot = this.take(who)) {
        const left = deadline - Date.now();
        served = "release" in slot;
        if (served || left <= 0) return slot;
        note(slot);
        if (forRoom && !asked) asked = this.askGiveWay(who.group);
        if (await this.nextRelease({ group: who.group, groupSince, since }, Math.min(left, LOOK_AGAIN_MS))) asked = false;
      }
    } finally {
      this.waitingForRoom -= Number(forRoom);
      bump(this.waitingByUser, who.member, -1);
      this.groupWaits.end(who.group, served, Date.now());
    }
  }

  /** Ends the read of the body that `planGiveWay` names for a waiter of `group`, if any: whether one gave way. */
  private askGiveWay(group: string): boolean {
    const now = Date.now();
    const holdings = [...this.holdings];
    const use = this.usesNow(now);
    const standing = (g: string) => ({ groupHeld: this.byOrg.get(g) ?? 0, groupUse: use(g) });
    const plan = planGiveWay(
      standing(group),
      holdings.map((h) => ({ ...standing(h.group), heldMs: now - h.since, inTransfer: h.giveWay !== undefined })),
      this.quantumMs,
    );
    if (!plan.ok) return false;
    const holding = holdings[plan.holder]!;
    const giveWay = holding.giveWay!;
    holding.giveWay = undefined;
    giveWay();
    return true;
  }

  /** Resolves true at the next release, or false after `ms`. */
  private nextRelease(turn: Omit<Waiter, "wake">, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter: Waiter = { ...turn, wake: () => done(true) };
      const done = (released: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(released);
      };
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(waiter);
    });
  }

  take({ group, member }: SlotHolder): Slot {
    const verdict = decideSlot(
      { total: this.holdings.size, org: this.byOrg.get(group) ?? 0, user: this.byUser.get(member) ?? 0 },
      this.shares,
    );
    if (!verdict.ok) return { refusal: verdict.refusal };
    const holding: Holding = { group, since: Date.now() };
    this.holdings.add(holding);
    bump(this.byOrg, group, 1);
    bump(this.byUser, member, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.holdings.delete(holding);
        bump(this.byOrg, group, -1);
        bump(this.byUser, member, -1);
        const now = Date.now();
        this.used(group, now - holding.since, now);
        // Every waiter tries again, in turn (one whose share is still used up waits on).
        const use = this.usesNow(now);
        const turn = [...this.waiters].map((w) => ({ ...w, groupHeld: this.byOrg.get(w.group) ?? 0, groupUse: use(w.group) })).sort(byTurn);
        for (const w of turn) w.wake();
      },
      inTransfer: (giveWay) => {
        if (!released) holding.giveWay = giveWay;
        return () => {
          if (holding.giveWay === giveWay) holding.giveWay = undefined;
        };
      },
    };
  }

  /** Each group's use of slots of late as of `now`, the time its slots held now have been held included. */
  private usesNow(now: number): (group: string) => number {
    const holding = new Map<string, number>();
    for (const h of this.holdings) holding.set(h.group, (holding.get(h.group) ?? 0) + now - h.since);
    return (group) => this.useOf(group, now) + (holding.get(group) ?? 0);
  }

  /** `group`'s use of slots of late, as of `now` (slots given back). */
  private useOf(group: string, now: number): number {
    const u = this.use.get(group);
    return u ? decayedUse(u.use, now - u.at) : 0;
  }

  /** Adds `ms` of a slot's use to `group`'s; those whose use has faded are forgotten once there are many. */
  private used(group: string, ms: number, now: number): void {
    this.use.set(group, { use: this.useOf(group, now) + ms, at: now });
    if (this.use.size > MAX_GROUPS_REMEMBERED) for (const g of [...this.use.keys()]) if (this.useOf(g, now) < 1) this.use.delete(g);
  }

  /** Slots held now (for tests and metrics). */
  get held(): number {
    return this.holdings.size;
  }

  /** Whether a request is waiting because every slot is held (not because its own share is used up). */
  get starved(): boolean {
    return this.waitingForRoom > 0;
  }
}

/** Adds `by` to `key`'s count in `map`, forgetting a key that comes to nothing. */
export function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
