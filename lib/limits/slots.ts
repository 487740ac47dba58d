/**
 * A process's rekey slots, shared fairly (the rule: lib/domain/vaults/fair-share.ts). `take` answers at
 * once: a release function, or the share that is used up; `takeWithin` waits its turn for a while
 * first. Releasing twice gives back one slot.
 */
import { decideSlot, slotShares, waitersPerUser, type SlotRefusal, type SlotShares } from "../domain/vaults/fair-share";

type Slot = { release: () => void } | { refusal: SlotRefusal };

export class FairSlots {
  private total = 0;
  private readonly byOrg = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  /** Requests waiting for a slot, oldest first: each is woken to try again when a slot is released. */
  private readonly waiters: Array<() => void> = [];
  private readonly waitingByUser = new Map<string, number>();
  readonly shares: SlotShares;

  constructor(total: number) {
    this.shares = slotShares(total);
  }

  /**
   * A slot within `waitMs`: taken at once when the shares allow, else after the releases that make
   * room, in the order the requests came. A user already at its number of waiting requests is
   * refused at once; the refusal after the wait names the share still used up.
   */
  async takeWithin(orgId: string, userId: string, waitMs: number): Promise<Slot> {
    const first = this.take(orgId, userId);
    if ("release" in first || (this.waitingByUser.get(userId) ?? 0) >= waitersPerUser(this.shares)) return first;
    const deadline = Date.now() + waitMs;
    bump(this.waitingByUser, userId, 1);
    try {
      for (let slot: Slot = first; ; slot = this.take(orgId, userId)) {
        const left = deadline - Date.now();
        if ("release" in slot || left <= 0) return slot;
        await this.nextRelease(left);
      }
    } finally {
      bump(this.waitingByUser, userId, -1);
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

  take(orgId: string, userId: string): Slot {
    const verdict = decideSlot({ total: this.total, org: this.byOrg.get(orgId) ?? 0, user: this.byUser.get(userId) ?? 0 }, this.shares);
    if (!verdict.ok) return { refusal: verdict.refusal };
    this.total++;
    bump(this.byOrg, orgId, 1);
    bump(this.byUser, userId, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        bump(this.byOrg, orgId, -1);
        bump(this.byUser, userId, -1);
        // Every waiter tries again, oldest first (a waiter whose share is still used up waits on).
        for (const wake of this.waiters.slice()) wake();
      },
    };
  }

  /** Slots held now (for tests and metrics). */
  get held(): number {
    return this.total;
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
