/**
 * A process's rekey slots, shared fairly (the rule: lib/domain/vaults/fair-share.ts). `take` answers at
 * once: a release function, or the share that is used up. Releasing twice gives back one slot.
 */
import { decideSlot, slotShares, type SlotRefusal, type SlotShares } from "../domain/vaults/fair-share";

export class FairSlots {
  private total = 0;
  private readonly byOrg = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  readonly shares: SlotShares;

  constructor(total: number) {
    this.shares = slotShares(total);
  }

  take(orgId: string, userId: string): { release: () => void } | { refusal: SlotRefusal } {
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
