/**
 * A process's slots for large bodies, shared fairly (the rule: lib/domain/vaults/fair-share.ts).
 * `take` answers at once: a release function, or the share that is used up; `takeWithin` waits its
 * turn for a while first. Releasing twice gives back one slot. `starved` says whether a request is
 * waiting for want of a free slot (not of its own share): what lets a slow body be cut for it
 * (lib/http/request-body.ts, `readJsonStream`'s pace).
 */
import { decideSlot, slotShares, waitersPerUser, type SlotRefusal, type SlotShares } from "../domain/vaults/fair-share";

type Slot = { release: () => void } | { refusal: SlotRefusal };

/** Whose a slot is: an organization (or, on a public route, a group) and a member of it. */
export interface SlotHolder {
  group: string;
  member: string;
}

export class FairSlots {
  private total = 0;
  private readonly byOrg = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  /** Requests waiting for a slot, oldest first: each is woken to try again when a slot is released. */
  private readonly waiters: Array<() => void> = [];
  private readonly waitingByUser = new Map<string, number>();
  /** Requests waiting whose last refusal was the process at its cap. */
  private waitingForRoom = 0;
  readonly shares: SlotShares;

  constructor(total: number) {
    this.shares = slotShares(total);
  }

  /**
   * A slot within `waitMs`: taken at once when the shares allow, else after the releases that make
   * room, in the order the requests came. A user already at its number of waiting requests is
   * refused at once; the refusal after the wait names the share still used up.
   */
  async takeWithin(who: SlotHolder, waitMs: number): Promise<Slot> {
    const first = this.take(who);
    if ("release" in first || (this.waitingByUser.get(who.member) ?? 0) >= waitersPerUser(this.shares)) return first;
    const deadline = Date.now() + waitMs;
    bump(this.waitingByUser, who.member, 1);
    // Whether this request is counted in `waitingForRoom` (its last refusal: the process at its cap).
    let forRoom = false;
    const note = (slot: Slot) => {
      const now = "refusal" in slot && slot.refusal === "process-full";
      this.waitingForRoom += Number(now) - Number(forRoom);
      forRoom = now;
    };
    try {
      for (let slot: Slot = first; ; slot = this.take(who)) {
        const left = deadline - Date.now();
        if ("release" in slot || left <= 0) return slot;
        note(slot);
        await this.nextRelease(left);
      }
    } finally {
      this.waitingForRoom -= Number(forRoom);
      bump(this.waitingByUser, who.member, -1);
    }
  }

  /** Resolves at the next release, or after `ms`. */
  private nextRelease(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        const at = this.waiters.indexOf(wake);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiters.push(wake);
    });
  }

  take({ group, member }: SlotHolder): Slot {
    const verdict = decideSlot({ total: this.total, org: this.byOrg.get(group) ?? 0, user: this.byUser.get(member) ?? 0 }, this.shares);
    if (!verdict.ok) return { refusal: verdict.refusal };
    this.total++;
    bump(this.byOrg, group, 1);
    bump(this.byUser, member, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        bump(this.byOrg, group, -1);
        bump(this.byUser, member, -1);
        // Every waiter tries again, oldest first (a waiter whose share is still used up waits on).
        for (const wake of this.waiters.slice()) wake();
      },
    };
  }

  /** Slots held now (for tests and metrics). */
  get held(): number {
    return this.total;
  }

  /** Whether a request is waiting because every slot is held (not because its own share is used up). */
  get starved(): boolean {
    return this.waitingForRoom > 0;
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
